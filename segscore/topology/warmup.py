"""The topology family's warm-up: the surface-detection score (Betti matching, surface Dice,
VOI) on a tiny cube. The registry (:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.topology.score import surfaces

    g = np.zeros((6, 6, 6), np.uint8)
    g[1:5, 1:5, 2] = 1
    p = g.copy()
    p[2, 2, 2] = 0
    surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))
