"""Boundary kernels against scipy.ndimage (grey dilation/erosion, square-footprint dilation)."""

import numpy as np
import pytest
from scipy import ndimage as ndi

from segscore.kernels.boundary import boundary_distance_counts, boundary_mask


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
    boundary_distance_counts(te, pe, T, ph, th)
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
