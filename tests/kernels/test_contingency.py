"""The contingency kernel against np.unique on (truth, pred) pairs."""

import numpy as np
import pytest

from segscore.kernels.contingency import contingency, merge_tables


def oracle(t, p):
    t = t.reshape(-1).astype(np.uint64)
    p = p.reshape(-1).astype(np.uint64)
    ti, ta = np.unique(t[t > 0], return_counts=True)
    pi, pa = np.unique(p[p > 0], return_counts=True)
    both = (t > 0) & (p > 0)
    if both.any():
        pairs, pn = np.unique(np.stack([t[both], p[both]], 1), axis=0, return_counts=True)
    else:
        pairs, pn = np.zeros((0, 2), np.uint64), np.zeros(0, np.int64)
    return ti, ta, pi, pa, pairs, pn


def check(t, p, table=None):
    r = contingency(t, p) if table is None else table
    o = oracle(t, p)
    np.testing.assert_array_equal(r[0], o[0])
    np.testing.assert_array_equal(r[1], o[1])
    np.testing.assert_array_equal(r[2], o[2])
    np.testing.assert_array_equal(r[3], o[3])
    got = np.stack([r[0][r[4]], r[2][r[5]]], 1).reshape(-1, 2)
    np.testing.assert_array_equal(got, o[4])
    np.testing.assert_array_equal(r[6], o[5])
    # each id's first pixel: its smallest flat index in C order
    flat_t, flat_p = np.ravel(t).astype(np.uint64), np.ravel(p).astype(np.uint64)
    np.testing.assert_array_equal(r[7], [np.flatnonzero(flat_t == i)[0] for i in o[0]])
    np.testing.assert_array_equal(r[8], [np.flatnonzero(flat_p == i)[0] for i in o[2]])
    assert r[0].dtype == np.uint64 and r[1].dtype == np.int64 and r[6].dtype == np.int64


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_random_label_images(seed, ndim):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 14, ndim))
    t = rng.integers(0, 9, shape).astype(np.uint16)
    p = rng.integers(0, 12, shape).astype(np.int64)
    check(t, p)


def test_many_ids_grow_the_tables():
    rng = np.random.default_rng(3)
    t = rng.integers(0, 5000, (120, 130)).astype(np.uint32)
    p = rng.integers(0, 7000, (120, 130)).astype(np.uint32)
    check(t, p)


@pytest.mark.parametrize("case", ["empty", "zeros", "one", "single_object", "huge_ids", "constant"])
def test_edge_cases(case):
    if case == "empty":
        t = p = np.zeros((0, 5), np.int32)
    elif case == "zeros":
        t = p = np.zeros((6, 7), np.uint8)
    elif case == "one":
        t, p = np.array([[3]], np.uint8), np.array([[0]], np.uint8)
    elif case == "single_object":
        t = np.zeros((9, 9), np.int32)
        t[2:6, 3:7] = 17
        p = np.roll(t, 1, axis=0)
    elif case == "huge_ids":
        t = np.array([[0, 2 ** 64 - 1, 2 ** 63], [2 ** 40, 2 ** 64 - 1, 1]], dtype=np.uint64)
        p = np.array([[2 ** 63 + 5, 2 ** 64 - 2, 0], [2 ** 64 - 2, 7, 1]], dtype=np.uint64)
    else:
        t = np.full((5, 4), 9, np.int16)
        p = np.full((5, 4), 2 ** 15 - 1, np.int16)
    check(t, p)


def test_non_contiguous_input():
    rng = np.random.default_rng(5)
    t = rng.integers(0, 6, (20, 30)).astype(np.int32)[::2, ::3]
    p = rng.integers(0, 6, (30, 20)).astype(np.int32).T[::2, ::3]
    check(t, p)


@pytest.mark.parametrize("rows", [1, 3, 7])
def test_additive_over_tiles(rows):
    rng = np.random.default_rng(rows)
    t = rng.integers(0, 15, (23, 17)).astype(np.uint32)
    p = rng.integers(0, 15, (23, 17)).astype(np.uint32)
    tiles = [contingency(t[i:i + rows], p[i:i + rows], offset=i * 17) for i in range(0, 23, rows)]
    check(t, p, merge_tables(tiles))
    for a, b in zip(merge_tables(tiles), contingency(t, p)):
        np.testing.assert_array_equal(a, b)
