"""The block-joining kernels (kernels.blocklabel) against brute-force NumPy oracles on random inputs:
each label's first voxel and class, the face pairs of two slabs, the union-find over a pair table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from segscore.kernels import blocklabel as K


def _random_labels(rng, shape, n):
    return (rng.integers(0, n + 1, shape) * (rng.random(shape) < rng.choice([0.0, 0.5, 1.0]))).astype(np.int32)


@pytest.mark.parametrize("seed", range(30))
def test_block_summary_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(0, 7, 3))
    image = tuple(int(s + v) for s, v in zip(shape, rng.integers(0, 5, 3)))
    origin = np.asarray([int(rng.integers(0, i - s + 1)) for i, s in zip(image, shape)], np.int64)
    lab = _random_labels(rng, shape, 5)
    values = (lab * 7 % 3 + 1).astype(np.uint8)  # one class per label
    # non-contiguous inputs: every other plane of a doubled array
    lab2 = np.repeat(lab, 2, axis=2)[:, :, ::2]
    first = np.full(6, -1, np.int64)
    cls = np.zeros(6, np.uint64)
    K.block_summary(lab2, values, origin, np.asarray(image, np.int64), first, cls)
    for v in range(1, 6):
        where = np.argwhere(lab == v)
        if not len(where):
            assert first[v] == -1
            continue
        g = np.ravel_multi_index(tuple((where + origin).T), image)
        assert first[v] == g.min()  # the first voxel in C order of the whole image
        assert cls[v] == values[tuple(where[0])]


def _oracle_pairs(la, va, lb, vb, offsets):
    out = set()
    for p in itertools.product(*map(range, la.shape)):
        for d in offsets:
            q = tuple(np.add(p, d))
            if all(0 <= x < n for x, n in zip(q, la.shape)) and la[p] and lb[q] and va[p] == vb[q]:
                out.add((int(la[p]), int(lb[q])))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([(1, 1, 1), (1, 4, 5), (3, 1, 6), (2, 7, 1), (0, 3, 3)]))
def test_face_pairs_match_brute_force(seed, shape):
    rng = np.random.default_rng(seed)
    la, lb = _random_labels(rng, shape, 4), _random_labels(rng, shape, 4)
    va, vb = rng.integers(1, 3, shape).astype(np.uint8), rng.integers(1, 3, shape).astype(np.uint8)
    offsets = np.asarray([d for d in itertools.product((-1, 0, 1), repeat=3) if rng.random() < 0.5], np.int64)
    offsets = offsets.reshape(-1, 3)
    pa = np.empty(la.size * len(offsets), np.int64)
    pb = np.empty_like(pa)
    k = K.face_pairs(la, va, lb, vb, offsets, pa, pb)
    got = set(zip(pa[:k].tolist(), pb[:k].tolist()))
    assert got == _oracle_pairs(la, va, lb, vb, offsets)


@pytest.mark.parametrize("seed", range(20))
def test_join_pairs_matches_scipy_connected_components(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 2 * n))
    a, b = rng.integers(0, n, m).astype(np.int64), rng.integers(0, n, m).astype(np.int64)
    parent = np.arange(n, dtype=np.int64)
    K.join_pairs(parent, a, b)
    root = np.empty(n, np.int64)
    K.roots(parent, root)
    _, want = connected_components(coo_matrix((np.ones(m), (a, b)), shape=(n, n)), directed=False)
    # the same partition, and each root the smallest member of its set
    for i in range(n):
        members = np.flatnonzero(want == want[i])
        assert root[i] == members.min()
