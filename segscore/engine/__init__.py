"""The engine: sources that read windows, tile plans, and executors that add reductions up.

``warm()`` compiles (or loads from the on-disk cache) the kernels a scorer will use, in this
process. Call it once before fanning work out to dask workers, so several processes never
build the same numba cache at once (numba #4807).
"""

from __future__ import annotations


def warm(families=("ink",)) -> None:
    """Compile or load the kernels of ``families`` for the dtypes maps usually have."""
    import numpy as np

    if "ink" in families:
        from segscore.ink import auc

        rng = np.random.default_rng(0)
        ink = rng.random((8, 8)) < 0.5
        mask = np.ones((8, 8), bool)
        for dtype in (np.uint8, np.uint16, np.float32, np.float64):
            pred = (rng.random((8, 8)) * 200 + 1).astype(dtype)
            auc.score_array(pred, ink, mask, executor="synchronous")
        auc.block_bootstrap(pred, ink, mask, draws=20, block_px=4, other=pred, executor="synchronous")
