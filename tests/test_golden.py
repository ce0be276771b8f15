"""Golden outputs: every command's ``--json-out`` on a fixed, seeded corpus, byte for byte.

The inputs are generated here (seeded NumPy, through the test helpers the fuzz corpus uses) into
``tmp_path``; their digests are recorded too, so a change in a helper shows as "the inputs
changed", not as a changed score. Each output is compared with ``tests/data/golden/CASE.json``
after replacing only what legitimately varies between runs: the run's temporary folder (one
exact string) and the fields named in :data:`VARYING` (by key name). Every command of the
registry must have a case here (or a reason in :data:`NOT_COVERED`).

The comparison (:func:`same_output`) is byte for byte on everything but the floating-point
numbers: the text with each float replaced by a placeholder (the structure, every key, string,
integer, bool and null, and the layout) must be identical, and each float must equal its
recorded value to ``1e-12 * max(|got|, |want|) + 1e-15``. The last digits of a float may differ
from one platform's floating-point arithmetic to another's: the ``profile`` case's NNLS share
(``references.*.shares``) is a sum of products whose summation order (numpy's pairwise
summation over SIMD lanes, and the BLAS dot products scipy's ``nnls`` runs) depends on the
CPU, and was seen to differ in its 17th significant digit (``...853173993779`` against
``...85317399378``) on a fresh machine: a platform's rounding, not a changed result.

Re-record (after a change that is meant to change an output): ``SEGSCORE_RECORD_GOLDEN=1 pytest
tests/test_golden.py`` and review the diff of ``tests/data/golden/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from segscore.families import REGISTRY

GOLDEN = Path(__file__).parent / "data" / "golden"
RECORD = os.environ.get("SEGSCORE_RECORD_GOLDEN") == "1"

#: fields whose values vary from run to run, by key name: a batch row's wall-clock ``seconds``,
#: the date it ``finished`` and its inputs' ``mtime`` (files written by this run)
VARYING: tuple[str, ...] = ("seconds", "finished", "mtime")
#: fields holding the package's version string ("0.1.0", "segscore 0.1.0"): replaced only where the
#: value is a string (a format's integer ``version``, e.g. the case table's, is compared)
VERSION_KEYS: tuple[str, ...] = ("version",)
#: files of the generated corpus left out of its digest: written by segscore commands while the
#: corpus is built, they hold the run's date (the ledger) or its temporary paths (the case table)
NOT_DIGESTED = ("ledger/", "audit_cases.json")

#: registry commands without a golden case, each with the reason
NOT_COVERED = {
    "run": "the experiment ledger: it prints run.json (dates and the host), no score",
    "warm": "it fills numba's cache and prints seconds and the cache's path, no score (tests/test_warmup.py)",
}


def _tmp_token(text: str, tmp: Path) -> str:
    return text.replace(str(tmp), "<tmp>")


def normalise(text: str, tmp: Path) -> str:
    """The output with the temporary folder and the :data:`VARYING` fields' values replaced."""
    text = _tmp_token(text, tmp)
    for key in VARYING:
        text = re.sub(r'("%s": ?)(-?[0-9][0-9.eE+-]*|"[^"]*"|null)' % re.escape(key), r'\1"<varies>"', text)
    for key in VERSION_KEYS:
        text = re.sub(r'("%s": ?)"[^"]*"' % re.escape(key), r'\1"<version>"', text)
    return text


#: a JSON string (skipped whole) or a number
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
#: the float tolerance: relative to the larger magnitude, plus an absolute floor for values near 0
REL, ABS = 1e-12, 1e-15


def floats_aside(text: str) -> tuple[str, list[float]]:
    """``text`` with every float literal (a number with a point or an exponent, outside strings)
    replaced by ``<float>``, and the floats in order."""
    found = []

    def swap(m):
        tok = m.group(0)
        if tok.startswith('"') or not any(c in tok for c in ".eE"):
            return tok
        found.append(float(tok))
        return "<float>"

    return _TOKEN.sub(swap, text), found


def same_output(got: str, want: str) -> str | None:
    """None when ``got`` is ``want`` but for float rounding (module docstring), else what differs."""
    if got == want:
        return None
    g_text, g = floats_aside(got)
    w_text, w = floats_aside(want)
    if g_text != w_text:
        return "the structure, a key, a string or an integer differs"
    for k, (a, b) in enumerate(zip(g, w)):
        if abs(a - b) > REL * max(abs(a), abs(b)) + ABS:
            return f"float #{k} is {a!r}, recorded {b!r}"
    return None


def test_float_tolerance_is_tight():
    assert same_output('{"a": 0.1853173993779, "n": 3}', '{"a": 0.185317399378, "n": 3}') is None
    assert same_output('{"a": 0.18531739, "n": 3}', '{"a": 0.185317399378, "n": 3}') is not None
    assert same_output('{"a": 0.1, "n": 4}', '{"a": 0.1, "n": 3}') is not None  # integers exactly
    assert same_output('{"a": 1, "n": 3}', '{"a": 1.0, "n": 3}') is not None  # an int is no float
    assert same_output('{"ap_0.5": 0.2}', '{"ap_0.6": 0.2}') is not None  # numbers inside strings are text
    assert same_output('{"a": 1e-300}', '{"a": 0.0}') is None  # the absolute floor near 0


def _digest_tree(root: Path) -> str:
    lines = []
    for p in sorted(q for q in root.rglob("*") if q.is_file()):
        if any(str(p.relative_to(root)).startswith(n) for n in NOT_DIGESTED):
            continue
        lines.append(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root)}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the corpus

def _build(root: Path) -> dict:
    import tifffile

    from tests.curvilinear.helpers import vessel_tree
    from tests.fuzz.corpus import build
    from tests.objects.helpers import synthetic_pair

    p = build(root / "in")
    f = root / "in3d"
    f.mkdir()
    t, q = synthetic_pair(shape=(40, 40), n=6, seed=7)
    t3 = np.stack([t, t, np.roll(t, 1, 0), np.roll(t, 1, 1)]).astype(np.uint16)
    q3 = np.stack([q, np.roll(q, 1, 0), q, q]).astype(np.int32)
    tifffile.imwrite(f / "truth3.tif", t3, photometric="minisblack")
    np.save(f / "pred3.npy", q3)
    g2 = vessel_tree((40, 40), seed=8, depth=2)
    g3 = np.stack([np.zeros_like(g2), g2, g2, g2, np.zeros_like(g2)])
    np.save(f / "gt3.npy", g3.astype(np.uint8))
    np.save(f / "pred3c.npy", np.roll(g3, 1, axis=2).astype(np.uint8))
    rng = np.random.default_rng(9)
    s = np.zeros((16, 20, 20), np.uint8)
    s[4:7, 2:18, 2:18] = 1
    s[10:12, 3:17, 3:17] = 1
    s[0, :4, :4] = 2  # ignore label
    sp = s.copy()
    sp[5, 5:9, 5:9] = 0
    sp[rng.random(s.shape) < 0.01] = 1
    np.save(f / "sgt.npy", s)
    np.save(f / "spred.npy", (sp == 1).astype(np.uint8))
    p.update({"truth3": f / "truth3.tif", "pred3": f / "pred3.npy", "gt3": f / "gt3.npy", "pred3c": f / "pred3c.npy",
              "sgt": f / "sgt.npy", "spred": f / "spred.npy"})
    return p


def _cases(p: dict, out: Path) -> dict:
    """case name -> argv (without --json-out)."""
    from tests.fuzz.corpus import commands

    c = commands(p)
    s = str
    cases = {name: argv for name, argv in c.items() if name not in NOT_COVERED}
    cases["demo"] = ["demo", "--bootstrap", "0", "--keep", s(out / "keep")]
    cases["perturb"] = c["perturb"][:-2] + ["-o", s(out / "perturbed.npy")]
    cases["fibers-target"] = c["fibers-target"][:-3] + ["--out", s(out / "built_target")]
    cases["auc-bootstrap"] = c["auc"] + ["--bootstrap", "20", "--block-px", "8", "--threads", "1"]
    cases["objects-3d"] = ["objects", s(p["truth3"]), s(p["pred3"])]
    cases["curve-3d"] = ["curve", s(p["pred3c"]), "--gt", s(p["gt3"])]
    cases["perturb-3d"] = ["perturb", s(p["gt3"]), "--operator", "break", "--severity", "0.2",
                           "-o", s(out / "perturbed3.npy")]
    cases["surfaces"] = ["surfaces", s(p["spred"]), s(p["sgt"]), "--topo-tiles", "1", "1", "1"]
    cases["surfaces-tiles"] = ["surfaces", s(p["spred"]), s(p["sgt"]), "--threads", "2"]
    cases["profile-3d"] = ["profile", s(p["pred3c"]), "--gt", s(p["gt3"]), "--seeds", "1", "--quiet"]
    cases["audit-processes"] = c["audit"] + ["--processes", "2"]
    return cases


def _batch_manifest(p: dict, folder: Path) -> Path:
    """Four jobs, their paths relative to the manifest (a job's id is a digest of its text)."""
    from tests.fuzz.corpus import commands

    c = commands(p)
    jobs = [c["curve"], c["objects"], c["target"], c["fibers"]]
    folder.mkdir()
    m = folder / "jobs.csv"
    rel = [[os.path.relpath(a, folder) if os.path.isabs(a) else a for a in j] for j in jobs]
    m.write_text("job\n" + "".join(" ".join(j) + "\n" for j in rel))
    return m


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("golden")
    return root, _build(root)


def _check(name: str, text: str, root: Path, suffix=".json"):
    got = normalise(text, root)
    path = GOLDEN / f"{name}{suffix}"
    if RECORD:
        path.write_text(got)
        return
    assert path.exists(), f"no golden output for {name}: record it (SEGSCORE_RECORD_GOLDEN=1)"
    want = path.read_text()
    differs = same_output(got, want) if suffix == ".json" else (None if got == want else "the digests differ")
    if differs and os.environ.get("SEGSCORE_GOLDEN_GOT"):  # where to leave the differing output
        Path(os.environ["SEGSCORE_GOLDEN_GOT"], path.name).write_text(got)
    assert differs is None, f"{name}: output differs from {path}: {differs}"


def test_the_inputs_are_the_recorded_ones(corpus):
    root, _ = corpus
    _check("inputs", _digest_tree(root / "in") + _digest_tree(root / "in3d"), root, suffix=".sha256")


CASE_NAMES = ["auc", "auc-bootstrap", "demo", "target", "placement", "check", "columns", "objects", "objects-3d",
              "holdout", "fibers", "fibers-aggregate", "fibers-target", "curve", "curve-3d", "perturb", "perturb-3d",
              "audit", "audit-processes", "profile", "profile-3d", "surfaces", "surfaces-tiles"]


def test_every_registered_command_has_a_case(corpus):
    root, p = corpus
    cases = _cases(p, root / "unused")
    assert sorted(cases) == sorted(CASE_NAMES)
    names = {argv[0] for argv in cases.values()} | {"batch", "report"}  # (test_batch_results_and_report)
    missing = sorted(set(REGISTRY) - names - set(NOT_COVERED))
    assert not missing, f"commands without a golden case: {missing} (add one to tests/test_golden.py)"


@pytest.mark.parametrize("name", CASE_NAMES)
def test_json_out_is_the_recorded_one(cli, corpus, name):
    root, p = corpus
    out = root / "out" / name
    out.mkdir(parents=True)
    argv = _cases(p, out)[name]
    code, stdout, err = cli(*argv, "--json-out", out / "r.json")
    assert code in (0, 3), err
    _check(name, (out / "r.json").read_text(), root)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_api_gives_the_recorded_json(corpus, name):
    """The same case through the typed Python function (``segscore.api.X(**values)``, the values
    read from the case's words by the command's own declarations): the recorded JSON too."""
    import argparse

    from segscore import api
    from segscore.commands._declare import parse_words
    from segscore.families import command

    root, p = corpus
    out = root / "api" / name
    out.mkdir(parents=True)
    argv = _cases(p, out)[name]
    spec = command(argv[0])
    values = parse_words(spec.module, argv[1:], argparse.ArgumentParser(add_help=False))
    api.COMMANDS[spec.name](**{**values, "json_out": out / "r.json"})
    text = (out / "r.json").read_text().replace(str(root / "api"), str(root / "out"))
    _check(name, text, root)


@pytest.mark.parametrize("variant", ["threads", "processes"])
def test_batch_results_and_report(cli, corpus, variant):
    root, p = corpus
    folder = root / f"batch-{variant}"
    manifest = _batch_manifest(p, folder)
    extra = ["--processes", "2"] if variant == "processes" else ["--threads", "2"]
    code, _, err = cli("batch", manifest, "--out", folder / "o", *extra)
    assert code == 0, err
    rows = sorted((folder / "o" / "results.jsonl").read_text().splitlines())  # in the order of their ids
    _check(f"batch-{variant}", "\n".join(rows) + "\n", root)
    code, _, err = cli("report", folder / "o", "--json-out", folder / "report.json")
    assert code == 0, err
    _check(f"report-{variant}", (folder / "report.json").read_text(), root)


def test_threads_and_processes_recorded_the_same():
    """The recorded outputs of the process variants equal those of the threads (the source folder aside)."""
    assert (GOLDEN / "audit-processes.json").read_text() == (GOLDEN / "audit.json").read_text()
    assert (GOLDEN / "batch-processes.json").read_text() == (GOLDEN / "batch-threads.json").read_text()
    threads = (GOLDEN / "report-threads.json").read_text().replace("<tmp>/batch-threads/", "<tmp>/batch-X/")
    assert (GOLDEN / "report-processes.json").read_text().replace("<tmp>/batch-processes/", "<tmp>/batch-X/") == threads
