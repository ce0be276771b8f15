"""numba fiber kernels against brute-force NumPy/scipy references on random small inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segscore.kernels import fibers as K
from tests.fibers.helpers import grow_reference, rasterize_reference, resample_reference, runs_reference


def _lookup_all(labels, radius):
    lin = np.arange(labels.size, dtype=np.int64)
    out = np.empty(labels.size, np.int64)
    K.grow_lookup(labels, lin, K.ball_offsets(radius), out)
    return out.reshape(labels.shape)


@pytest.mark.parametrize("radius", [0.0, 1.0, 1.5, 2.0, np.sqrt(5), 3.0])
@pytest.mark.parametrize("seed", range(6))
def test_grow_lookup_matches_scipy_edt_ties_included(radius, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 13, 3))
    density = [0.005, 0.03, 0.15, 0.5][seed % 4]
    labels = ((rng.random(shape) < density) * rng.integers(1, 6, shape)).astype(np.int32)
    np.testing.assert_array_equal(_lookup_all(labels, radius), grow_reference(labels, radius))


def test_equidistant_pairs_resolved_like_scipy():
    """Every pair of equidistant voxels within radius 2 of a point: the same winner as scipy."""
    offs = [o for o in itertools.product(range(-2, 3), repeat=3) if 0 < sum(x * x for x in o) <= 4]
    for a, b in itertools.combinations(offs, 2):
        if sum(x * x for x in a) != sum(x * x for x in b):
            continue
        v = np.zeros((5, 5, 5), np.int16)
        v[tuple(2 + x for x in a)] = 1
        v[tuple(2 + x for x in b)] = 2
        assert _lookup_all(v, 2.0)[2, 2, 2] == grow_reference(v, 2.0)[2, 2, 2], (a, b)


@given(st.integers(0, 2**32 - 1), st.sampled_from([np.uint16, np.int64]))
@settings(max_examples=40, deadline=None)
def test_grow_lookup_any_dtype_and_layout(seed, dtype):
    rng = np.random.default_rng(seed)
    labels = ((rng.random((6, 7, 8)) < 0.1) * rng.integers(1, 9, (6, 7, 8))).astype(dtype)
    f = np.asfortranarray(labels)
    view = np.ascontiguousarray(np.concatenate([labels, labels], axis=2))[:, :, ::2]  # non-contiguous
    expected = grow_reference(labels.astype(np.int64), 2.0)
    np.testing.assert_array_equal(_lookup_all(f, 2.0), expected)
    np.testing.assert_array_equal(_lookup_all(view, 2.0), grow_reference(view.astype(np.int64), 2.0))


def test_ball_offsets():
    assert K.ball_offsets(0).tolist() == [[0, 0, 0]]
    assert K.ball_offsets(-1).tolist() == [[0, 0, 0]]
    assert len(K.ball_offsets(1.0)) == 7
    assert len(K.ball_offsets(2.0)) == 33
    b = K.ball_offsets(2.0)
    d2 = (b ** 2).sum(1)
    assert np.all(np.diff(d2) >= 0) and d2.max() == 4


def _samples(fibers, shape, step=0.5):
    coords = np.concatenate([c for c, _ in fibers]) if fibers else np.zeros((0, 3))
    f_off = np.concatenate([[0], np.cumsum([len(c) for c, _ in fibers])]).astype(np.int64)
    edges = np.concatenate([e + f_off[i] for i, (_, e) in enumerate(fibers)]).astype(np.int64).reshape(-1, 2)
    e_off = np.concatenate([[0], np.cumsum([len(e) for _, e in fibers])]).astype(np.int64)
    counts = np.zeros(len(fibers), np.int64)
    total = K.count_fiber_samples(coords, edges, e_off, step, counts)
    lin = np.empty(total, np.int64)
    dl = np.empty(total)
    fib = np.empty(total, np.int32)
    k = K.fill_fiber_samples(coords, edges, e_off, f_off[:-1].copy(), step, np.asarray(shape, np.int64), lin, dl, fib)
    assert k == total
    return lin, dl, fib, (coords, edges, e_off, f_off)


@pytest.mark.parametrize("seed", range(8))
def test_resampling_matches_linspace_reference(seed):
    rng = np.random.default_rng(seed)
    shape = (9, 10, 11)
    fibers = []
    for _ in range(5):
        n = int(rng.integers(1, 6))
        c = rng.integers(-2, 13, size=(n, 3)).astype(np.float64)
        if seed % 2:
            c = c + rng.choice([0.0, 0.25, 0.5, 0.75], size=c.shape)  # half-voxel ties
        e = np.array([(i, i + 1) for i in range(n - 1)] + ([(0, 0)] if n > 1 and seed % 3 == 0 else []),
                     np.int64).reshape(-1, 2)
        fibers.append((c, e))
    lin, dl, fib, _ = _samples(fibers, shape)
    exp_lin, exp_dl, exp_fib = [], [], []
    for f, (c, e) in enumerate(fibers):
        for p, d in resample_reference(c, e):
            idx = np.rint(p).astype(int)
            inside = np.all((idx >= 0) & (idx < np.asarray(shape)))
            exp_lin.append(int(np.ravel_multi_index(idx, shape)) if inside else -1)
            exp_dl.append(d)
            exp_fib.append(f)
    np.testing.assert_array_equal(lin, exp_lin)
    np.testing.assert_allclose(dl, exp_dl, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fib, exp_fib)


def test_rint_is_half_to_even():
    fibers = [(np.array([[0.0, 0.0, 0.0], [3.0, 1.0, 5.0]]), np.array([[0, 1]]))]
    lin, _, _, _ = _samples(fibers, (8, 8, 8), step=0.5)
    zyx = np.stack(np.unravel_index(lin, (8, 8, 8)), 1)
    pts = np.array([p for p, _ in resample_reference(*fibers[0])])
    np.testing.assert_array_equal(zyx, np.rint(pts).astype(int))
    assert np.any(np.abs(pts - np.floor(pts) - 0.5) < 1e-12)  # the case actually has ties


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.sampled_from([0.0, 0.5, 0.25, 1.0])),
                max_size=60))
@settings(max_examples=200, deadline=None)
def test_runs_match_reference(seq):
    fib = np.array([s[0] for s in seq], np.int32)
    order = np.argsort(fib, kind="stable")
    fib = fib[order]
    labs = np.array([seq[i][1] for i in order], np.int64)
    dl = np.array([seq[i][2] for i in order], np.float64)
    rf = np.empty(len(seq), np.int32)
    rl = np.empty(len(seq), np.int64)
    rlen = np.empty(len(seq))
    n = K.fiber_runs(fib, labs, dl, rf, rl, rlen)
    expected = []
    for f in np.unique(fib):
        sel = fib == f
        expected += [(int(f), lab, ln) for lab, ln in runs_reference(labs[sel].tolist(), dl[sel].tolist())]
    got = [(int(a), int(b), float(c)) for a, b, c in zip(rf[:n], rl[:n], rlen[:n])]
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in expected]
    np.testing.assert_allclose([c for *_, c in got], [c for *_, c in expected])


@pytest.mark.parametrize("radius", [0.0, 1.0, 2.0, 2.5])
@pytest.mark.parametrize("seed", range(4))
def test_count_labelled_near_matches_edt(radius, seed):
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    shape = (7, 9, 6)
    gt = rng.random(shape) < 0.03
    gt.flat[0] = True
    labels = ((rng.random(shape) < 0.3) * rng.integers(1, 4, shape)).astype(np.uint16)
    near = ndimage.distance_transform_edt(~gt) <= radius if radius > 0 else gt
    bits = np.zeros((gt.size + 7) // 8, np.uint8)
    lin = np.flatnonzero(gt).astype(np.int64)
    hits, n_near = K.count_labelled_near(labels, np.concatenate([lin, lin]), K.ball_offsets(radius), bits)
    assert n_near == near.sum()
    assert hits == (near & (labels > 0)).sum()


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_label_stats_and_census(seed):
    from segscore.fibers.score import label_census

    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 6, 3))
    labels = ((rng.random(shape) < rng.random()) * rng.integers(0, 1 << 40, shape)).astype(np.int64)
    count, lo, hi = K.label_stats(labels)
    assert (count, lo, hi) == ((labels != 0).sum(), labels.min(), labels.max())
    assert label_census(labels) == ((labels != 0).sum(), len(set(labels.ravel().tolist()) - {0}))
    small = labels % 7
    assert label_census(small) == ((small != 0).sum(), len(set(small.ravel().tolist()) - {0}))
    u = small.astype(np.uint64)
    from segscore.fibers.score import as_label_array

    assert label_census(as_label_array(u, u.shape)) == label_census(small)


def test_uint64_ids_beyond_int64_refused():
    from segscore.errors import ScoreError
    from segscore.fibers.score import as_label_array, label_census

    u = np.zeros((2, 2, 2), np.uint64)
    u[0, 0, 0] = 2**63 + 5
    with pytest.raises(ScoreError, match="2\\*\\*63"):
        label_census(as_label_array(u, u.shape))


def test_rank_labels_and_random_floor():
    from segscore.fibers import floors

    rng = np.random.default_rng(3)
    mask = rng.random((5, 6, 7)) < 0.3
    vox = floors.voxel_instances(mask)
    expected = np.zeros(mask.shape, np.int32)
    expected[mask] = np.arange(1, mask.sum() + 1)
    np.testing.assert_array_equal(vox, expected)
    ran = floors.random_instances(mask)
    expected[mask] = np.random.default_rng(0).integers(1, 51, size=int(mask.sum()), dtype=np.int32)
    np.testing.assert_array_equal(ran, expected)
    assert K.label_stats(np.zeros((0, 3, 3), np.int32))[0] == 0


@pytest.mark.parametrize("seed", range(5))
def test_rasterize_and_grow_match_reference(seed):
    from tests.fibers.helpers import random_fibers

    rng = np.random.default_rng(seed)
    shape = (10, 11, 12)
    fibers = random_fibers(rng, shape, 6)
    fibers.append((np.array([[2.0, 2.0, 2.0], [2.0, 5.0, 5.0]]), np.zeros((0, 2), np.int64)))  # no edges
    _, _, _, (coords, edges, e_off, f_off) = _samples(fibers, shape)
    out = np.zeros(shape, np.int32)
    K.rasterize_fibers(coords, edges, e_off, f_off[:-1].copy(), f_off[1:].copy(), out)
    ref = rasterize_reference(fibers, shape)
    np.testing.assert_array_equal(out, ref)
    for radius in (1.0, 2.0):
        grown = out.copy()
        seeds = np.flatnonzero(grown).astype(np.int64)
        off = K.ball_offsets(radius)
        m = len(seeds) * len(off)
        K.grow_volume(grown, seeds, off, np.empty(m, np.int64), np.empty(m, np.int32))
        np.testing.assert_array_equal(grown, grow_reference(ref, radius))


@pytest.mark.parametrize("seed", range(10))
def test_components26_equal_scipy_label(seed):
    from scipy import ndimage

    from segscore.fibers.floors import connected_components

    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 14, 3))
    mask = rng.random(shape) < [0.05, 0.2, 0.35, 0.6, 1.0][seed % 5]
    expected, n = ndimage.label(mask, structure=np.ones((3, 3, 3), bool))
    np.testing.assert_array_equal(connected_components(mask), expected)


@pytest.mark.parametrize("shape", [(1, 1, 1), (0, 4, 4), (1, 1, 9), (3, 1, 1)])
@pytest.mark.parametrize("fill", [0, 1])
def test_kernels_on_tiny_and_constant_volumes(shape, fill):
    from segscore.fibers.floors import connected_components, voxel_instances
    from segscore.fibers.score import label_census

    labels = np.full(shape, fill, np.int32)
    size = labels.size
    assert label_census(labels) == (size * fill, 1 if (fill and size) else 0)
    np.testing.assert_array_equal(connected_components(labels.astype(bool)), labels)
    assert voxel_instances(labels.astype(bool)).sum() == (size * (size + 1) // 2 if fill else 0)
    if size:
        got = _lookup_all(labels, 2.0)
        np.testing.assert_array_equal(got, grow_reference(labels, 2.0))


def test_floor_census_shortcuts_equal_a_full_count():
    from segscore.fibers import floors
    from segscore.fibers.score import label_census

    mask = np.random.default_rng(5).random((9, 10, 11)) < 0.3
    for make in (floors._single, floors._voxel, floors._random, floors._components):
        labels, census = make(mask)
        assert census == label_census(labels), make.__name__


@pytest.mark.parametrize("tile_rows", [1, 3, 7, None])
def test_the_precision_pass_adds_up_over_slabs(tile_rows):
    from segscore.fibers.score import labelled_near

    rng = np.random.default_rng(5)
    labels = (rng.random((13, 11, 9)) < 0.3) * rng.integers(1, 5, (13, 11, 9))
    voxels = np.unique(rng.integers(0, labels.size, 40))
    ball = K.ball_offsets(2.5)
    bits = np.zeros((labels.size + 7) // 8, np.uint8)
    want, _ = K.count_labelled_near(labels, voxels, ball, bits)
    assert labelled_near(labels, voxels, ball, tile_rows=tile_rows, threads=2) == want
