"""Boundary kernels against scipy.ndimage (grey dilation/erosion, square-footprint dilation)."""

import numpy as np
import pytest
from scipy import ndimage as ndi

from segscore.kernels.boundary import boundary_mask, nearest_counts


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
    nearest_counts(pe, te, T, ph, 0, te.shape[0], 0)
    nearest_counts(te, pe, T, th, 0, te.shape[0], 0)
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


@pytest.mark.parametrize("seed", range(20))
def test_nearest_counts_of_owned_rows_match_scipy(seed):
    """Counts of the owned rows only (a tile's ``lo:hi`` along axis 0 or 1), every tolerance up
    to T, against the owned part of scipy's square / cube dilations of the whole block."""
    from segscore.kernels.boundary import nearest_counts

    rng = np.random.default_rng(100 + seed)
    nd = 2 if seed % 2 else 3
    shape = tuple(int(n) for n in rng.integers(1, 16 if nd == 2 else 10, nd))
    src = (rng.random(shape) < rng.uniform(0.05, 0.5)).astype(np.uint8)
    other = (rng.random(shape) < rng.uniform(0.0, 0.3)).astype(np.uint8)
    s3, o3 = (src, other) if nd == 3 else (src[None], other[None])
    axis = 0 if nd == 3 else 1
    n = s3.shape[axis]
    lo = int(rng.integers(0, n))
    hi = int(rng.integers(lo, n + 1))
    T = int(rng.integers(0, 6))
    hist = np.zeros(T + 2, np.int64)
    nearest_counts(s3, o3, T, hist, lo, hi, axis)
    owned = np.zeros(shape, bool)
    owned[lo:hi] = True
    mine = src.astype(bool) & owned
    assert hist.sum() == mine.sum()
    for tol in range(T + 1):
        near = ndi.binary_dilation(other.astype(bool), structure=np.ones((2 * tol + 1,) * nd, bool)) \
            if other.any() else np.zeros(shape, bool)
        assert hist[:tol + 1].sum() == (mine & near).sum()
