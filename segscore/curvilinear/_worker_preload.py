"""Imported once by the worker server an audit's cluster forks its workers from
(:mod:`segscore.curvilinear.workers`): distributed, and the kernels an audit runs
(:func:`segscore.curvilinear.auditing._warm_worker`), are loaded there, so every worker starts with
them loaded instead of loading them itself.

The server is a process segscore started, with one thread, so numba starts without its BLAS probe
(:func:`segscore.kernels._jit.start_without_blas_probe`). Importing this module never raises (an
error in the server's preload would take the server down, and the cluster with it): whatever
cannot be loaded here, each worker loads in its own warm-up, which reports why.
"""


def _load() -> None:
    try:
        import distributed  # noqa: F401 - every worker needs it; imported once, here

        from segscore.kernels._jit import start_without_blas_probe

        start_without_blas_probe()
        from segscore.curvilinear.auditing import _warm_worker

        _warm_worker()
    except Exception:  # noqa: BLE001 - left to the workers' own warm-up, which says what failed
        pass


_load()
