"""The objects pass loads its kernels on a thread beside its first reads
(:func:`segscore.objects.warmup.start_loading`); the numbers do not depend on it."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("surface, big", [(False, False), (True, False), (True, True)])
def test_the_loading_thread_runs_every_pass_kernel_without_error(wide, surface, big, monkeypatch):
    from segscore.objects import warmup

    errors = []
    real = warmup.pass_kernels

    def checked(*a):
        try:
            real(*a)
        except Exception as exc:  # noqa: BLE001 - the thread swallows errors: surface them here
            errors.append(exc)

    monkeypatch.setattr(warmup, "pass_kernels", checked)
    monkeypatch.setattr(warmup, "_LOADED", set())
    thread = warmup.start_loading(wide, surface, big)
    thread.join(600)
    assert not thread.is_alive() and errors == []


def test_a_process_loads_the_pass_kernels_once(monkeypatch):
    """A held-out set's later fields start no loading thread: the first one loaded the kernels."""
    from segscore.objects import warmup

    monkeypatch.setattr(warmup, "_LOADED", set())
    first = warmup.start_loading(False, True, False)
    first.join(600)
    assert warmup._LOADED == {(False, True, False)}
    assert warmup.start_loading(False, True, False) is None
    again = warmup.start_loading(True, True, False)  # another key: loaded anew
    assert again is not None
    again.join(600)


def test_no_loading_thread_where_the_tasks_run_elsewhere(monkeypatch):
    from segscore.objects import warmup
    from segscore.objects.metrics import stream_pair

    started = []
    monkeypatch.setattr(warmup, "start_loading", lambda *a: started.append(a))
    t = np.zeros((6, 6), np.uint16)
    t[1:3, 1:3] = 1
    stream_pair(t, t, executor="synchronous")
    assert started == [(False, False, False)]
    started.clear()
    dask = pytest.importorskip("dask")  # noqa: F841
    stream_pair(t, t, executor="dask")
    assert started == []
