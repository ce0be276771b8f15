"""Kirchhoff conductance on resistor networks with closed-form answers; reachable length;
metrics on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.curvilinear import costs as C
from segscore.curvilinear import metrics as M
from segscore.curvilinear.graph import SkeletonGraph
from tests.curvilinear.helpers import everywhere


def make_graph(shape, nodes, edges):
    """nodes: list of positions; edges: list of (u, v, [voxel positions from u's end to v's])."""
    eu, ev, ptr, path, ln = [], [], [0], [], []
    for u, v, px in edges:
        px = np.asarray(px)
        eu.append(u)
        ev.append(v)
        path.extend(np.ravel_multi_index(tuple(px.T), shape).tolist())
        ptr.append(len(path))
        ln.append(float(np.sqrt((np.diff(px, axis=0) ** 2).sum(1)).sum()))
    E = len(eu)
    return SkeletonGraph(shape=shape, node_pos=np.asarray(nodes, np.int64), node_radius=np.ones(len(nodes)),
                         edge_u=np.asarray(eu, np.int64), edge_v=np.asarray(ev, np.int64),
                         edge_len=np.asarray(ln), edge_rad=np.ones(E), edge_ptr=np.asarray(ptr, np.int64),
                         path=np.asarray(path, np.int64), edge_alive=np.ones(E, bool),
                         node_alive=np.ones(len(nodes), bool), pair_first=np.arange(E, dtype=np.int64))


def row(y, x0, x1):
    return [(y, x) for x in range(x0, x1 + 1)] if x1 >= x0 else [(y, x) for x in range(x0, x1 - 1, -1)]


SHAPE = (30, 40)
ONE = np.ones(SHAPE, np.int32)


@pytest.mark.parametrize("r", [1.0, 2.0, 3.5])
def test_series(r):
    g = make_graph(SHAPE, [(5, 2), (5, 12), (5, 22)], [(0, 1, row(5, 2, 12)), (1, 2, row(5, 12, 22))])
    got = C.kirchhoff(g, 0, np.array([[5, 22]]), ONE, everywhere(np.full(SHAPE, r)))
    assert np.isclose(got, r**4 / 20)


def test_parallel_edges_add():
    r = 2.0
    detour = [(5, 2), (10, 2), (10, 22), (5, 22)]  # steps 5 + 20 + 5 = 30
    g = make_graph(SHAPE, [(5, 2), (5, 22)], [(0, 1, row(5, 2, 22)), (0, 1, detour)])
    got = C.kirchhoff(g, 0, np.array([[5, 22]]), ONE, everywhere(np.full(SHAPE, r)))
    assert np.isclose(got, r**4 / 20 + r**4 / 30)


def test_two_sinks_in_parallel_and_wheatstone_symmetry():
    # unit radius everywhere; source in the middle, two sinks at 10 and 5 voxels: conductances add
    g = make_graph(SHAPE, [(5, 12), (5, 2), (5, 17)], [(0, 1, row(5, 12, 2)), (0, 2, row(5, 12, 17))])
    got = C.kirchhoff(g, 0, np.array([[5, 2], [5, 17]]), ONE, everywhere(np.ones(SHAPE)))
    assert np.isclose(got, 1 / 10 + 1 / 5)
    # only one sink given: the other branch is a dead end carrying nothing
    got1 = C.kirchhoff(g, 0, np.array([[5, 2]]), ONE, everywhere(np.ones(SHAPE)))
    assert np.isclose(got1, 1 / 10)


def test_sink_inside_a_chain_splits_it():
    g = make_graph(SHAPE, [(5, 2), (5, 22)], [(0, 1, row(5, 2, 22))])
    got = C.kirchhoff(g, 0, np.array([[6, 12]]), ONE, everywhere(np.ones(SHAPE)))  # nearest voxel (5, 12)
    assert np.isclose(got, 1 / 10)
    # beyond the match radius (strictly less than 3 voxels): lost
    assert C.kirchhoff(g, 0, np.array([[8, 12]]), ONE, everywhere(np.ones(SHAPE))) == 0.0


def test_resistance_reads_radius_at_each_steps_far_voxel():
    rad = np.ones(SHAPE)
    rad[5, 3:8] = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    g = make_graph(SHAPE, [(5, 2), (5, 7)], [(0, 1, row(5, 2, 7))])
    got = C.kirchhoff(g, 0, np.array([[5, 7]]), ONE, everywhere(rad))
    assert np.isclose(got, 1.0 / sum(1.0 / q**4 for q in (1, 2, 3, 4, 5)))
    rad[5, 3] = 0.1  # clamped at 0.5
    assert np.isclose(C.kirchhoff(g, 0, np.array([[5, 7]]), ONE, everywhere(rad)),
                      1.0 / (1 / 0.5**4 + sum(1.0 / q**4 for q in (2, 3, 4, 5))))


def test_sink_outside_the_source_component_is_dead():
    g = make_graph(SHAPE, [(5, 2), (5, 22)], [(0, 1, row(5, 2, 22))])
    lab = np.ones(SHAPE, np.int32)
    lab[:, 20:] = 2
    assert C.kirchhoff(g, 0, np.array([[5, 22]]), lab, everywhere(np.ones(SHAPE))) == 0.0
    lab[:, 20:] = 0
    assert C.kirchhoff(g, 0, np.array([[5, 22]]), lab, everywhere(np.ones(SHAPE))) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_rayleigh_monotonicity(seed):
    """Adding a chain never lowers the conductance."""
    rng = np.random.default_rng(seed)
    pts = [(int(y), int(x)) for y, x in zip(rng.integers(0, 30, 8), rng.integers(0, 40, 8))]
    pts = list(dict.fromkeys(pts))
    n = len(pts)
    edges = [(i, i + 1, [pts[i], pts[i + 1]]) for i in range(n - 1)]
    rad = rng.uniform(0.5, 3, SHAPE)
    sinks = np.array([pts[-1], pts[n // 2]], float)
    base = C.kirchhoff(make_graph(SHAPE, pts, edges), 0, sinks, ONE, everywhere(rad))
    for _ in range(4):
        a, b = rng.choice(n, 2, replace=False)
        edges = edges + [(min(a, b), max(a, b), [pts[min(a, b)], pts[max(a, b)]])]
        more = C.kirchhoff(make_graph(SHAPE, pts, edges), 0, sinks, ONE, everywhere(rad))
        assert more >= base - 1e-12
        base = more


def test_erl_merge_and_split():
    obj = np.array([1] * 6 + [2] * 4)
    # object 1 split 4/2, object 2 whole
    assert np.isclose(M.erl(obj, np.array([1, 1, 1, 1, 2, 2, 3, 3, 3, 3]))[0], (16 + 4) / 6 + 16 / 4)
    # segment 3 touches both objects: both zeroed, merged fraction 1
    e, m = M.erl(obj, np.array([3, 1, 1, 1, 1, 1, 3, 3, 3, 3]))
    assert e == 0.0 and m == 1.0
    assert M.erl(obj, np.zeros(10, int)) == (0.0, 0.0)


def test_dice_iou_cldice_small():
    gt = np.zeros((10, 10), bool)
    gt[2:8, 4:6] = True
    pred = np.zeros_like(gt)
    pred[2:8, 4] = True
    d, i = M.dice_iou(gt, pred)
    assert np.isclose(d, 2 * 6 / 18) and np.isclose(i, 6 / 12)
    s = np.zeros_like(gt)
    s[3:7, 4] = True
    assert np.isclose(M.cldice(s, gt, s, pred), 1.0)
    assert M.cldice(s, gt, np.zeros_like(gt), np.zeros_like(gt)) == 0.0


def test_diadem_like_weights():
    assert np.isclose(M.diadem_like(np.array([[0, 0], [20, 0]]), np.array([1.0, 3.0]), np.array([[6, 0]])), 0.25)
    assert M.diadem_like(np.array([[0, 0]]), np.array([1.0]), np.zeros((0, 2))) == 0.0
    assert M.diadem_like(np.zeros((0, 2)), np.zeros(0), np.array([[0, 0]])) is None


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("nd", [2, 3])
def test_invariants_on_random_masks(seed, nd):
    """A mask scored against itself keeps everything; adding voxels never loses reachable
    length (it is counted on the reference skeleton and bounded by 1)."""
    from segscore.curvilinear.scoring import score
    from tests.curvilinear.helpers import random_blobs

    shape = (48, 48) if nd == 2 else (18, 18, 18)
    gt = random_blobs(shape, seed, q=0.6, sigma=1.5 if nd == 2 else 1.2)
    row = score(gt, gt, prune_px=3)
    assert row["dice"] == 1.0 and row["cldice"] == 1.0 and row["betti0_error"] == 0
    assert row["traceable_frac"] == 1.0 and row["erl_frac"] == 1.0 and row["merged_frac"] == 0.0
    if row["conductance_frac"] is not None:
        assert np.isclose(row["conductance_frac"], 1.0)
    more = gt | (np.random.default_rng(seed).random(shape) < 0.05)
    assert score(gt, more, prune_px=3)["traceable_frac"] == 1.0
    less = gt & (np.random.default_rng(seed + 1).random(shape) < 0.9)
    r = score(gt, less, prune_px=3)
    assert 0.0 <= r["traceable_frac"] <= 1.0 and r["dice"] < 1.0
