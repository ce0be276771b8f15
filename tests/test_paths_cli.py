"""Every command: an output option naming one of its inputs is refused before anything is written,
and a pipe or a device given as any input is refused up front (no command blocks on it)."""

import hashlib
import os
import threading
from pathlib import Path

import pytest

from tests.cli_checks import one_line_error
from tests.fuzz.corpus import build, commands

#: the output options each command takes (a file path each)
OUTPUTS = {"auc": ["--json-out", "--csv"], "target": ["--json-out"], "placement": ["--json-out", "--evidence"],
           "columns": ["--json-out"], "curve": ["--json-out", "--csv"], "objects": ["--json-out", "--per-object"],
           "holdout": ["--json-out", "--csv"], "fibers": ["--json-out"], "fibers-aggregate": ["--json-out"],
           "check": ["--json-out"], "perturb": ["-o", "--info-json"], "audit": ["--json-out", "--csv"],
           "profile": ["--json-out"]}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build(tmp_path_factory.mktemp("paths"))


def _digests(paths):
    out = {}
    for p in paths:
        p = Path(p)
        files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else []
        for q in files:
            out[str(q)] = hashlib.sha256(q.read_bytes()).hexdigest()
    return out


def _inputs(argv):
    return [a for a in argv[1:] if not a.startswith("-") and os.path.exists(a)]


def _cases(corpus):
    for name, argv in commands(corpus).items():
        for option in OUTPUTS.get(name, []):
            for inp in _inputs(argv):
                if Path(inp).is_file():
                    yield name, option, argv, inp


def test_an_output_never_replaces_an_input(cli, corpus):
    seen = 0
    for name, option, argv, inp in _cases(corpus):
        base = list(argv)
        if option in base:  # perturb's -o: point it at the input instead
            i = base.index(option)
            base = base[:i] + base[i + 2:]
        before = _digests(_inputs(argv))
        code, out, err = cli(*base, option, inp)
        one_line_error(code, out, err, "names the input")
        assert _digests(_inputs(argv)) == before, (name, option, inp)
        seen += 1
    assert seen >= 25


def test_an_output_into_an_input_folder_file_is_refused(cli, corpus):
    meta = Path(corpus["ink_target"]) / "meta.json"
    before = meta.read_bytes()
    code, out, err = cli(*commands(corpus)["target"], "--json-out", str(meta))
    one_line_error(code, out, err, "inside the input folder")
    assert meta.read_bytes() == before


def _unblock_after(path, seconds, hit):
    """Open ``path`` (a FIFO) for writing after ``seconds``, so a reader stuck on it gets EOF."""
    def run():
        if not stop.wait(seconds):
            hit.append(path)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
    stop = threading.Event()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return stop


@pytest.mark.parametrize("name", ["auc", "target", "columns", "curve", "objects", "holdout", "fibers",
                                  "fibers-aggregate", "check", "perturb", "audit", "profile", "placement"])
def test_a_pipe_as_any_input_is_refused(cli, corpus, tmp_path, name):
    argv = commands(corpus)[name]
    for inp in _inputs(argv):
        if not Path(inp).is_file():
            continue
        fifo = tmp_path / ("fifo_" + Path(inp).name)
        os.mkfifo(fifo)
        hit = []
        stop = _unblock_after(str(fifo), 10, hit)
        code, out, err = cli(*[str(fifo) if a == inp else a for a in argv])
        stop.set()
        assert not hit, f"{name} blocked on a FIFO given for {inp}"
        one_line_error(code, out, err, "is a FIFO (named pipe)")
        os.unlink(fifo)


def test_a_device_through_a_link_is_refused(cli, corpus, tmp_path):
    link = tmp_path / "regions.json"
    os.symlink("/dev/zero", link)
    code, out, err = cli("check", "--window-px", "64", "--scan-um", "7.91", "--regions-json", str(link))
    one_line_error(code, out, err, "is a character device")


def test_a_pipe_inside_an_input_folder_is_refused(cli, corpus, tmp_path):
    import shutil

    target = tmp_path / "ink_target"
    shutil.copytree(corpus["ink_target"], target)
    (target / "meta.json").unlink()
    os.mkfifo(target / "meta.json")
    hit = []
    stop = _unblock_after(str(target / "meta.json"), 10, hit)
    code, out, err = cli("target", str(corpus["ink_pred"]), str(target), "--no-floors")
    stop.set()
    assert not hit
    one_line_error(code, out, err, "meta.json: is a FIFO (named pipe)")


def test_a_file_name_with_a_newline_is_refused_in_one_line(cli, corpus):
    code, out, err = cli("curve", str(corpus["pred"]), "--gt", "missing\nname.png")
    one_line_error(code, out, err, "missing\\nname.png: no such file")


def test_batch_names_a_folder_and_always_closes_with_a_count(tmp_path, corpus):
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "segscore", "batch", str(tmp_path), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True)
    one_line_error(run.returncode, run.stdout, run.stderr, "is a folder")
    manifest = tmp_path / "jobs.csv"
    manifest.write_text("job\n" + " ".join(["curve", str(corpus["pred"]), "--gt", str(corpus["gt"])]) + "\n")
    run = subprocess.run([sys.executable, "-m", "segscore", "batch", str(manifest), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True)  # stderr is not a terminal here
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (f"segscore batch: 1 job: 1 scored, 0 skipped (scored before), "
                                                  f"0 refused, 0 crashed; results in {tmp_path / 'o'}/results.jsonl")
