"""segscore: fast, exact, bounded-memory scoring of segmentations and ink maps.

``import segscore`` loads numpy only. The families are imported when first used::

    from segscore.ink import auc
    result = auc.score_files("map.tif", "inklabels.zarr", "supervision.zarr", control="rev.tif")
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {"errors", "ink", "io", "engine", "kernels", "cli", "columns", "curvilinear", "objects", "fibers",
               "families", "metrics", "figures", "batch", "topology"}

__all__ = ["__version__", "ScoreError", "VerifyError", "warm", *sorted(_SUBMODULES)]


def warm(families=None) -> list[str]:
    """Compile (or load from numba's on-disk cache) the kernels of ``families`` (default: every
    registered family) in this process; call it once before fanning work out to workers."""
    from segscore.families import warm as _warm

    return _warm(families)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"segscore.{name}")
    if name in ("ScoreError", "VerifyError"):
        from segscore import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'segscore' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
