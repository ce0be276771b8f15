"""The shared component kernels (kernels.components) against brute-force oracles: the labellers
against scipy.ndimage.label, the offset sets against plain enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import ndimage

from segscore.kernels import components as C


def _random_mask(rng, shape):
    p = rng.choice([0.0, 1.0, rng.random(), rng.random() * 0.2])  # constant, any, sparse
    return rng.random(shape) < p


def _label_volume(mask, out=None):
    out = np.empty(mask.shape, np.int32) if out is None else out
    parent = np.empty(int(np.count_nonzero(mask)) + 1, np.int32)
    n = C.label_components(mask.view(np.uint8), out, parent)
    return out, n


@pytest.mark.parametrize("seed", range(40))
def test_label_components_matches_scipy_26(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(0, 9, 3))
    mask = _random_mask(rng, shape)
    want, n_want = ndimage.label(mask, structure=np.ones((3, 3, 3), bool))
    out, n = _label_volume(mask)
    assert n == n_want
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("shape", [(0, 0, 0), (0, 4, 5), (3, 0, 2), (1, 1, 1), (1, 1, 7), (6, 1, 1), (1, 5, 1)])
@pytest.mark.parametrize("fill", [False, True, "random"])
def test_label_components_empty_one_voxel_and_thin_volumes(shape, fill):
    rng = np.random.default_rng(sum(shape))
    mask = rng.random(shape) < 0.5 if fill == "random" else np.full(shape, fill)
    want, n_want = ndimage.label(mask, structure=np.ones((3, 3, 3), bool))
    out, n = _label_volume(mask)
    assert n == n_want
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("seed", range(8))
def test_label_components_on_non_contiguous_views(seed):
    rng = np.random.default_rng(100 + seed)
    big = rng.random((14, 17, 19)) < rng.random()
    mask = big[::2, ::-1, 1::3]  # strided and reversed
    store = np.full((mask.shape[0], 2 * mask.shape[1], mask.shape[2] + 3), -7, np.int32)
    out = store[:, ::2, 3:]  # a strided output: only its own voxels may change
    want, n_want = ndimage.label(mask, structure=np.ones((3, 3, 3), bool))
    _, n = _label_volume(mask, out)
    assert n == n_want
    np.testing.assert_array_equal(out, want)
    assert (store[:, 1::2] == -7).all() and (store[:, :, :3] == -7).all()


@pytest.mark.parametrize("seed", range(10))
def test_label_components_of_an_image_is_8_connected(seed):
    rng = np.random.default_rng(200 + seed)
    img = _random_mask(rng, tuple(int(v) for v in rng.integers(1, 30, 2)))
    want, n_want = ndimage.label(img, structure=np.ones((3, 3), bool))
    out, n = _label_volume(img[None])
    assert n == n_want
    np.testing.assert_array_equal(out[0], want)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("seed", range(30))
def test_label_components_by_rank_matches_scipy(rank, seed):
    """6-, 18- and 26-connected volumes (4- and 8-connected images as one slice) equal
    scipy.ndimage.label with generate_binary_structure(ndim, rank), numbering included."""
    rng = np.random.default_rng(300 + seed)
    shape = tuple(int(v) for v in rng.integers(0, 10, 3))
    if seed % 3 == 0:
        shape = (1,) + shape[1:]  # an image
    mask = _random_mask(rng, shape)
    if seed % 5 == 0 and mask.size:
        mask = mask[:, ::-1, ::2]  # non-contiguous
    out = np.empty(mask.shape, np.int32)
    parent = np.empty(int(np.count_nonzero(mask)) + 1, np.int64)
    n = C.label_components(mask.view(np.uint8), out, parent, rank)
    want, n_want = ndimage.label(mask, structure=ndimage.generate_binary_structure(3, rank))
    assert n == n_want
    np.testing.assert_array_equal(out, want)
    if shape[0] == 1 and mask.size:
        want2, _ = ndimage.label(mask[0], structure=ndimage.generate_binary_structure(2, min(rank, 2)))
        np.testing.assert_array_equal(out[0], want2)


def test_label_components_refuses_a_bad_rank():
    with pytest.raises(ValueError, match="rank"):
        C.label_components(np.ones((1, 2, 2), np.uint8), np.empty((1, 2, 2), np.int32), np.empty(5, np.int32), 0)


def test_neighbour_offsets_by_rank_are_the_scipy_structure():
    for ndim in (2, 3):
        shape = (5,) * ndim
        for rank in range(1, ndim + 1):
            offsets, lengths = C.neighbour_offsets(shape, rank)
            st = ndimage.generate_binary_structure(ndim, rank)
            st[(1,) * ndim] = False
            strides = np.array([5 ** (ndim - 1 - i) for i in range(ndim)])
            want = sorted(((np.argwhere(st) - 1) @ strides).tolist())
            assert sorted(offsets.tolist()) == want
            assert np.allclose(sorted(lengths), sorted(np.sqrt(((np.argwhere(st) - 1) ** 2).sum(1))))
        assert np.array_equal(C.neighbour_offsets(shape, ndim)[0], C.neighbour_offsets(shape)[0])


def _label_set(mask, subset=None, strided=False):
    """label_subset on ``mask`` padded and flattened (the set: ``subset`` of its voxels)."""
    pad = np.pad(mask.view(np.uint8), 1)
    member = pad.ravel().copy()
    if subset is not None:
        member[:] = 0
        member[subset] = 1
    pixels = np.flatnonzero(member).astype(np.int64)
    offsets, _ = C.neighbour_offsets(pad.shape)
    out = np.full(len(pixels), -5, np.int64)
    slot = np.empty(member.shape, np.int32)
    if strided:  # every argument a strided view
        member = np.repeat(member, 2)[::2]
        pixels = np.repeat(pixels, 2)[1::2]
        offsets = np.repeat(offsets, 3)[::3]
        slot = np.empty(2 * member.shape[0], np.int64)[::2]
        out2 = np.full(2 * len(pixels), -5, np.int64)
        n = C.label_subset(member, pixels, slot, offsets, out2[::2])
        assert (out2[1::2] == -5).all()
        return pad.shape, pixels, out2[::2], n
    n = C.label_subset(member, pixels, slot, offsets, out)
    return pad.shape, pixels, out, n


@pytest.mark.parametrize("ndim", [2, 3])
@pytest.mark.parametrize("seed", range(15))
def test_label_subset_matches_scipy(ndim, seed):
    rng = np.random.default_rng(300 + seed)
    mask = _random_mask(rng, tuple(int(v) for v in rng.integers(1, 9 if ndim == 3 else 25, ndim)))
    want, n_want = ndimage.label(mask, structure=np.ones((3,) * ndim, bool))
    pshape, pixels, out, n = _label_set(mask, strided=seed % 3 == 0)
    assert n == n_want
    coords = np.unravel_index(pixels, pshape)
    np.testing.assert_array_equal(out + 1, want[tuple(c - 1 for c in coords)])


@pytest.mark.parametrize("seed", range(10))
def test_label_subset_of_a_sparse_set_matches_scipy(seed):
    """A few voxels of a larger array (junction clusters, loops): the rest is not in the set."""
    rng = np.random.default_rng(400 + seed)
    shape = tuple(int(v) for v in rng.integers(3, 12, 3))
    mask = rng.random(shape) < 0.6
    keep = mask & (rng.random(shape) < 0.3)
    padk = np.pad(keep, 1).ravel()
    want, n_want = ndimage.label(keep, structure=np.ones((3, 3, 3), bool))
    pshape, pixels, out, n = _label_set(mask, subset=np.flatnonzero(padk))
    assert n == n_want
    coords = np.unravel_index(pixels, pshape)
    np.testing.assert_array_equal(out + 1, want[tuple(c - 1 for c in coords)])


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2)])
def test_label_subset_empty_and_one_voxel(shape):
    empty = np.zeros(shape, bool)
    _, pixels, out, n = _label_set(empty)
    assert n == 0 and len(pixels) == 0 and len(out) == 0
    one = empty.copy()
    one.flat[len(one.flat) // 2] = True
    _, pixels, out, n = _label_set(one)
    assert n == 1 and out.tolist() == [0]


def test_label_subset_needs_the_left_neighbour():
    pad = np.pad(np.ones((3, 3), np.uint8), 1)
    member = pad.ravel()
    pixels = np.flatnonzero(member).astype(np.int64)
    offsets, _ = C.neighbour_offsets(pad.shape)
    with pytest.raises(ValueError, match="-1"):
        C.label_subset(member, pixels, np.empty(member.shape, np.int64), offsets[offsets != -1],
                       np.empty(len(pixels), np.int64))


@pytest.mark.parametrize("shape", [(3, 3), (4, 5), (3, 4, 6), (5, 3, 3)])
def test_neighbour_offsets_enumerate_the_neighbours(shape):
    off, length = C.neighbour_offsets(shape)
    steps = [d for d in itertools.product((-1, 0, 1), repeat=len(shape)) if any(d)]  # lexicographic
    strides = np.array([int(np.prod(shape[i + 1:])) for i in range(len(shape))])
    assert off.tolist() == [int(np.dot(d, strides)) for d in steps]
    np.testing.assert_allclose(length, [np.sqrt(np.dot(d, d)) for d in steps])


@pytest.mark.parametrize("radius", [-1.0, 0.0, 0.3, 1.0, 1.2, np.sqrt(2), np.sqrt(3), 2.0, 2.5, np.sqrt(8), 3.7])
def test_ball_offsets_match_enumeration(radius):
    r = int(np.ceil(max(radius, 0)))
    pts = [d for d in itertools.product(range(-r, r + 1), repeat=3)
           if (d == (0, 0, 0) if radius <= 0 else np.sqrt(sum(v * v for v in d)) <= radius)]
    pts.sort(key=lambda d: (d[0] ** 2 + d[1] ** 2 + d[2] ** 2, d[2], d[1], d[0]))
    got = C.ball_offsets(radius)
    assert got.dtype == np.int64 and got.shape == (len(pts), 3)
    assert [tuple(v) for v in got.tolist()] == pts
