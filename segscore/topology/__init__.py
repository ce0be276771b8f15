"""Topology of segmentations: Betti matching (persistent homology of cubical complexes on
numba kernels) and the Vesuvius surface-detection score built on it.

``import segscore.topology`` loads numpy only; the kernels compile at first use.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "betti_matching": "segscore.metrics.betti", "BettiMatching": "segscore.metrics.betti",
    "DimensionMatching": "segscore.metrics.betti", "BettiInputError": "segscore.metrics.betti",
    "surfaces": "score", "prepare_surfaces": "score", "PreparedSurfaces": "score",
    "SurfacesInputError": "score", "toposcore": "score", "topology_counts": "score",
    "voi": "score", "binarize": "score", "tile_slices": "score",
    "DEFAULT_WEIGHTS": "score", "DEFAULT_TOPO_WEIGHTS": "score", "DEFAULT_TOPO_TILES": "score",
    "surface_dice": "surface", "area_table": "surface",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        where = _WHERE[name]
        module = where if where.startswith("segscore.") else f"segscore.topology.{where}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'segscore.topology' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
