"""The one set of numba options every kernel uses.

``jit`` is ``numba.njit(cache=True, nogil=True)``: compiled code is cached on disk (so only the
first run of a kernel pays its compile time) and releases the GIL (so the engine's thread pool
runs tiles in parallel). A kernel that needs other options says why beside its decorator.

Kernels share compiled helpers across files (one union-find, one labeller: ``components``).
numba stamps a function's cache entry with its own source file only, so an edit to a helper in
another file would leave the caller's cached machine code stale. So the cache folder is keyed by
:func:`kernels_digest`, a hash of the contents of every ``segscore/kernels/*.py`` file (read once
per process, about 100 kB): numba's cache directory is set to ``BASE/segscore-DIGEST``, and an edit
to any kernel file (even one that keeps its size and mtime) starts a new folder, so every kernel
compiles again at its next first use (tests/test_repository.py proves it in a fresh process).
``BASE`` is ``NUMBA_CACHE_DIR`` when set, else a writable per-user folder
(:func:`segscore.cachedir.writable_cache_dir`, ``~/.cache/segscore/numba``), which also works where
the package folder is read-only. numba has one cache directory per process, so while segscore is
imported your own ``cache=True`` functions are cached in that folder too.
"""

from __future__ import annotations

import numba

# the cache folder's key and place, computed without importing numba (a first run's stamp reads them)
from segscore.cachedir import kernels_digest  # noqa: F401
from segscore.cachedir import numba_cache_dir as cache_dir


def _configure_cache_dir() -> None:
    target = cache_dir()
    if target is not None:
        numba.config.CACHE_DIR = target


_configure_cache_dir()

JIT_OPTIONS = {"cache": True, "nogil": True}


def jit(func=None, **overrides):
    """``numba.njit`` with the shared options; ``overrides`` must carry a reason in a comment."""
    options = {**JIT_OPTIONS, **overrides}
    if func is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(func)


prange = numba.prange
