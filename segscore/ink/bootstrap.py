"""Block bootstrap of the AUC from sparse block histograms.

The draws are exactly these, so a seed gives the same interval in any tool that follows
them: ``B`` = the blocks holding scored pixels, in raster order of the block grid that
starts at the map's pixel (0, 0); ``rng = numpy.random.default_rng(seed)``; draw ``d`` is
``counts = np.bincount(rng.integers(0, B, B), minlength=B)`` and its AUC is computed from
``counts @ block_histograms`` on 1,024 bins; the interval is
``np.percentile(draws, [2.5, 97.5])``.
"""

from __future__ import annotations

import numpy as np

from segscore.ink.scan import BlockTable
from segscore.kernels.blocks import BOOT_BINS

#: bytes of draw counts to hold at once (a batch of draws runs in parallel)
_BATCH_BYTES = 64 << 20


def auc_of_histograms(ink: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """Exact AUC (ties half) of each row of ``ink`` against the same row of ``bg``; NaN if empty."""
    from segscore.kernels.levels import auc_rows

    ink = np.ascontiguousarray(np.atleast_2d(ink), dtype=np.int64)
    bg = np.ascontiguousarray(np.atleast_2d(bg), dtype=np.int64)
    return auc_rows(ink, bg, np.empty(ink.shape[0], np.float64))


def resample(table: BlockTable, draws: int, seed: int, paired: bool):
    """AUCs of ``draws`` block resamples: ``(map_aucs, other_aucs or None)``."""
    from segscore.kernels.blocks import resampled_histograms

    B = table.n_blocks
    rng = np.random.default_rng(seed)
    batch = int(max(1, min(64, _BATCH_BYTES // max(8 * B, 1))))
    out_map = np.empty(draws, np.float64)
    out_other = np.empty(draws, np.float64) if paired else None
    done = 0
    while done < draws:
        k = min(batch, draws - done)
        counts = np.empty((k, B), np.int64)
        for d in range(k):
            counts[d] = np.bincount(rng.integers(0, B, B), minlength=B)
        hist = resampled_histograms(counts, table.indptr, table.keys, table.values,
                                    np.empty((k, table.n_keys), np.int64))
        out_map[done:done + k] = auc_of_histograms(hist[:, :BOOT_BINS], hist[:, BOOT_BINS:2 * BOOT_BINS])
        if paired:
            out_other[done:done + k] = auc_of_histograms(hist[:, 2 * BOOT_BINS:3 * BOOT_BINS],
                                                         hist[:, 3 * BOOT_BINS:])
        done += k
    return out_map, out_other


def interval(values: np.ndarray) -> tuple[float, float]:
    """The 2.5 and 97.5 percentiles (NumPy's default linear rule), ignoring undefined draws."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return float(lo), float(hi)
