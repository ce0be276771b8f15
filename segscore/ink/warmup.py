"""The ink family's warm-up: compiles (or loads from numba's on-disk cache) the kernels of the AUC
pass, the block bootstrap and the exact ranking of target's float maps, for the dtypes maps have.
The registry (:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.ink import auc
    from segscore.ink.targets import _warm_exact  # target's float maps: the exact ranking's kernels

    rng = np.random.default_rng(0)
    ink = rng.random((8, 8)) < 0.5
    mask = np.ones((8, 8), bool)
    for dtype in (np.uint8, np.uint16, np.float32, np.float64):
        pred = (rng.random((8, 8)) * 200 + 1).astype(dtype)
        auc._score_array(pred, ink, mask, executor="synchronous")
    auc.block_bootstrap(pred, ink, mask, draws=20, block_px=4, other=pred, executor="synchronous")
    _warm_exact()
