"""Betti matching of 2D images (dimension 1 by union-find on the dual) against the 3D path
(the column reduction of the one-voxel-thick volume, itself pinned to Betti-Matching-3D by
test_betti_matching.py): every pair, every match, in the same order; and the tie rule of the
dual stated on a worked example."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.metrics.betti import _match_3d, _ranks, betti_matching


def _via_3d(a, b):
    """The 3D path's dimensions for a 2D pair (what ``betti_matching`` computed before)."""
    a3, b3 = np.asarray(a)[None], np.asarray(b)[None]
    r0, r1, nvals = _ranks(a3, b3)
    return _match_3d(r0, r1, a3.shape, nvals, 1)


def _pairs():
    rng = np.random.default_rng(36)
    out = [
        (np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8)),  # one pixel
        (np.ones((4, 5), np.uint8), np.ones((4, 5), np.uint8)),  # constant
        (np.zeros((1, 9), np.uint8), (rng.random((1, 9)) < 0.5).astype(np.uint8)),  # one row
        (np.full((6, 6), 2.5), rng.random((6, 6))),  # constant against floats
    ]
    for _ in range(10):  # binary, as curve and the topology score pass them
        shape = tuple(int(s) for s in rng.integers(2, 24, 2))
        p = rng.uniform(0.2, 0.8)
        out.append(((rng.random(shape) < p).astype(np.uint8), (rng.random(shape) < p).astype(np.uint8)))
    for levels in (3, 7, 50):  # ties across and within images
        shape = tuple(int(s) for s in rng.integers(3, 20, 2))
        out.append((rng.integers(0, levels, shape), rng.integers(0, levels, shape)))
    out.append((rng.random((15, 11)), rng.random((15, 11))))  # distinct floats
    big = (rng.random((40, 60)) < 0.45).astype(np.uint8)
    out.append((big[::2, ::3], np.ascontiguousarray(big[1::2, 1::3])))  # non-contiguous
    out.append((big.T, big.T[::-1]))
    return out


PAIRS = _pairs()


@pytest.mark.parametrize("k", range(len(PAIRS)))
def test_2d_path_equals_3d_path(k):
    a, b = PAIRS[k]
    got = betti_matching(a, b)
    want = _via_3d(a, b)
    assert got.shape == np.asarray(a).shape
    for d in range(3):
        G, W = got.dims[d], want[d]
        for name in ("birth0", "death0", "birth1", "death1", "matched0", "matched1"):
            x, y = getattr(G, name), getattr(W, name)
            assert x.dtype == y.dtype == np.int64, name
            assert x.shape == y.shape and (x == y).all(), (d, name)
    assert all(getattr(got.dims[2], n).shape[0] == 0 for n in ("birth0", "birth1", "matched0"))


def test_2d_path_has_pairs_to_compare():
    total = {d: 0 for d in (0, 1)}
    matched = {d: 0 for d in (0, 1)}
    for a, b in PAIRS:
        m = betti_matching(a, b)
        for d in (0, 1):
            total[d] += m.dims[d].n_pairs0 + m.dims[d].n_pairs1
            matched[d] += m.dims[d].n_matched
    assert min(total.values()) > 50 and min(matched.values()) > 10, (total, matched)


def test_a_one_voxel_thick_volume_is_matched_in_2d():
    rng = np.random.default_rng(5)
    a, b = (rng.random((1, 13, 17)) < 0.5).astype(np.uint8), (rng.random((1, 13, 17)) < 0.5).astype(np.uint8)
    m2, m3 = betti_matching(a, b), _via_3d(a[0], b[0])
    assert m2.shape == (1, 13, 17)
    for d in range(3):
        assert (m2.dims[d].death0 == m3[d].death0).all() and (m2.dims[d].matched1 == m3[d].matched1).all()


def test_tie_rule_of_the_dual_the_highest_square_of_a_hole_survives_longest():
    # a foreground ring (0: enters first) round a hole of two background pixels (2, 2) and
    # (2, 3): the hole is born at the ring's last edge in (value, index) order, (3, 3)-(3, 4),
    # and dies at the square holding the hole's highest (value, index) square, the one at
    # (2, 3) (among the hole's equal squares the lower index dies first in the dual, so the
    # last one standing ends the hole); its voxel of maximal value is (2, 3)
    x = np.ones((5, 6), np.uint8)
    x[1:4, 1:5] = 0
    x[2, 2:4] = 1
    m = betti_matching(x, x)
    d1 = m.dims[1]
    assert d1.birth0.tolist() == [[0, 3, 4]] and d1.death0.tolist() == [[0, 2, 3]]
    assert d1.n_matched == 1
    # dimension 0: the two components born together, the lowest C-order pixel's survives
    y = np.ones((3, 5), np.uint8)
    y[1, 1] = y[1, 3] = 0
    assert betti_matching(y, y).dims[0].birth0.tolist() == [[0, 1, 3]]


@pytest.mark.parametrize("shape", [(23, 31), (7, 9, 8)])
def test_threads_do_not_change_the_matching(shape):
    rng = np.random.default_rng(11)
    a, b = (rng.random(shape) < 0.5).astype(np.uint8), rng.integers(0, 5, shape)
    one, two = betti_matching(a, b), betti_matching(a, b, threads=2)
    for d in range(3):
        for name in ("birth0", "death0", "birth1", "death1", "matched0", "matched1"):
            assert (getattr(one.dims[d], name) == getattr(two.dims[d], name)).all(), (d, name)
    assert one.dims[0].n_pairs0 > 0
