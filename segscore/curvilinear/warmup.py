"""The curvilinear family's warm-up: every metric of ``curve`` (the audit's too: apls,
junction_f1, hd95) and every operator of ``perturb`` (``profile`` applies all five) on a tiny
cross. The registry (:mod:`segscore.families`) points at :func:`warm` (``segscore warm``); the
audit's workers run :func:`audit`, the same less the Betti matching an audit never computes.

:data:`FIRST_RUN` divides the first runs of ``curve``, ``audit`` and ``profile`` between two
processes (:mod:`segscore.engine.firstrun`); ``audit``'s and ``profile``'s so that no kernel of
ours is compiled on both sides (``tests/test_first_run.py``). For ``curve`` the other process
compiles the network reduction, Betti matching and hd95 while this one compiles the analysis,
the reach costs, apls, junction F1 and cbdice*.
"""

from __future__ import annotations

import numpy as np

from segscore.engine.firstrun import Plan


def _cross() -> np.ndarray:
    m = np.zeros((24, 24), bool)
    m[12, 2:22] = True
    m[2:22, 12] = True
    return m


def warm() -> None:
    curve()  # the audit's metrics too (apls, junction_f1, hd95)
    _beside_the_score()


def audit() -> None:
    """What an audit's cases compile: :func:`warm` without the Betti matching (the audit scores
    with ``betti=False``: curvicost's cases hold NaN there), so an audit's first run does not
    compile the Betti kernels it never calls."""
    audit_score()
    _beside_the_score()


def _beside_the_score() -> None:
    """What :func:`warm` and :func:`audit` compile beyond the score: the nearest-point search, the
    five operators and the findings' statistics."""
    nearest()
    operators()
    findings()


def findings() -> None:
    """The audit's findings: Spearman's rho and its cluster bootstrap."""
    from segscore.curvilinear.findings import cluster_interval, spearman_rho

    x, y = [0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 1.0, 3.0]
    spearman_rho(x, y)
    cluster_interval(x, y, [0, 0, 1, 1], n_boot=5)


def nearest() -> None:
    """The k-d tree step of the distances, which the tiny masks' distances never reach (the audit's
    cases reach it)."""
    from segscore.metrics.surface import warm_nearest

    warm_nearest()


def _thick() -> np.ndarray:
    thick = _cross()
    thick[11, 2:22] = True  # a two-pixel arm: the radius and boundary operators need width
    return thick


def operators() -> None:
    """perturb's and profile's operators (their painting and distance kernels)."""
    from segscore.curvilinear.operators import OPERATORS, perturb

    thick = _thick()
    for op in OPERATORS:
        perturb(thick, op, 0.5, seed=0, prune_px=1)


def operator_kernels() -> None:
    """The operators' kernels that need no analysis of the mask (its skeleton, radii and graph):
    the boundary operator whole, the break's close pairs, the truncation's nearest skeleton voxel
    and the radius operator's painting, called as the operators call them, so that a second
    process compiles them without compiling the analysis again."""
    from segscore.curvilinear.operators import close_point_pairs, perturb
    from segscore.kernels.operators import paint_balls

    perturb(_thick(), "boundary", 0.5, seed=0, prune_px=1)
    close_point_pairs(np.array([[0.0, 0.0], [0.0, 1.0]]), 2.0)
    owner()
    paint_balls(np.array([1, 2, 2], np.int64), np.zeros((1, 3), np.int64), np.ones(1), np.zeros(1, np.int64),
                np.zeros(4, np.int32), np.zeros(1, np.int64), np.zeros(4, bool))


def owner() -> None:
    """The truncation's and the radius operator's nearest skeleton voxel (the feature transform
    of the skeleton), which needs no analysis of the mask."""
    from segscore.curvilinear.operators import _owner

    _owner(_cross())


def profile() -> None:
    """What ``profile`` compiles: the five operators' errors scored on the tiny cross."""
    from segscore.curvilinear.profiling import profile as error_profile

    thick = _thick()
    error_profile(thick, [thick], prune_px=1, seeds=1)


def curve() -> None:
    """What ``curve`` compiles: every metric, on the tiny cross."""
    from segscore.curvilinear.scoring import _score as score

    m = _cross()
    score(m, m, all_metrics=True)


def audit_score() -> None:
    """What an audit's case compiles: every metric but the Betti matching, on the tiny cross."""
    from segscore.curvilinear.scoring import _score as score

    m = _cross()
    score(m, m, all_metrics=True, betti=False)


def prelude() -> None:
    """The kernels ``curve``'s and ``profile``'s first runs compile with two signatures each: the
    union-find's root (int32 parents in the Betti matching, int64 in the labeller) and the sorted
    search (int64 and float64 values)."""
    from segscore.kernels.components import find

    for dtype in (np.int32, np.int64):
        find(np.zeros(1, dtype), 0)
    sorted_search()


def sorted_search() -> None:
    """The sorted search with both its signatures (int64 and float64 values): ``audit``'s prelude
    (it runs no Betti matching, so the union-find's root has one signature)."""
    from segscore.kernels.nearest import search_left

    search_left(np.zeros(1, np.int64), 0)
    search_left(np.zeros(1, np.float64), 0.0)


def betti() -> None:
    from segscore.curvilinear.scoring import betti_matching_error

    m = _cross()
    betti_matching_error(m, m)


def hd95() -> None:
    from segscore.curvilinear import metrics as M

    m = _cross()
    M.hd95(m, m)


def graph_metrics() -> None:
    from segscore.curvilinear import metrics as M

    points = M.SkeletonPoints(_cross())
    M.apls(points, points)
    M.junction_f1(points, points)


def shortest_paths() -> None:
    """The bridge operator's shortest paths (its end points are never close on the tiny cross),
    called with the types the operator passes: a two-node graph in CSR."""
    from segscore.kernels.graphmatch import dijkstra_to_targets

    indptr = np.array([0, 1, 2], np.int64)
    dijkstra_to_targets(indptr, np.array([1, 0], np.int64), np.ones(2), np.array([0], np.int64),
                        np.array([1], np.int64), np.empty((1, 1)))


def network() -> None:
    """The costs' network reduction (Kirchhoff conductance), on a three-node chain."""
    from segscore.curvilinear.costs import network_conductance

    network_conductance(3, [0, 1], [1, 2], [1.0, 1.0], 0, [2])


def cbdice() -> None:
    from segscore.curvilinear import metrics as M

    m = _cross()
    M.cbdice_star(m, m, m, m)


def score_default() -> None:
    """``curve``'s metrics without the optional ones: the analysis of both masks and the costs."""
    from segscore.curvilinear.scoring import _score as score

    m = _cross()
    score(m, m)


_HERE = "segscore.curvilinear.warmup:"
#: each command's first run, divided between two processes (:mod:`segscore.engine.firstrun`; each
#: side about half of the compile seconds, measured per part, and no kernel of ours compiled on
#: both: ``curve``'s analysis, reach costs, apls / junction F1 and cbdice* here, the network
#: reduction, Betti matching and hd95 there)
FIRST_RUN = {
    "curve": Plan(prelude=(_HERE + "prelude",), here=tuple(_HERE + p for p in ("score_default", "graph_metrics", "cbdice")),
                  there=tuple(_HERE + p for p in ("network", "betti", "hd95")), then=(_HERE + "curve",)),
    # the analysis and what perturbs or reads it here (the operators redraw from the analysis
    # kernels this side compiles); there, what shares none of them: the operators' nearest
    # skeleton voxel (first: here's operators need it last), the network reduction, the surface
    # distances (hd95 and the k-d tree) and the findings' statistics
    "audit": Plan(prelude=(_HERE + "sorted_search",),
                  here=tuple(_HERE + p for p in ("score_default", "graph_metrics", "cbdice", "operators")),
                  there=tuple(_HERE + p for p in ("owner", "network", "hd95", "nearest", "findings")),
                  then=(_HERE + "audit",)),
    # the analysis and the costs here (the score); there the operators' kernels that need no
    # analysis, the network reduction and the bridge's shortest paths: the two sides share no
    # kernel of ours (the operators called whole there also compiled the analysis again)
    "profile": Plan(prelude=(_HERE + "sorted_search",), here=(_HERE + "score_default",),
                    there=tuple(_HERE + p for p in ("network", "shortest_paths", "operator_kernels")),
                    then=(_HERE + "profile",)),
}
