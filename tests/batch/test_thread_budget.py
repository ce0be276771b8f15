"""A job's share of its worker's CPUs (segscore.engine.executor.thread_budget): every pass of the
engine within it is capped, so N jobs side by side do not each spread over every core."""

from __future__ import annotations

import threading

import numpy as np

from segscore.engine.executor import default_workers, reduce_windows, side_by_side, thread_budget


def test_the_budget_caps_every_pass_and_is_undone_after():
    full = default_workers()
    with thread_budget(1):
        assert default_workers() == 1
        me = threading.get_ident()
        assert side_by_side([threading.get_ident] * 3, threads=4) == [me] * 3  # inline, one after the other
        seen = set()
        reduce_windows(lambda w: seen.add(threading.get_ident()) or w, list(range(20)), lambda a, b: a + b,
                       workers=4)
        assert seen == {me} or len(seen) == 1
        with thread_budget(None):
            assert default_workers() == full
        assert default_workers() == 1
    assert default_workers() == full


def test_a_batch_job_runs_within_its_share(monkeypatch):
    from segscore.batch import execute as E
    from segscore.engine import executor

    seen = []
    real = executor.default_workers

    def spy():
        seen.append(real())
        return seen[-1]

    monkeypatch.setattr(executor, "default_workers", spy)
    m = np.zeros((24, 24), bool)
    m[12, 2:22] = True
    out = E.execute({"call": ("curvilinear", (m, m), {}), "threads": 1})
    assert out["status"] == "scored", out
    assert seen and set(seen) == {1}
