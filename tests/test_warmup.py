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
