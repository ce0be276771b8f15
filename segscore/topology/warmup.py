"""The topology family's warm-up: the surface-detection score (Betti matching, surface Dice,
VOI) on a tiny cube, in memory and streamed from files window by window (the path a cluster's
workers and ``--tile-rows`` take: the per-window counts and the blockwise components). The registry
(:mod:`segscore.families`) points at :func:`warm`.

:data:`FIRST_RUN` divides ``surfaces``' first run between two processes
(:mod:`segscore.engine.firstrun`): the other process compiles the Betti matching's top
dimensions (a tile's dual pairs and its dimension-1 column reduction) while this one compiles the
VOI, the surface Dice and the matching's dimension 0.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from segscore.engine.firstrun import Plan


def _cube():
    g = np.zeros((6, 6, 6), np.uint8)
    g[1:5, 1:5, 2] = 1
    p = g.copy()
    p[2, 2, 2] = 0
    return g, p


def warm() -> None:
    from segscore.topology.score import surfaces

    g, p = _cube()
    surfaces_in_memory()
    with tempfile.TemporaryDirectory(prefix="segscore-warm-") as d:
        np.save(Path(d) / "g.npy", g)
        np.save(Path(d) / "p.npy", p)
        surfaces(truth=Path(d) / "g.npy", pred=Path(d) / "p.npy", topo_tiles=(1, 1, 1), tile_rows=2)


def surfaces_in_memory() -> None:
    """What ``surfaces`` compiles on arrays and files it holds in memory."""
    from segscore.topology.score import surfaces

    g, p = _cube()
    surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))


def comparison_pairs() -> None:
    """The Betti matching's kernels of a tile's comparison image, called as the matching calls them:
    its cubes' values, its faces in order, their dual pairs and the dimension-1 reduction."""
    from segscore.kernels import betti as K
    from segscore.metrics.betti import _NONE, _ranks

    g, p = _cube()
    r0, r1, nvals = _ranks(1 - p, 1 - g)
    nx, ny, nz = g.shape
    rc = np.minimum(r0, r1)
    cval_c = K._cube_values(rc, nx, ny, nz)
    faces = K.sorted_cells(rc, nx, ny, nz, 2, nvals)
    keep = np.empty(faces.shape[0], np.bool_)
    K.dual_pairs(faces, rc, cval_c, cval_c, nx, ny, nz, False, False, keep)
    K.reduce_dim1(faces, keep, rc, ny, nz, True, _NONE, _NONE)


def betti_dim0() -> None:
    """The Betti matching's dimension-0 kernels, called as the matching calls them: each input's
    union-find over its edges, the comparison's matching and the cells' voxels."""
    from segscore.kernels import betti as K
    from segscore.metrics.betti import _match_dim0, _ranks

    g, p = _cube()
    r0, r1, nvals = _ranks(1 - p, 1 - g)
    nx, ny, nz = g.shape
    rc = np.minimum(r0, r1)
    edges = K.sorted_cells(rc, nx, ny, nz, 1, nvals)
    _, v0, e0 = K.uf_pairs(edges, r0, nx, ny, nz)
    _match_dim0(K, edges, rc, r0, r1, g.shape, [v0, v0])
    K.cell_voxels(r0, nx, ny, nz, 0, v0.astype(np.int64), np.empty(v0.shape[0], np.int64))


def voi() -> None:
    from segscore.topology.score import voi

    g, p = _cube()
    voi(p.astype(bool), g.astype(bool))


def surface_dice() -> None:
    from segscore.topology.surface import corner_grid, surface_dice_of_codes

    g, p = _cube()
    surface_dice_of_codes(corner_grid(g.astype(bool)), corner_grid(p.astype(bool)), tolerance=2.0)


_HERE = "segscore.topology.warmup:"
#: each command's first run, divided between two processes (:mod:`segscore.engine.firstrun`; each
#: side about half of the compile seconds, measured per part)
FIRST_RUN = {
    "surfaces": Plan(prelude=(), here=(_HERE + "voi", _HERE + "surface_dice", _HERE + "betti_dim0"),
                     there=(_HERE + "comparison_pairs",), then=(_HERE + "surfaces_in_memory",)),
}
