"""The one set of numba options every kernel uses.

``jit`` is ``numba.njit(cache=True, nogil=True)``: compiled code is cached on disk (so only the
first run of a kernel pays its compile time) and releases the GIL (so the engine's thread pool
runs tiles in parallel). A kernel that needs other options says why beside its decorator.

Kernels share compiled helpers across files (one union-find, one labeller: ``components``).
numba stamps a function's cache entry with its own source file only, so an edit to a helper in
another file would leave the caller's cached machine code stale. Here every function of
``segscore/kernels/*.py`` is stamped instead with :func:`kernels_digest`, a hash of the contents
of all those files, read once per process: an edit to any kernel file (even one that keeps its
size and mtime) recompiles every kernel at its next first use. The stamp comes from cache
locators put first in numba's list (:class:`_KernelsStamp`); they keep numba's places:
``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the sources, else numba's per-user
folder (tests/test_repository.py proves it in a fresh process). A
``NUMBA_CACHE_LOCATOR_CLASSES`` override replaces numba's list and with it this stamp.

numba writes its cache next to the source file. Where the package directory is read-only
(a system install, a container image) that fails with "no locator available", so unless the
user set ``NUMBA_CACHE_DIR`` we point numba at a writable per-user folder instead.
"""

from __future__ import annotations

import hashlib
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
from numba.core import caching as _caching  # noqa: E402

_KERNELS = os.path.dirname(os.path.realpath(__file__))
_digest: bytes | None = None


def kernels_digest() -> bytes:
    """sha256 of the names and contents of every ``*.py`` file of this folder, read once per
    process (about 100 kB, under a millisecond): the source stamp of every kernel's cache entry."""
    global _digest
    if _digest is None:
        h = hashlib.sha256()
        for name in sorted(os.listdir(_KERNELS)):
            if name.endswith(".py"):
                with open(os.path.join(_KERNELS, name), "rb") as f:
                    data = f.read()
                h.update(b"%s\0%d\0" % (name.encode(), len(data)))
                h.update(data)
        _digest = h.digest()
    return _digest


def _numba_name(*names):  # numba renamed its caching classes (``_CacheImpl`` -> ``CacheImpl``)
    for n in names:
        if hasattr(_caching, n):
            return getattr(_caching, n)
    raise ImportError(f"numba.core.caching has none of {names}")  # pragma: no cover


class _KernelsStamp:
    """Mixin for a numba cache locator: it takes the functions defined in this folder only and
    stamps their cache entries with :func:`kernels_digest` instead of their own file's hash."""

    _segscore_kernels = _KERNELS

    def get_source_stamp(self):
        return ("segscore.kernels", kernels_digest())

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.realpath(py_file)) != _KERNELS:
            return None
        return super().from_function(py_func, py_file)


class _KernelsUserProvidedLocator(_KernelsStamp, _numba_name("UserProvidedCacheLocator", "_UserProvidedCacheLocator")):
    """``NUMBA_CACHE_DIR`` (set by the user, or above for a read-only package)."""


class _KernelsInTreeLocator(_KernelsStamp, _numba_name("InTreeCacheLocator", "_InTreeCacheLocator")):
    """``__pycache__`` beside the sources."""


class _KernelsUserWideLocator(_KernelsStamp, _numba_name("UserWideCacheLocator", "_UserWideCacheLocator")):
    """numba's per-user cache folder."""


def _install_locators() -> None:
    classes = _numba_name("CacheImpl", "_CacheImpl")._locator_classes
    if not any(getattr(c, "_segscore_kernels", None) == _KERNELS for c in classes):  # once per folder
        classes[:0] = [_KernelsUserProvidedLocator, _KernelsInTreeLocator, _KernelsUserWideLocator]


_install_locators()

JIT_OPTIONS = {"cache": True, "nogil": True}


def jit(func=None, **overrides):
    """``numba.njit`` with the shared options; ``overrides`` must carry a reason in a comment."""
    options = {**JIT_OPTIONS, **overrides}
    if func is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(func)


prange = numba.prange
