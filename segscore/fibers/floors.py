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


def _mask_count(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def single_instance(mask: np.ndarray) -> np.ndarray:
    return _single(mask)[0]


def _single(mask):
    n = _mask_count(mask)
    return mask.view(np.uint8), (n, 1 if n else 0)


def voxel_instances(mask: np.ndarray) -> np.ndarray:
    return _voxel(mask)[0]


def _voxel(mask):
    n = _mask_count(mask)
    out = np.empty(mask.shape, np.int32)
    K.rank_labels(mask.view(np.uint8), np.arange(1, n + 1, dtype=np.int32), out)
    return out, (n, n)


def random_instances(mask: np.ndarray, n: int = 50, seed: int = 0) -> np.ndarray:
    return _random(mask, n, seed)[0]


def _random(mask, n=50, seed=0):
    count = _mask_count(mask)
    draws = np.random.default_rng(seed).integers(1, n + 1, size=count, dtype=np.int32)
    out = np.empty(mask.shape, np.int32)
    K.rank_labels(mask.view(np.uint8), draws, out)
    return out, (count, int(np.count_nonzero(np.bincount(draws, minlength=n + 1)[1:])))


def connected_components(mask: np.ndarray) -> np.ndarray:
    """26-connected components, numbered as ``scipy.ndimage.label`` numbers them.

    A labelling is global by nature, so the cube is labelled whole (not by tiles): an int32
    label per voxel plus one int32 parent per mask voxel, at most 8 bytes per voxel (1 GB
    for a 512^3 cube)."""
    return _components(mask)[0]


def _components(mask):
    count = _mask_count(mask)
    out = np.empty(mask.shape, np.int32)
    parent = np.empty(count + 1, np.int32)
    m = K.label_components26(mask.view(np.uint8), out, parent)
    return out, (count, int(m))


def oracle(target: FiberTarget, radius: float = 1.0) -> np.ndarray:
    out = np.zeros(target.shape, np.int32)
    K.rasterize_fibers(target.coords, target.edges, target.edge_offsets, target.node_start, target.node_stop, out)
    if radius > 0:
        seeds = np.flatnonzero(out).astype(np.int64)
        offsets = K.ball_offsets(radius)
        m = seeds.size * offsets.shape[0]
        K.grow_volume(out, seeds, offsets, np.empty(m, np.int64), np.empty(m, np.int32))
    return out


def _floor(target: FiberTarget, name: str):
    """``(labels, (predicted voxels, instances) or None)`` of floor ``name``."""
    key = name[len("floor_"):] if name.startswith("floor_") else name
    if key == "oracle":
        return oracle(target), None
    makers = {"single_instance": _single, "voxel_instances": _voxel, "connected_components": _components,
              "random_instances": _random}
    if key not in makers:
        raise ScoreError(f"unknown floor {name!r}; choose one of {', '.join(FLOORS)}")
    return makers[key](target.mask)


def floor_labels(target: FiberTarget, name: str) -> np.ndarray:
    """The labelling of floor ``name`` (a key of :data:`FLOORS`, with or without ``floor_``)."""
    return _floor(target, name)[0]


def score_floor(target: FiberTarget, name: str, *, tolerance: float | None = None) -> dict:
    """The metrics row of floor ``name``."""
    from segscore.fibers.score import score_labels

    labels, census = _floor(target, name)
    return score_labels(target, labels, tolerance=tolerance, name=f"floor {name}", census=census)


def recompute_floors(target: FiberTarget, *, tolerance: float | None = None) -> dict:
    """Every floor and the oracle scored against ``target``: ``{meta.json key: metrics row}``."""
    return {key: score_floor(target, name, tolerance=tolerance) for name, key in FLOORS.items()}
