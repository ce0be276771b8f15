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
from segscore.metrics.ranking import auc_batch

#: kept for ``segscore.ink.auc`` and the tests: the exact AUC (ties half) of each row of ``ink``
#: against the same row of ``bg``, NaN where a class is empty
auc_of_histograms = auc_batch

#: bytes of draw counts to hold at once (a batch of draws runs in parallel)
_BATCH_BYTES = 64 << 20


def resample(table: BlockTable, draws: int, seed: int, paired: bool):
    """AUCs of ``draws`` block resamples: ``(map_aucs, other_aucs or None)``.

    ``counts @ block_histograms`` is one float64 matrix product per batch of draws. Every
    operand and partial sum is an integer far below 2**53, so the product is exact whatever
    order BLAS adds in, and the result does not depend on its threads.
    """
    B = table.n_blocks
    rng = np.random.default_rng(seed)
    used = np.flatnonzero(np.bincount(table.keys, minlength=table.n_keys))
    column = np.zeros(table.n_keys, np.int64)
    column[used] = np.arange(used.size)
    K = max(int(used.size), 1)
    chunks = _dense_chunks(table, column, K)
    batch = int(max(1, min(draws, _BATCH_BYTES // max(8 * B, 1))))
    out_map = np.empty(draws, np.float64)
    out_other = np.empty(draws, np.float64) if paired else None
    done = 0
    while done < draws:
        k = min(batch, draws - done)
        counts = np.empty((k, B), np.float64)
        for d in range(k):
            counts[d] = np.bincount(rng.integers(0, B, B), minlength=B)
        dense = np.zeros((k, K), np.float64)
        for b0, b1, part in chunks():
            dense += counts[:, b0:b1] @ part
        hist = np.zeros((k, table.n_keys), np.int64)
        hist[:, used] = np.rint(dense).astype(np.int64)
        out_map[done:done + k] = auc_batch(hist[:, :BOOT_BINS], hist[:, BOOT_BINS:2 * BOOT_BINS])
        if paired:
            out_other[done:done + k] = auc_batch(hist[:, 2 * BOOT_BINS:3 * BOOT_BINS], hist[:, 3 * BOOT_BINS:])
        done += k
    return out_map, out_other


def _dense_chunks(table: BlockTable, column: np.ndarray, K: int):
    """A callable yielding ``(b0, b1, H[b0:b1])``: the block histograms as dense float64 rows.

    When they fit in ``_BATCH_BYTES`` they are built once; otherwise they are rebuilt, chunk
    by chunk, for every batch of draws, so memory stays bounded for any number of blocks.
    """
    from segscore.kernels.blocks import dense_blocks

    B = table.n_blocks
    step = int(max(1, _BATCH_BYTES // (8 * K)))

    def build(b0, b1):
        return dense_blocks(table.rows, table.keys, table.values, column, b0, np.zeros((b1 - b0, K), np.float64))

    if step >= B:
        whole = [(0, B, build(0, B))]
        return lambda: iter(whole)
    return lambda: ((b0, min(b0 + step, B), build(b0, min(b0 + step, B))) for b0 in range(0, B, step))


def interval(values: np.ndarray) -> tuple[float, float]:
    """The 2.5 and 97.5 percentiles (NumPy's default linear rule), ignoring undefined draws."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return float(lo), float(hi)
