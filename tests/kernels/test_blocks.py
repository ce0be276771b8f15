"""The bootstrap's block kernels against brute-force NumPy oracles."""

import numpy as np
import pytest

from segscore.kernels.blocks import BOOT_BINS, block_entries, resampled_histograms

EMPTY = np.zeros((0, 0), np.int32)


def dense_oracle(levels_a, top_a, levels_b, top_b, codes, ridx, cidx, y0, x0, bp, nbx, nby, paired):
    nkeys = (4 if paired else 2) * BOOT_BINS
    out = np.zeros((nby * nbx, nkeys), np.int64)
    h, w = levels_a.shape
    ink = (codes[np.ix_(ridx, cidx)] & 1) > 0
    for i in range(h):
        for j in range(w):
            la = levels_a[i, j]
            if la < 0 or (paired and levels_b[i, j] < 0):
                continue
            b = ((y0 + i) // bp) * nbx + (x0 + j) // bp
            cls = 0 if ink[i, j] else 1
            out[b, cls * BOOT_BINS + la * 1023 // top_a] += 1
            if paired:
                out[b, (2 + cls) * BOOT_BINS + levels_b[i, j] * 1023 // top_b] += 1
    return out


def to_dense(n, ob, ok, oc, nblocks, nkeys):
    out = np.zeros((nblocks, nkeys), np.int64)
    np.add.at(out, (ob[:n], ok[:n]), oc[:n])
    return out


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("bp", [1, 3, 7, 50])
@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (9, 11), (23, 16)])
def test_block_entries_match_dense_oracle(paired, bp, shape):
    rng = np.random.default_rng(bp * 100 + shape[0])
    h, w = shape
    y0, x0 = int(rng.integers(0, 20)), int(rng.integers(0, 20))
    W = x0 + w + int(rng.integers(0, 5))
    nbx = -(-W // bp)
    nby = -(-(y0 + h) // bp)
    top_a = 255 if bp % 2 else 65535
    la = rng.integers(-1, top_a + 1, size=shape).astype(np.int32)
    lb = rng.integers(-1, 65536, size=shape).astype(np.int32) if paired else EMPTY
    codes = rng.integers(0, 4, size=(max(h, 1), max(w, 1))).astype(np.uint8)
    ridx = np.arange(h, dtype=np.int64)
    cidx = np.arange(w, dtype=np.int64)
    m = max(la.size * 2, 1)
    ob, ok, oc = np.empty(m, np.int64), np.empty(m, np.int32), np.empty(m, np.int64)
    n = block_entries(la, top_a, lb, 65535, codes, ridx, cidx, y0, x0, bp, nbx, ob, ok, oc)
    nkeys = (4 if paired else 2) * BOOT_BINS
    want = dense_oracle(la, top_a, lb, 65535, codes, ridx, cidx, y0, x0, bp, nbx, nby, paired)
    got = to_dense(n, ob, ok, oc, nby * nbx, nkeys)
    np.testing.assert_array_equal(got, want)
    # each (block, key) is emitted once per tile, and only where the count is non-zero
    assert len(set(zip(ob[:n].tolist(), ok[:n].tolist()))) == n
    assert (oc[:n] > 0).all()


def test_resampled_histograms_equal_counts_times_dense_blocks():
    rng = np.random.default_rng(9)
    B, nkeys, k = 13, 2 * BOOT_BINS, 7
    dense = np.where(rng.random((B, nkeys)) < 0.01, rng.integers(1, 50, (B, nkeys)), 0).astype(np.int64)
    dense[4] = 0  # a block with nothing is fine
    indptr = np.r_[0, np.cumsum((dense > 0).sum(1))].astype(np.int64)
    keys = np.nonzero(dense)[1].astype(np.int64)
    values = dense[dense > 0].astype(np.int64)
    counts = rng.integers(0, 4, (k, B)).astype(np.int64)
    out = resampled_histograms(counts, indptr, keys, values, np.full((k, nkeys), -5, np.int64))
    np.testing.assert_array_equal(out, counts @ dense)
