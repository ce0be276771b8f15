"""The anti-gaming floors and the oracle of a fiber target, as instance labellings.

Named as in ``meta.json``: ``floor_single_instance`` (every mask voxel one instance),
``floor_voxel_instances`` (one instance per mask voxel), ``floor_connected_components``
(26-connected components of the mask), ``floor_random_instances``
(``numpy.random.default_rng(0).integers(1, 51, size=mask.sum(), dtype=int32)`` in C order over
the mask's voxels) and ``oracle`` (the scored fibers rasterised, a later fiber winning, then
grown by radius 1 with nearest-label growth).
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError
from segscore.fibers.target import FiberTarget
from segscore.kernels import fibers as K

#: ``--floor`` names -> meta.json keys, in meta.json's order
FLOORS = {
    "oracle": "oracle",
    "single_instance": "floor_single_instance",
    "connected_components": "floor_connected_components",
    "voxel_instances": "floor_voxel_instances",
    "random_instances": "floor_random_instances",
}


def single_instance(mask: np.ndarray) -> np.ndarray:
    return mask.view(np.uint8)


def voxel_instances(mask: np.ndarray) -> np.ndarray:
    n = int(np.count_nonzero(mask))
    out = np.empty(mask.shape, np.int32)
    K.rank_labels(mask.view(np.uint8), np.arange(1, n + 1, dtype=np.int32), out)
    return out


def random_instances(mask: np.ndarray, n: int = 50, seed: int = 0) -> np.ndarray:
    count = int(np.count_nonzero(mask))
    draws = np.random.default_rng(seed).integers(1, n + 1, size=count, dtype=np.int32)
    out = np.empty(mask.shape, np.int32)
    K.rank_labels(mask.view(np.uint8), draws, out)
    return out


def connected_components(mask: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    out = np.empty(mask.shape, np.int32)
    ndimage.label(mask, structure=np.ones((3, 3, 3), bool), output=out)
    return out


def oracle(target: FiberTarget, radius: float = 1.0) -> np.ndarray:
    out = np.zeros(target.shape, np.int32)
    K.rasterize_fibers(target.coords, target.edges, target.edge_offsets, target.node_start, target.node_stop, out)
    if radius > 0:
        seeds = np.flatnonzero(out).astype(np.int64)
        offsets = K.ball_offsets(radius)
        m = seeds.size * offsets.shape[0]
        K.grow_volume(out, seeds, offsets, np.empty(m, np.int64), np.empty(m, np.int32))
    return out


def floor_labels(target: FiberTarget, name: str) -> np.ndarray:
    """The labelling of floor ``name`` (a key of :data:`FLOORS`, with or without ``floor_``)."""
    key = name[len("floor_"):] if name.startswith("floor_") else name
    if key == "oracle":
        return oracle(target)
    makers = {"single_instance": single_instance, "voxel_instances": voxel_instances,
              "connected_components": connected_components, "random_instances": random_instances}
    if key not in makers:
        raise ScoreError(f"unknown floor {name!r}; choose one of {', '.join(FLOORS)}")
    return makers[key](target.mask)


def recompute_floors(target: FiberTarget, *, tolerance: float | None = None) -> dict:
    """Every floor and the oracle scored against ``target``: ``{meta.json key: metrics row}``."""
    from segscore.fibers.score import score_labels

    mask = target.mask
    n_mask = int(np.count_nonzero(mask))
    known = {"single_instance": (n_mask, 1 if n_mask else 0), "voxel_instances": (n_mask, n_mask)}
    rows = {}
    for name, key in FLOORS.items():
        labels = floor_labels(target, name)
        rows[key] = score_labels(target, labels, tolerance=tolerance, name=key, census=known.get(name))
        del labels
    return rows
