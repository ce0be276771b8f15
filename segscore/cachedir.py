"""Where segscore keeps what it computes once per machine (numba's compiled kernels where the
package folder is read-only, the measured thinning table).

``$SEGSCORE_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/segscore``, else ``~/.cache/segscore``
(``%LOCALAPPDATA%\\segscore`` on Windows). Where that cannot be written (a read-only home in
a container), a per-user folder in the system's temporary directory stands in.
"""

from __future__ import annotations

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
