"""``segscore.families.warm_commands``: the engine of ``segscore warm [COMMAND...]`` (which families
a list of commands needs, the refusal of an unknown name, progress, the spawned processes).
Whether a warm-up covers its commands (nothing left to compile) is measured by
``python -m benchmarks.bench_first_run --after-warm``: it needs an empty numba cache per command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from segscore.errors import ScoreError
from segscore.families import FAMILIES, warm_commands, warm_families_of


def test_commands_map_to_their_families_aliases_too():
    assert warm_families_of() == list(FAMILIES)
    assert warm_families_of(["profile", "score", "curve"]) == ["ink", "curvilinear"]  # score: target's alias
    assert warm_families_of("surfaces") == ["topology"]
    assert warm_families_of(["batch", "report", "run"]) == []  # no family: nothing to warm


def test_an_unknown_command_is_refused_naming_the_commands():
    with pytest.raises(ScoreError, match=r"no command 'curves'.*curve, perturb") as e:
        warm_families_of(["curves"])
    assert "\n" not in str(e.value)


def test_progress_in_this_process():
    seen = []
    assert warm_commands(["columns"], processes=1, progress=lambda *a: seen.append(a)) == ["columns"]
    assert seen == [(0, 1, ""), (1, 1, "columns")]
    assert warm_commands(["batch"], processes=2, progress=lambda *a: seen.append(a)) == []
    assert seen[-1] == (0, 0, "")


def test_two_spawned_processes():
    code = ("from segscore.families import warm_commands\n"
            "if __name__ == '__main__':\n"
            "    print(sorted(warm_commands(['columns', 'target'], processes=2, "
            "progress=lambda d, t, n: print(d, t, n))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].split() == ["0", "2"] and [line.split()[:2] for line in lines[1:3]] == [["1", "2"], ["2", "2"]], lines
    assert {line.split()[2] for line in lines[1:3]} == {"columns", "ink"}, lines
    assert lines[-1] == "['columns', 'ink']"


# ``segscore warm`` and ``segscore.api.warm``: the command and the typed function on that engine


def test_api_warm_is_typed_and_refuses_unknown_names_and_bad_processes():
    import inspect

    from segscore import api

    sig = inspect.signature(api.warm)
    assert [p.kind.name for p in sig.parameters.values()] == ["POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "KEYWORD_ONLY"]
    with pytest.raises(ScoreError, match="no command 'nope' to warm"):
        api.warm(["nope"])
    with pytest.raises(ScoreError, match="--processes"):
        api.warm("columns", processes=0)
    out = api.warm(["batch", "report"], processes=1)  # commands of no family: nothing to compile
    assert out["families"] == [] and out["commands"] == ["batch", "report"] and out["processes"] == 1
    assert out["cache"].rsplit("/", 1)[-1].startswith("segscore-")


def test_cli_warm_one_line_refusal_and_json(capsys):
    from segscore.cli.main import main

    assert main(["warm", "curves"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("segscore warm: no command 'curves' to warm; fix:"), err
    assert main(["warm", "report", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["families"] == [] and out["commands"] == ["report"]


@pytest.mark.parametrize("command, inputs", [("columns", ("col_pred.npy", "col_target")),
                                             ("target", ("ink_pred.png", "ink_target"))])
def test_after_warm_a_first_run_compiles_nothing(tmp_path, command, inputs):
    """``segscore warm COMMAND`` on an empty cache, then ``segscore COMMAND`` on the sample inputs in
    a new process: numba's compile events (raised only when a kernel is compiled, not loaded) count 0."""
    import os

    from segscore.io.samples import write_data

    data = write_data(tmp_path / "data")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    warmed = subprocess.run([sys.executable, "-m", "segscore", "warm", command, "--processes", "1"],
                            capture_output=True, text=True, env=env)
    assert warmed.returncode == 0, warmed.stderr
    assert "warmed 1 family" in warmed.stdout and "1/1" in warmed.stderr, (warmed.stdout, warmed.stderr)
    code = ("import sys\n"
            "from numba.core import event\n"
            "seen = []\n"
            "class L(event.Listener):\n"
            "    def on_start(self, ev): seen.append(ev.data['dispatcher'].py_func.__qualname__)\n"
            "    def on_end(self, ev): pass\n"
            "event.register('numba:compile', L())\n"
            "from segscore.cli.main import main\n"
            "code = main([sys.argv[1], sys.argv[2], sys.argv[3], '--json'])\n"
            "print('COMPILED', seen, file=sys.stderr)\n"
            "sys.exit(code)\n")
    run = subprocess.run([sys.executable, "-c", code, command, *(str(data / name) for name in inputs)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "COMPILED []" in run.stderr, run.stderr


def test_one_family_runs_its_planned_first_runs_on_two_processes_first(monkeypatch):
    """``segscore warm objects`` (one family, two processes allowed): the family's planned commands'
    first runs (two processes each) come before its warm-up in this process; with one process, none."""
    import segscore.engine.firstrun as firstrun
    import segscore.families as F

    calls = []
    monkeypatch.setattr(firstrun, "compile_first", lambda command, plan: calls.append(("plan", command)))
    monkeypatch.setattr(F, "warm", lambda name: calls.append(("warm", name)))
    assert warm_commands(["holdout"], processes=2) == ["objects"]
    assert calls == [("plan", "objects"), ("plan", "holdout"), ("warm", "objects")]
    calls.clear()
    assert warm_commands(["holdout"], processes=1) == ["objects"]
    assert calls == [("warm", "objects")]
