"""Fiber connectivity targets (ScrollGT ``score-fibers``): ERL, merges, splits, floors in 3D.

::

    from segscore.fibers import score_fibers, load_target, aggregate_fiber_scores
    card = score_fibers("fibers_s1_00497_01497_03997_256", "labels.npy")
    card = score_fibers("fibers_s1_00497_01497_03997_256", floor="connected_components")

Heavy modules load on first use, so ``import segscore.fibers`` stays light.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "load_target": "segscore.fibers.target",
    "FiberTarget": "segscore.fibers.target",
    "score_labels": "segscore.fibers.score",
    "recompute_floors": "segscore.fibers.floors",
    "floor_labels": "segscore.fibers.floors",
    "FLOORS": "segscore.fibers.floors",
    "score_fibers": "segscore.fibers.card",
    "format_card": "segscore.fibers.card",
    "aggregate_fiber_scores": "segscore.fibers.card",
    "open_labels": "segscore.fibers.card",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'segscore.fibers' has no attribute {name!r}")
