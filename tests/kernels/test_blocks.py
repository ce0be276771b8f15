"""The bootstrap's block kernels against brute-force NumPy oracles."""

import numpy as np
import pytest

from segscore.ink.scan import max_block_entries
from segscore.kernels.blocks import BOOT_BINS, block_entries, dense_blocks

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
    ob, ok, oc = np.empty(m, np.int64), np.empty(m, np.int16), np.empty(m, np.int64)
    n = block_entries(la, top_a, lb, 65535, codes, ridx, cidx, y0, x0, bp, nbx, ob, ok, oc)
    nkeys = (4 if paired else 2) * BOOT_BINS
    want = dense_oracle(la, top_a, lb, 65535, codes, ridx, cidx, y0, x0, bp, nbx, nby, paired)
    got = to_dense(n, ob, ok, oc, nby * nbx, nkeys)
    np.testing.assert_array_equal(got, want)
    # each (block, key) is emitted once per tile, and only where the count is non-zero
    assert len(set(zip(ob[:n].tolist(), ok[:n].tolist()))) == n
    assert (oc[:n] > 0).all()
    # the scan sizes its buffers by this bound
    window = (slice(y0, y0 + h), slice(x0, x0 + w))
    assert n <= max_block_entries(window, bp, paired, top_a, 65535)


def test_dense_blocks_adds_entries_of_its_chunk_only():
    rng = np.random.default_rng(3)
    n, B, nkeys = 500, 17, 2 * BOOT_BINS
    rows = rng.integers(0, B, n).astype(np.int64)
    keys = rng.integers(0, nkeys, n).astype(np.int16)
    values = rng.integers(1, 1000, n).astype(np.int64)
    used = np.unique(keys)
    column = np.zeros(nkeys, np.int64)
    column[used] = np.arange(used.size)
    want = np.zeros((B, used.size), np.int64)
    np.add.at(want, (rows, column[keys]), values)
    for b0, b1 in [(0, B), (0, 5), (5, 12), (12, B)]:
        got = dense_blocks(rows, keys, values, column, b0, np.zeros((b1 - b0, used.size)))
        np.testing.assert_array_equal(got, want[b0:b1])
