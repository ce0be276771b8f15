"""The one set of numba options every kernel uses.

``jit`` is ``numba.njit(cache=True, nogil=True)``: compiled code is cached on disk (so only the
first run of a kernel pays its compile time) and releases the GIL (so the engine's thread pool
runs tiles in parallel). A kernel that needs other options says why beside its decorator.

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
