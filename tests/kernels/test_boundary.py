"""Boundary kernels against scipy.ndimage (grey dilation/erosion, square-footprint dilation)."""

import numpy as np
import pytest
from scipy import ndimage as ndi

from segscore.kernels.boundary import boundary_mask, nearest_counts, pack_marks


def oracle_edge(m):
    return (ndi.grey_dilation(m, size=3) != ndi.grey_erosion(m, size=3)) & (m > 0)


@pytest.mark.parametrize("seed", range(30))
def test_boundary_and_tolerances_match_scipy(seed):
    rng = np.random.default_rng(seed)
    nd = 2 if seed % 3 else 3
    shape = tuple(rng.integers(1, 14 if nd == 2 else 9, nd))
    t = rng.integers(0, 3, shape).astype(np.int32)
    p = ((rng.random(shape) < 0.4) * rng.integers(0, 4, shape)).astype(np.uint64)
    t3, p3 = (t, p) if nd == 3 else (t[None], p[None])
    te, pe = np.zeros(t3.shape, np.uint8), np.zeros(p3.shape, np.uint8)
    nt, npred = boundary_mask(t3, te), boundary_mask(p3, pe)
    ot, op = oracle_edge(t), oracle_edge(p)
    np.testing.assert_array_equal(te.reshape(shape).astype(bool), ot)
    np.testing.assert_array_equal(pe.reshape(shape).astype(bool), op)
    assert (nt, npred) == (ot.sum(), op.sum())
    T = 3
    ph, th = np.zeros(T + 2, np.int64), np.zeros(T + 2, np.int64)
    C = te.shape[2]
    nearest_counts(pack_marks(pe), pack_marks(te), T, ph, 0, te.shape[0], 0, C)
    nearest_counts(pack_marks(te), pack_marks(pe), T, th, 0, te.shape[0], 0, C)
    assert ph.sum() == op.sum() and th.sum() == ot.sum()
    for tol in range(T + 1):
        fp = np.ones((2 * tol + 1,) * nd, bool)
        assert ph[:tol + 1].sum() == (op & ndi.binary_dilation(ot, structure=fp)).sum()
        assert th[:tol + 1].sum() == (ot & ndi.binary_dilation(op, structure=fp)).sum()


def test_constant_and_single_pixel():
    z = np.full((1, 5, 5), 4, np.uint8)
    out = np.zeros(z.shape, np.uint8)
    assert boundary_mask(z, out) == 0  # no neighbour differs; the image edge is not a boundary
    one = np.zeros((1, 1, 1), np.uint8)
    one[0, 0, 0] = 1
    assert boundary_mask(one, np.zeros_like(one)) == 0


@pytest.mark.parametrize("seed", range(40))
def test_nearest_counts_of_owned_rows_match_scipy(seed):
    """Counts of the owned rows only (a tile's ``lo:hi`` along axis 0 or 1), every tolerance up
    to T, against the owned part of scipy's square / cube dilations of the whole block. Rows
    of up to 200 pixels from seed 20 on: packed rows of several words, the last one partial."""
    rng = np.random.default_rng(100 + seed)
    nd = 2 if seed % 2 else 3
    shape = tuple(int(n) for n in rng.integers(1, 16 if nd == 2 else 10, nd))
    if seed >= 20:  # long rows: the words' end bits carried, the last word's spare bits masked
        shape = shape[:-1] + (int(rng.integers(60, 200)),)
    src = (rng.random(shape) < rng.uniform(0.05, 0.5)).astype(np.uint8)
    other = (rng.random(shape) < rng.uniform(0.0, 0.3)).astype(np.uint8)
    s3, o3 = (src, other) if nd == 3 else (src[None], other[None])
    axis = 0 if nd == 3 else 1
    n = s3.shape[axis]
    lo = int(rng.integers(0, n))
    hi = int(rng.integers(lo, n + 1))
    T = int(rng.integers(0, 6))
    hist = np.zeros(T + 2, np.int64)
    nearest_counts(pack_marks(s3), pack_marks(o3), T, hist, lo, hi, axis, s3.shape[2])
    owned = np.zeros(shape, bool)
    owned[lo:hi] = True
    mine = src.astype(bool) & owned
    assert hist.sum() == mine.sum()
    for tol in range(T + 1):
        near = ndi.binary_dilation(other.astype(bool), structure=np.ones((2 * tol + 1,) * nd, bool)) \
            if other.any() else np.zeros(shape, bool)
        assert hist[:tol + 1].sum() == (mine & near).sum()


@pytest.mark.parametrize("C", [1, 7, 63, 64, 65, 127, 128, 129, 200])
def test_pack_marks_against_numpy(C):
    """Bit c of a packed row is pixel c: numpy's packbits (little bit order) read as words."""
    rng = np.random.default_rng(C)
    x = (rng.random((2, 3, C)) < 0.5).astype(np.uint8)
    got = pack_marks(x)
    W = (C + 63) // 64
    assert got.shape == (2, 3, W) and got.dtype == np.uint64
    pad = np.zeros((2, 3, W * 64), np.uint8)
    pad[..., :C] = x
    want = np.packbits(pad, axis=-1, bitorder="little").view("<u8")
    np.testing.assert_array_equal(got, want)
