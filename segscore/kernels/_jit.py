"""The one set of numba options every kernel uses.

``jit`` is ``numba.njit(cache=True, nogil=True)``: compiled code is cached on disk (so only the
first run of a kernel pays its compile time) and releases the GIL (so the engine's thread pool
runs tiles in parallel). A kernel that needs other options says why beside its decorator.

A kernel calls compiled helpers of its own module only: numba's on-disk cache is keyed by the
caller's source file, so an edit to a helper in another file would leave the caller's cached
machine code stale (tests/test_repository.py checks the rule).

numba writes its cache next to the source file. Where the package directory is read-only
(a system install, a container image) that fails with "no locator available", so unless the
user set ``NUMBA_CACHE_DIR`` we point numba at a writable per-user folder instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _configure_cache_dir() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    here = Path(__file__).resolve().parent
    if os.access(here, os.W_OK):
        return  # numba's default (beside the sources) works
    from segscore.cachedir import writable_cache_dir

    target = writable_cache_dir("numba")
    if target is None:  # pragma: no cover - nowhere writable: numba will warn and run uncached
        return
    os.environ["NUMBA_CACHE_DIR"] = str(target)
    if "numba" in sys.modules:  # numba read its config already: tell it too
        import numba.core.config as _cfg

        _cfg.CACHE_DIR = str(target)


_configure_cache_dir()

import numba  # noqa: E402  (after the cache directory is settled)

JIT_OPTIONS = {"cache": True, "nogil": True}


def jit(func=None, **overrides):
    """``numba.njit`` with the shared options; ``overrides`` must carry a reason in a comment."""
    options = {**JIT_OPTIONS, **overrides}
    if func is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(func)


prange = numba.prange


@jit
def _first_use(x):  # the cheapest cached dispatch: it makes numba start its CPU target
    return x + 1


def start_without_blas_probe() -> bool:
    """Start numba's CPU target without the BLAS probe of its first use; True if it did.

    numba's first compile or cache load imports ``numba.np.arraymath``, which imports
    ``scipy.linalg.cython_blas`` (and with it all of scipy.linalg) only to learn whether BLAS is
    there for ``np.dot``-like calls inside compiled code. segscore's kernels make no such call,
    and in a short command the probe is a sixth of the run: about 0.25 s and 12-40 MB. While
    numba starts, that module is made unimportable (``None`` in ``sys.modules``, Python's
    documented way to block an import), so numba takes its no-scipy path for that one
    decision; the entry is removed at once and scipy.linalg imports normally afterwards.

    For a process segscore owns only (the ``segscore`` command calls it before a command that
    runs kernels): a library must not change how numba starts in its caller's process. It
    acts only from the main thread while no other thread runs, and only when neither numba's
    target nor scipy.linalg has started yet. If the start fails, numba starts the usual way at
    the first kernel call.
    """
    import threading

    name = "scipy.linalg.cython_blas"
    if (name in sys.modules or "numba.np.arraymath" in sys.modules
            or threading.current_thread() is not threading.main_thread() or threading.active_count() > 1):
        return False
    sys.modules[name] = None
    try:
        _first_use(1)
    except Exception:  # pragma: no cover - numba changed: let it start the usual way later
        return False
    finally:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]
    return True
