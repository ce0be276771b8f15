"""The topology family's warm-up: the surface-detection score (Betti matching, surface Dice,
VOI) on a tiny cube, in memory and streamed from files window by window (the path a cluster's
workers and ``--tile-rows`` take: the per-window counts and the blockwise components). The registry
(:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np


def warm() -> None:
    from segscore.topology.score import surfaces

    g = np.zeros((6, 6, 6), np.uint8)
    g[1:5, 1:5, 2] = 1
    p = g.copy()
    p[2, 2, 2] = 0
    surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))
    with tempfile.TemporaryDirectory(prefix="segscore-warm-") as d:
        np.save(Path(d) / "g.npy", g)
        np.save(Path(d) / "p.npy", p)
        surfaces(truth=Path(d) / "g.npy", pred=Path(d) / "p.npy", topo_tiles=(1, 1, 1), tile_rows=2)
