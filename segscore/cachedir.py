"""Where segscore keeps what it computes once per machine (numba's compiled kernels, keyed by the
kernels' source: :func:`numba_cache_dir`; the measured thinning table).

``$SEGSCORE_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/segscore``, else ``~/.cache/segscore``
(``%LOCALAPPDATA%\\segscore`` on Windows). Where that cannot be written (a read-only home in
a container), a per-user folder in the system's temporary directory stands in.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path


def user_cache_dir() -> Path:
    if os.environ.get("SEGSCORE_CACHE_DIR"):
        return Path(os.environ["SEGSCORE_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "segscore"
    if sys.platform == "win32":  # pragma: no cover - not exercised on CI
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "segscore"
    return Path.home() / ".cache" / "segscore"


def fallback_cache_dir() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"segscore-cache-{uid}"


def cache_dirs() -> list[Path]:
    """The places to look, in order (the user's cache, then the stand-in)."""
    return [user_cache_dir(), fallback_cache_dir()]


def writable_cache_dir(sub: str = "") -> Path | None:
    """The first of :func:`cache_dirs` (joined with ``sub``) that exists or can be made and is
    writable; None when neither is."""
    for base in cache_dirs():
        d = base / sub if sub else base
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d
    return None


_KERNELS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "kernels")
_digest: bytes | None = None


def kernels_digest() -> bytes:
    """A hash of the contents of every kernel file, read once per process (about 100 kB, under a
    millisecond): the key of the numba cache folder."""
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


def numba_cache_dir() -> str | None:
    """Where the kernels' compiled code is kept: ``BASE/segscore-DIGEST`` (:mod:`segscore.kernels._jit`
    says why; computed without importing numba); None where no folder can be written (numba then
    warns and compiles every run)."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    if not base:
        found = writable_cache_dir("numba")
        if found is None:  # pragma: no cover - nowhere writable
            return None
        base = str(found)
    return os.path.join(base, "segscore-" + kernels_digest().hex()[:16])
