"""segscore: fast, exact, bounded-memory scoring of segmentations and ink maps.

``import segscore`` loads numpy only. The families are imported when first used. One typed
function per command, the truth first and the prediction second whatever the command line's
order, options keyword-only and named as on the command line (:mod:`segscore.api`)::

    from segscore import api
    result = api.objects("truth.tif", "pred.tif", iou=0.5)       # segscore objects truth.tif pred.tif --iou 0.5
    result = api.auc("inklabels.zarr", "map.tif", mask="supervision.zarr", control="rev.tif")
    result.to_frame(); result.plot()

The functions whose names no subpackage takes are here too (``segscore.auc``, ``segscore.curve``,
``segscore.target`` ...); ``objects``, ``fibers`` and ``columns`` are subpackages, so their
functions are ``segscore.api.objects`` and so on.
"""

from __future__ import annotations

import importlib

from segscore._version import __version__

_SUBMODULES = {"errors", "ink", "io", "engine", "kernels", "cli", "columns", "curvilinear", "objects", "fibers",
               "families", "metrics", "figures", "batch", "api", "commands", "topology"}
#: segscore.api's functions whose names no subpackage takes, re-exported here when first used
_API = ("auc", "target", "placement", "check", "holdout", "curve", "perturb", "fibers_aggregate", "fibers_target",
        "audit", "profile", "surfaces", "demo")

__all__ = ["__version__", "ScoreError", "VerifyError", "warm", *sorted(_SUBMODULES), *_API]


def warm(families=None) -> list[str]:
    """Compile (or load from numba's on-disk cache) the kernels of ``families`` (default: every
    registered family) in this process; call it once before fanning work out to workers."""
    from segscore.families import warm as _warm

    return _warm(families)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"segscore.{name}")
    if name in _API:
        return getattr(importlib.import_module("segscore.api"), name)
    if name in ("ScoreError", "VerifyError"):
        from segscore import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'segscore' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
