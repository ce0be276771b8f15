"""Curvilinear masks (curvicost parity): overlap/topology metrics beside functional costs.

    from segscore.curvilinear import score, prepare_reference, perturb
    row = score(gt, pred, prune_px=17)
    ref = prepare_reference(gt, prune_px=17); rows = [score(None, p, reference=ref) for p in preds]
    broken, info = perturb(gt, "break", 0.10, seed=0)

Metric audit: ``audit(masks, ...)`` (curvicost's ``audit``: which metric tracks which cost, per
error type; :mod:`segscore.curvilinear.auditing`) and ``audit_from_cases(path)`` (its statistics again
from an earlier audit's cases); error profile: ``profile(gt, preds, ...)``
(:mod:`segscore.curvilinear.profiling`) and ``recommend(findings, profile)``
(:mod:`segscore.curvilinear.advice`: "which metric should I report?").

Command line: ``segscore curve PRED --gt GT [--prune-px N] [--no-erl] [--reference-radii] [--voxel-size SPEC]
[--json [F.json] | --json-out F] [--csv F] [--quiet]`` (curvicost's ``score`` and its options),
``segscore perturb GT --operator OP --severity S [--seed N] [--prune-px N] -o OUT [--json-out F]``;
``segscore audit MASK... [options]``, ``segscore audit --cases AUDIT.json`` and
``segscore profile PRED... --gt GT``.

Skeletons are ``skimage.morphology.skeletonize``'s, voxel for voxel, made by segscore's kernels
(:mod:`segscore.curvilinear.thinning`): in 2D with the removal table measured from the installed
scikit-image, in 3D by Lee's procedure in scikit-image's order.

Parity with curvicost 0.3.1 (tests/curvilinear/test_parity.py): every key of the row equals
curvicost's to 1e-6 on the FIVES masks, synthetic 2D/3D trees and random masks, except:

* ``diadem_like`` of an empty prediction is 0.0 (no predicted node matches any reference
  node); curvicost returns 1.0 there.
* Conductance when a reference sink is exactly equidistant from two skeleton voxels of the
  prediction: curvicost's choice follows its k-d tree's internal layout, which depends on the
  order of its nodes, and it numbers loop components (rings, lone skeleton voxels) in Python
  set order; segscore numbers them in C order. Seen in 3 of 32 random-blob cases, never on
  FIVES; only the conductance keys move.
* A degenerate fraction (a reference with no branch longer than ``prune_px``, so no source
  and no sinks) is ``null`` with an entry in ``notes``; curvicost returns NaN.
* In every row, curvicost 0.3.1's audit names: erl_star (= erl_frac), erl_split (ERL without the
  merge zeroing, over its value for the reference), node_recall (= diadem_like), and the cost
  columns conductance_excess / conductance_deficit (max(conductance_frac - 1, 0) and max(1 -
  conductance_frac, 0)).
* With ``score(..., all_metrics=True)`` (``segscore curve`` by default, as curvicost's score; not with
  ``--no-all-metrics``): curvicost's further skeleton_recall, cbdice_star, hd95, apls and junction_f1,
  equal to its values (null with
  an entry in ``notes`` where it gives NaN; two pinned differences in
  ``tests/curvilinear/test_graph_metrics.py``); betti_matching as curvicost defines it (unmatched
  Betti-matching pairs of both masks), computed in numba (curvicost needs a compiled module for
  it, NaN without it and in 3D).
* ``with_erl=False`` (``--no-erl``): the ERL and DIADEM-like keys are null, each with a note, where
  curvicost leaves them out; ``reference_radii=True`` (``--reference-radii``) adds
  conductance_refradii_frac and conductance_refradii_twosided, equal to curvicost's
  (tests/curvilinear/test_curvicost_lines.py).
* Operators: curvicost's draws (the same seed damages the same voxels; break counts and cuts
  every edge, loops included, in curvicost's order, and checks a cut at the chain's ends as
  curvicost does), so ``audit`` and ``profile`` give curvicost's cases and bases.
"""

from __future__ import annotations

__all__ = ["score", "prepare_reference", "perturb", "OPERATORS", "load_mask", "save_mask", "audit",
           "audit_from_cases", "profile", "recommend"]

#: the package's functions and the module each lives in (imported on first use)
_LAZY = {"audit": "auditing", "audit_from_cases": "auditing", "profile": "profiling", "prepare_profile": "profiling",
         "format_profile": "profiling", "recommend": "advice", "format_recommendation": "advice"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"segscore.curvilinear.{_LAZY[name]}"), name)
    if name in ("score", "prepare_reference", "scale_warnings", "ROW_KEYS", "OPTIONAL_KEYS"):
        from segscore.curvilinear import scoring as _s

        return getattr(_s, name)
    if name in ("perturb", "OPERATORS"):
        from segscore.curvilinear import operators as _p

        return getattr(_p, name)
    if name in ("load_mask", "save_mask", "as_binary"):
        from segscore.curvilinear import masks as _m

        return getattr(_m, name)
    raise AttributeError(name)
