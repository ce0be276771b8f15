"""Shared test fixtures.

Real data (FIVES, ScrollGT targets) is read from ``$SEGSCORE_SHARED_DATA`` or from
``../shared/data`` beside the repository; tests that need it skip with that reason where
neither exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("SEGSCORE_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real ground truth; skips the test when it is absent."""
    d = shared_data_dir()
    if d is None:
        pytest.skip("real data not found: set SEGSCORE_SHARED_DATA or place it at ../shared/data")
    return d


@pytest.fixture
def cli(capsys):
    """Run ``segscore ARGS`` in-process: returns (exit code, stdout, stderr)."""
    from segscore.cli.main import main

    def run(*args):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run
