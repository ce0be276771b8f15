"""The two steps of ``segscore.kernels.surface.nearest_distances`` (the ball probes, then the k-d
tree for the queries they leave) against a brute-force NumPy oracle: the split that lets a first
run skip compiling the tree must give the distances the one kernel gave."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels.surface import REACH, nearest_distances, nearest_probe, nearest_with, ball


def _oracle(pts, queries, spacing):
    d = (queries[:, None, :].astype(np.float64) - pts[None, :, :]) * spacing
    return np.sqrt((d * d).sum(axis=2).min(axis=1))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("planar", [False, True])
def test_probe_then_tree_equals_brute_force(seed, planar):
    rng = np.random.default_rng(seed)
    hi = (1 if planar else 40, 40, 40)
    pts = np.stack([rng.integers(0, h, 30) for h in hi], axis=1).astype(np.int32)
    near = pts[rng.integers(0, 30, 100)] + rng.integers(-2, 3, (100, 3)) * [0 if planar else 1, 1, 1]
    far = (1 if planar else 120, 120, 120)  # queries far beyond the ball: the tree answers them
    queries = np.concatenate([near, np.stack([rng.integers(0, h, 100) for h in far], axis=1)]).astype(np.int32)
    spacing = np.array([1.0, 0.7, 1.3])
    want = _oracle(pts, queries, spacing)

    out = np.full(queries.shape[0], -1.0)
    missed = nearest_probe(pts, spacing, queries, out)
    assert 0 < missed.shape[0] < queries.shape[0]  # both steps ran
    probed = np.setdiff1d(np.arange(queries.shape[0]), missed)
    np.testing.assert_array_equal(out[probed], want[probed])
    assert (want[missed] > REACH * spacing.min() - 1e-12).all()  # left only beyond the ball's radius
    assert (out[missed] == -1.0).all()  # untouched by the probes

    out = np.empty(queries.shape[0])
    nearest_distances(pts, spacing, queries, out)
    np.testing.assert_array_equal(out, want)

    balls = ball(spacing, np.bool_(False)) + ball(spacing, np.bool_(True))
    out2 = np.empty(queries.shape[0])
    nearest_with(pts, spacing, queries, out2, *balls)
    np.testing.assert_array_equal(out2, want)


@pytest.mark.parametrize("seed", [3, 4])
def test_nearest_with_the_pairs_balls_gives_the_same_distances(seed):
    """``metrics.surface.nearest(..., balls=probe_balls(sp))`` (the objects family's one-kernel
    path) equals the two-step path and the oracle, near and far queries alike."""
    from segscore.metrics.surface import nearest, probe_balls

    rng = np.random.default_rng(seed)
    pts = rng.integers(0, 30, (50, 3)).astype(np.int32)
    queries = np.concatenate([pts[rng.integers(0, 50, 80)] + rng.integers(-3, 4, (80, 3)),
                              rng.integers(-60, 90, (80, 3))]).astype(np.int32)
    sp = np.array([0.5, 1.0, 2.0])
    want = _oracle(pts, queries, sp)
    np.testing.assert_array_equal(nearest(pts, queries, sp, balls=probe_balls(sp)), want)
    np.testing.assert_array_equal(nearest(pts, queries, sp), want)
