"""Score a curvilinear prediction: overlap/topology metrics beside functional costs.

``score(gt, pred)`` returns one flat dict with curvicost 0.3.1's key names and ``notes``
({metric: why it is null}, always present; the result contract of :mod:`segscore.io.results`,
where curvicost has NaN). The reference's
work (its skeleton, graph, source, sinks, component roots and own costs) is done once by
:func:`prepare_reference` and can be passed back in to score many predictions against it.

Invariants (curvicost's spec, "Four invariants"): the reference and the prediction go
through the same path (:func:`_analyse`); sinks are the reference's terminal positions and
survive only through the prediction's mask connectivity to the source; the source is pinned
to the reference's source position; reachable length is counted on the reference skeleton.

Every row also carries curvicost's further names (:data:`ALIAS_KEYS`, :data:`CONDUCTANCE_SIDE_KEYS`);
``all_metrics=True`` adds :data:`OPTIONAL_KEYS`, so a row holds all of :data:`AUDIT_METRICS`, the
metrics curvicost's audit correlates. They equal curvicost's (tests/curvilinear/test_graph_metrics.py)
except where curvicost has NaN (``betti_matching`` in 3D, or without its compiled module: a
number here, with a warning in 3D; ``apls`` when neither direction is defined: null + note) and ``junction_f1`` when neither skeleton has a junction (curvicost: 1.0;
here null + note, F1 of nothing against nothing being 0/0).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from segscore.curvilinear import costs as C
from segscore.curvilinear import metrics as M
from segscore.curvilinear.graph import (SkeletonGraph, SkeletonRadius, build_graph, is_unit, label, length_weights,
                                        radius_on_skeleton, skeletonize)
from segscore.curvilinear.masks import as_binary
from segscore.errors import ScoreError, moved
from segscore.io.results import as_result

#: the row's keys, in order (curvicost's names), then the run's own fields
METRIC_KEYS = ("dice", "iou", "cldice", "betti0_gt", "betti0_pred", "betti0_error", "erl", "erl_frac",
               "merged_frac", "diadem_like")
COST_KEYS = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac",
             "perfused_of_self", "traceable_length", "conductance", "traceable_length_ref", "conductance_ref")
#: curvicost 0.3.1's further names, in every row: ``erl_star`` (= erl_frac), ``node_recall``
#: (= diadem_like), ``erl_split`` (erl without merge zeroing, as a fraction of the reference's),
#: and the two halves of the conductance fraction's distance from 1 (its audit's case columns:
#: ``conductance_excess = max(conductance_frac - 1, 0)``, ``conductance_deficit = max(1 -
#: conductance_frac, 0)``). After the run's own fields, so the columns rows had keep their places.
ALIAS_KEYS = ("erl_star", "erl_split", "node_recall")
CONDUCTANCE_SIDE_KEYS = ("conductance_excess", "conductance_deficit")
#: the spacing the lengths, radii and conductance are in (``spacing`` one voxel size per axis in array
#: order, ``spacing_source`` "default" (1 per axis: voxels, curvicost's numbers), "given", "nifti",
#: "ome-zarr", "tiff" or "imagej", ``spacing_unit`` as the file states it) and ``prune_length``
#: (the spur-pruning length in the spacing's unit when given instead of ``prune_px``)
SPACING_KEYS = ("spacing", "spacing_source", "spacing_unit", "prune_length")
ROW_KEYS = (METRIC_KEYS + COST_KEYS + ("prune_px", "prune_radii", "voxel_size") + ALIAS_KEYS + CONDUCTANCE_SIDE_KEYS
            + SPACING_KEYS + ("notes", "warnings"))
#: curvicost's optional metrics segscore computes on request (``all_metrics=True``; appended
#: after ``notes``). ``betti_matching`` as curvicost defines it (the unmatched persistence pairs
#: of both masks over all dimensions of the Betti matching of ``1 - gt`` and ``1 - pred``,
#: untiled; :mod:`segscore.metrics.betti`); curvicost needs the compiled Betti-Matching-3D
#: module for it (NaN without it) and reports NaN in 3D always, segscore computes it in both.
OPTIONAL_KEYS = ("skeleton_recall", "cbdice_star", "hd95", "betti_matching", "apls", "junction_f1")
#: the eleven metrics curvicost 0.3.1's audit correlates, in its order (its Table 2, less
#: betti_matching, which it leaves out when the module is missing)
#: ``reference_radii=True`` (curvicost's ``--reference-radii``; appended last): the topology-only
#: conductance, the radius on the prediction's skeleton read from the nearest reference-skeleton voxel
#: within :data:`REFRADII_MATCH_PX` voxels (the prediction's own radius elsewhere), as a fraction of
#: the reference's conductance, and that fraction read two-sided (min(c, 1/c))
REFRADII_KEYS = ("conductance_refradii_frac", "conductance_refradii_twosided")
REFRADII_MATCH_PX = 3.0
#: what ``with_erl=False`` (curvicost's ``--no-erl``) leaves uncomputed: null in the row, each with
#: :data:`NO_ERL_NOTE` (curvicost 0.3.1 leaves these keys out of its row)
ERL_KEYS = ("erl", "erl_frac", "merged_frac", "diadem_like", "erl_star", "erl_split", "node_recall")
NO_ERL_NOTE = ("not computed: --no-erl (with_erl=False) skips ERL and the DIADEM-like score, as curvicost's --no-erl "
               "does (curvicost leaves the key out)")
AUDIT_METRICS = ("dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "erl_star", "node_recall",
                 "apls", "junction_f1", "hd95")
BETTI_MATCHING_3D_WARNING = ("betti_matching is computed in 3D too (Betti-Matching-3D's answers, in numba); curvicost "
                             "0.3.1 reports NaN there")


def betti_matching_error(gt, pred) -> int:
    """curvicost's ``betti_matching``: unmatched pairs of both masks, all dimensions, of the
    Betti matching of ``1 - gt`` and ``1 - pred`` (the truth first), whole volume."""
    import numpy as np

    from segscore.metrics.betti import betti_matching

    g = np.asarray(gt) != 0
    p = np.asarray(pred) != 0
    m = betti_matching((~g).view(np.uint8), (~p).view(np.uint8), threads=2)  # capped by the engine's budget
    return int(sum(d.counts()[1] + d.counts()[2] for d in m.dims))


#: masks of this many voxels and up to PARALLEL_MAX_VOXELS have the reference and the prediction
#: analysed side by side; smaller ones take tens of milliseconds each, less than a second
#: thread's start and its allocator arena are worth
PARALLEL_MIN_VOXELS = 1 << 20
PARALLEL_MAX_VOXELS = 1 << 23


@dataclass
class _Analysis:
    """One mask through the shared path: skeleton, distance map, labels, pruned graph."""

    mask: np.ndarray
    skel: np.ndarray
    edt: SkeletonRadius
    lab: np.ndarray
    n_comp: int
    graph: SkeletonGraph | None


def _analyse(mask: np.ndarray, prune_px: float, spacing=None, prune_length=None) -> _Analysis:
    if not mask.any():
        return _Analysis(mask, np.zeros_like(mask), SkeletonRadius(np.zeros(0, np.int64), np.zeros(0)),
                         np.zeros(mask.shape, np.int32), 0, None)
    skel = skeletonize(mask)
    edt = radius_on_skeleton(mask, skel, spacing)
    g = build_graph(skel, edt, prune_px, spacing, prune_length)
    lab, n = label(mask)  # last: the graph's image-sized scratch is gone by then
    return _Analysis(mask, skel, edt, lab, int(n), g)


def check_geometry(spacing, prune_length, ndim: int):
    """(``Spacing`` record, spacing tuple or None for unit, prune_length) checked: ``spacing`` is
    None, one voxel size per axis, or a :class:`segscore.io.spacing.Spacing`."""
    from segscore.io.spacing import Spacing

    if spacing is None:
        rec = Spacing((1.0,) * ndim, "default", None)
    elif isinstance(spacing, Spacing):
        rec = spacing
    else:
        try:
            vals = tuple(float(v) for v in spacing)
        except (TypeError, ValueError):
            raise ScoreError(f"spacing {spacing!r}: give one voxel size per axis in array order") from None
        rec = Spacing(vals, "given", None)
    vals = rec.values
    if len(vals) != ndim or not all(np.isfinite(v) and v > 0 for v in vals):
        raise ScoreError(f"spacing {list(vals)}: give {ndim} positive finite voxel sizes, one per axis in array order")
    from segscore.io.spacing import SPACING_MAX, SPACING_MIN, spacing_ok

    if not all(spacing_ok(v) for v in vals):  # lengths and conductances would underflow or overflow
        raise ScoreError(f"spacing {list(vals)}: every voxel size must be from {SPACING_MIN:g} to {SPACING_MAX:g}; "
                         f"give it in another unit")
    if prune_length is not None and not (np.isfinite(prune_length) and prune_length >= 0):
        raise ScoreError(f"prune_length: must be a finite length >= 0 in the spacing's unit, got {prune_length}")
    return rec, (None if is_unit(vals) else tuple(vals)), (None if prune_length is None else float(prune_length))


@dataclass
class Reference:
    """Everything ``score`` needs from the reference alone (see :func:`prepare_reference`)."""

    shape: tuple
    prune_px: float
    gt: np.ndarray
    a: _Analysis
    skel_idx: np.ndarray  # flat indices of the reference-skeleton voxels (C order)
    skel_coords: np.ndarray  # (K, ndim) float
    rl: np.ndarray  # reference mask component of each skeleton voxel
    obj: np.ndarray  # reference skeleton component of each skeleton voxel (ERL objects)
    root_k: np.ndarray  # per mask component: its root voxel (max distance value), -1 if none
    src: int | None
    src_pos: np.ndarray | None
    src_k: int | None
    sinks: np.ndarray
    conductance_ref: float
    base_multi: int
    base_single: int
    erl_ref: float
    diadem_pos: np.ndarray
    diadem_w: np.ndarray
    median_radius: float
    erl_split_ref: float = 0.0
    spacing: object = None  # the io.spacing.Spacing record the row reports
    sp: tuple | None = None  # the spacing lengths are scaled by; None: unit (voxels)
    prune_length: float | None = None
    weights: np.ndarray | None = None  # physical length of each skeleton voxel (None: unit spacing, 1 each)
    extra: dict = field(default_factory=dict)

    def analysis(self):
        """``(skeleton, radius on it, graph, cache)`` of the reference in voxels at its prune_px,
        for :func:`segscore.curvilinear.operators.perturb` (None when lengths are physical)."""
        if self.sp is not None or self.prune_length is not None or self.a.graph is None:
            return None
        return self.a.skel, self.a.edt, self.a.graph, self.extra.setdefault("operators", {})

    def skeleton_radii(self) -> tuple:
        """The reference skeleton's voxels and the reference's radii there (cbdice_star's
        reference side, :func:`segscore.curvilinear.metrics.skeleton_radii`), made once."""
        if "skeleton_radii" not in self.extra:
            self.extra["skeleton_radii"] = M.skeleton_radii(self.a.skel, self.gt)
        return self.extra["skeleton_radii"]

    def points(self) -> M.SkeletonPoints:
        """The reference skeleton's control points and voxel graph (apls, junction_f1), made once."""
        if "points" not in self.extra:
            self.extra["points"] = M.SkeletonPoints(self.a.skel)
        return self.extra["points"]


def prepare_reference(gt, *, prune_px: float = 5, spacing=None, prune_length=None) -> Reference:
    """Do the reference's work once. Refuses an empty reference or a non-binary mask.

    ``spacing`` (one voxel size per axis in array order, or a :class:`segscore.io.spacing.Spacing`)
    puts lengths, radii and conductance in its unit; ``prune_length`` prunes spurs shorter than
    that length in the spacing's unit instead of ``prune_px`` voxels."""
    gt = as_binary(gt, "reference")
    if not gt.any():
        raise ScoreError("reference: the mask is empty; a reference needs at least one foreground voxel")
    if not (prune_px >= 0):
        raise ScoreError(f"prune_px: must be a length >= 0 voxels, got {prune_px}")
    rec, sp, prune_length = check_geometry(spacing, prune_length, gt.ndim)
    a = _analyse(gt, prune_px, sp, prune_length)
    g = a.graph
    skel_idx = a.edt.idx  # the skeleton's voxels, C order
    coords = np.array(np.unravel_index(skel_idx, gt.shape), dtype=np.float64).T.reshape(-1, gt.ndim)
    weights = length_weights(a.skel, skel_idx, sp)
    rl = a.lab.ravel()[skel_idx].astype(np.int64)
    slab, _ = label(a.skel)
    obj = slab.ravel()[skel_idx].astype(np.int64)
    edt_s = a.edt.val
    # root of each mask component: its skeleton voxel of maximum distance value (first in C order)
    root_k = np.full(a.n_comp + 1, -1, dtype=np.int64)
    if len(skel_idx):
        order = np.lexsort((np.arange(len(rl)), -edt_s, rl))
        first = np.ones(len(order), dtype=bool)
        first[1:] = rl[order][1:] != rl[order][:-1]
        root_k[rl[order][first]] = order[first]

    e = g.alive_edges()
    if len(e):
        src = C.pick_source(g)
        src_pos = g.node_pos[src].astype(float)
        sinks = C.terminal_positions(g)
        cond_ref = C.kirchhoff(g, src, sinks, a.lab, a.edt)
        flat_src = int(np.ravel_multi_index(tuple(g.node_pos[src]), gt.shape))
        src_k = int(np.searchsorted(skel_idx, flat_src))
    else:
        src, src_pos, src_k, sinks, cond_ref = None, None, None, np.zeros((0, gt.ndim)), 0.0
    base_multi = C.reach_multi(rl, coords, root_k, rl, weights)
    base_single = C.reach_single(rl, coords, src_k, rl, weights) if src_k is not None else 0
    erl_ref, _ = M.erl(obj, rl, weights)
    erl_split_ref = M.erl_split(obj, rl, weights)
    # DIADEM-like weights: incident edge length of every alive reference node (a loop once)
    w = np.zeros(g.n_nodes)
    np.add.at(w, g.edge_u[e], g.edge_len[e])
    ne = e[g.edge_u[e] != g.edge_v[e]]
    np.add.at(w, g.edge_v[ne], g.edge_len[ne])
    nodes = g.alive_nodes() if len(e) else np.zeros(0, np.int64)
    radii = edt_s
    a.lab = None  # not needed once the reference's own costs are known: free it (the radius on the
    # skeleton stays: 16 bytes per skeleton voxel, and the operators of an audit read it)
    return Reference(shape=gt.shape, prune_px=prune_px, gt=gt, a=a, skel_idx=skel_idx, skel_coords=coords, rl=rl,
                     obj=obj, root_k=root_k, src=src, src_pos=src_pos, src_k=src_k, sinks=sinks,
                     conductance_ref=float(cond_ref), base_multi=base_multi, base_single=base_single,
                     erl_ref=float(erl_ref), erl_split_ref=float(erl_split_ref), diadem_pos=g.node_pos[nodes],
                     diadem_w=w[nodes],
                     median_radius=float(np.median(radii)) if len(radii) else float("nan"),
                     spacing=rec, sp=sp, prune_length=prune_length, weights=weights)


def _prepare_beside(gt, pred, prune_px, spacing=None, prune_length=None) -> Reference:
    """``prepare_reference(gt)`` in a worker thread while this one analyses ``pred``: the
    kernels release the GIL, so on two cores the two masks are processed side by side."""
    from segscore.engine import side_by_side

    kw = {"spacing": spacing, "prune_length": prune_length}
    if not PARALLEL_MIN_VOXELS <= np.size(gt) <= PARALLEL_MAX_VOXELS:  # big volumes: half the peak memory
        return prepare_reference(gt, prune_px=prune_px, **kw)
    pred_b = as_binary(pred, "prediction")
    _, sp, pl = check_geometry(spacing, prune_length, np.ndim(gt))
    pa, ref = side_by_side([lambda: _analyse(pred_b, prune_px, sp, pl) if np.shape(pred_b) == np.shape(gt) else None,
                            lambda: prepare_reference(gt, prune_px=prune_px, **kw)], threads=2)
    if pa is not None:
        ref.extra["_pred_analysis"] = pa
    return ref


def _frac(num, den, key, notes, why):
    if den > 0:
        return float(num / den)
    notes[key] = why
    return None


def apply_ignore(gt, pred, *, ignore_label=None, ignore_mask=None, gt_name: str = "<reference mask>",
                 pred_name: str = "<prediction mask>") -> tuple:
    """``(gt, pred, warnings)``: masks read raw (:func:`segscore.curvilinear.masks.load_mask` with
    ``raw=True``) with the ignore region (:func:`segscore.metrics.masks.ignore_region`: where the
    reference equals ``ignore_label``, or ``ignore_mask``, an array or path, is true) set to 0 in
    both, then checked binary. ``warnings``: how many voxels were ignored, and a line when the
    prediction holds ``ignore_label`` and the reference none (the roles look swapped); that line is
    the refusal (ScoreError) when the prediction is then not binary."""
    from segscore.curvilinear.masks import load_mask
    from segscore.io.readers import input_name
    from segscore.metrics.masks import ignore_region, ignored_warning, swapped_ignore_warning, zero_ignored

    if np.shape(gt) != np.shape(pred):
        raise ScoreError(f"{pred_name}: shape {np.shape(pred)} differs from the reference {gt_name}'s "
                         f"{np.shape(gt)}; resample one onto the other's grid")
    said = []
    if ignore_mask is not None:
        mask = ignore_mask if not isinstance(ignore_mask, (str, os.PathLike)) else \
            load_mask(ignore_mask, what="ignore mask", raw=True)[0]
    else:
        mask = None
        said += swapped_ignore_warning(gt, pred, ignore_label, truth_name=gt_name, pred_name=pred_name,
                                       order="the truth is `--gt GT` in `segscore curve PRED --gt GT`")
    region = ignore_region(gt, ignore_label=ignore_label, ignore_mask=mask,
                           mask_name=input_name(ignore_mask, "ignore mask"))
    gt = as_binary(zero_ignored(gt, region), gt_name)
    try:
        pred = as_binary(zero_ignored(pred, region), pred_name)
    except ScoreError:
        if said:  # the ignore value left in a "prediction" that is the truth: say so, not only "not binary"
            raise ScoreError(said[0]) from None
        raise
    said = ignored_warning(int(np.count_nonzero(region)) if region is not None else 0, ignore_label,
                           ignore_mask) + said
    return gt, pred, said


@as_result
def _score(gt, pred, *, prune_px: float | None = None, reference: Reference | None = None, voxel_size=None,
          all_metrics: bool = False, spacing=None, prune_length=None, with_erl: bool = True,
          reference_radii: bool = False, betti: bool = True) -> dict:
    """Score ``pred`` against ``gt`` (2D or 3D binary masks of one shape); one flat dict.

    Compatibility entry point (curvicost's signature, arrays only): prefer :func:`segscore.api.curve`.

    Parameters
    ----------
    gt, pred : array-like, binary (see :func:`segscore.curvilinear.masks.as_binary`).
    prune_px : spur-pruning length in voxels, applied to both graphs (default 5, or the
        reference's when ``reference`` is given).
    reference : the result of ``prepare_reference(gt, prune_px=...)``; ``gt`` may then be None.
    voxel_size : carried into the row as curvicost carries it (it does not change a number).
    spacing : one voxel size per axis in array order (or a :class:`segscore.io.spacing.Spacing`
        read from a file's header); lengths (traceable, ERL, edges), radii, the r^4 conductance
        and hd95 are then in its unit (default: voxels, curvicost's numbers). Skeleton voxel
        lengths are chessboard lengths (:mod:`segscore.kernels.tangent`: 1 per voxel at unit
        spacing, so counts are unchanged there); edges are Euclidean step sums. apls, junction_f1,
        cbdice_star and the sink-matching radius stay in voxels.
    prune_length : spur-pruning length in the spacing's unit, instead of ``prune_px`` voxels.
    all_metrics : also compute :data:`OPTIONAL_KEYS` (hd95 takes full distance maps of both masks: slower;
        apls and junction_f1: :func:`segscore.curvilinear.metrics.apls` and ``junction_f1``).
    with_erl : False skips ERL and the DIADEM-like score (curvicost's ``with_erl``, ``--no-erl``):
        :data:`ERL_KEYS` are then None, each with :data:`NO_ERL_NOTE`.
    reference_radii : also compute :data:`REFRADII_KEYS` (curvicost's ``reference_radii``,
        ``--reference-radii``): the conductance with the prediction's radii read from the reference.
    betti : with ``all_metrics``, compute ``betti_matching`` (False: null with a note; the audit,
        which does not correlate it, skips it).

    A metric the masks make impossible (no source on the reference, an empty skeleton) is None
    and ``notes[metric]`` says why; an empty prediction's costs are 0, not null.
    """
    if reference is None:
        if gt is None:
            raise ScoreError("reference: give the reference mask or a prepared reference (prepare_reference(gt))")
        reference = _prepare_beside(gt, pred, 5 if prune_px is None else prune_px, spacing, prune_length)
    elif gt is not None and np.shape(gt) != tuple(reference.shape):
        raise ScoreError(f"reference: prepared for shape {reference.shape}, the mask given has {np.shape(gt)}")
    if prune_px is not None and reference.prune_px != prune_px:
        raise ScoreError(f"prune_px: the reference was prepared with prune_px={reference.prune_px}, not {prune_px}")
    if reference is not None and (spacing is not None or prune_length is not None):
        rec, _, pl = check_geometry(spacing, prune_length, len(reference.shape))
        mine = reference.spacing.values if reference.spacing is not None else (1.0,) * len(reference.shape)
        if (spacing is not None and tuple(rec.values) != tuple(mine)) or (prune_length is not None
                                                                          and pl != reference.prune_length):
            raise ScoreError(f"spacing/prune_length: the reference was prepared with spacing {list(mine)} and "
                             f"prune_length {reference.prune_length}; prepare it with the ones given")
    ref = reference
    pa0 = ref.extra.get("_pred_analysis")
    pred = pa0.mask if pa0 is not None else as_binary(pred, "prediction")
    if pred.shape != tuple(ref.shape):
        raise ScoreError(f"prediction: shape {pred.shape} differs from the reference's {tuple(ref.shape)}; "
                         "resample one onto the other's grid")
    notes: dict[str, str] = {}
    gt_m = ref.gt
    pa = ref.extra.pop("_pred_analysis", None)
    if pa is None or pa.mask is not pred:
        pa = _analyse(pred, ref.prune_px, ref.sp, ref.prune_length)

    counts = M.overlap_counts(gt_m, pred, ref.a.skel, pa.skel)
    dice, iou = M.dice_iou_of(counts)
    pl = pa.lab.ravel()[ref.skel_idx].astype(np.int64)
    g = pa.graph
    if with_erl:
        erl_v, merged = M.erl(ref.obj, pl, ref.weights)
        if g is None:  # an empty prediction: every cost is 0 (a value, not a null)
            pred_nodes = np.zeros((0, len(ref.shape)))
        elif len(g.alive_edges()) == 0 and len(g.edge_u):
            pred_nodes = np.zeros((0, len(ref.shape)))
        else:
            pred_nodes = g.node_pos[g.node_alive]
        diadem = M.diadem_like(ref.diadem_pos, ref.diadem_w, pred_nodes)
        if diadem is None:
            notes["diadem_like"] = "the reference graph has no branch longer than prune_px"
    else:
        erl_v, merged, diadem = None, None, None

    # costs
    reach_m = C.reach_multi(ref.rl, ref.skel_coords, ref.root_k, pl, ref.weights) if pa.n_comp else 0
    if ref.src_k is not None and pa.n_comp:
        reach_s = C.reach_single(ref.rl, ref.skel_coords, ref.src_k, pl, ref.weights)
    else:
        reach_s = 0
    cond, perf = 0.0, 0.0
    if g is not None and len(g.alive_edges()) and ref.src_pos is not None:
        src = C.nearest_node(g, ref.src_pos)
        cond = C.kirchhoff(g, src, ref.sinks, pa.lab, pa.edt) if len(ref.sinks) else 0.0
        perf = C.perfused_of_self(g, src)
    elif g is not None and len(g.alive_edges()):
        perf = None
    if perf is None:
        notes["perfused_of_self"] = "the reference has no source (no branch longer than prune_px)"
    why_src = "the reference graph has no branch longer than prune_px, so no source and no sinks"
    cfrac = _frac(cond, ref.conductance_ref, "conductance_frac", notes,
                  "the reference's own conductance is 0 (" + why_src + ")")
    if cfrac is None:
        for k in ("conductance_twosided",) + CONDUCTANCE_SIDE_KEYS:
            notes[k] = notes["conductance_frac"]
    if with_erl:
        erl_frac = _frac(erl_v, ref.erl_ref, "erl_frac", notes, "the reference skeleton is empty")
        if erl_frac is None:
            notes["erl_star"] = notes["erl_frac"]
        if diadem is None:
            notes["node_recall"] = notes["diadem_like"]
        erl_split = _frac(M.erl_split(ref.obj, pl, ref.weights), ref.erl_split_ref, "erl_split", notes,
                          "the reference skeleton is empty")
    else:
        erl_frac = erl_split = None
        notes.update(dict.fromkeys(ERL_KEYS, NO_ERL_NOTE))
    # the pruning length over the median radius, both in one unit (a prune_px in voxels times the mean spacing)
    prune_len = ref.prune_length if ref.prune_length is not None else \
        ref.prune_px * (1.0 if ref.sp is None else float(np.mean(ref.sp)))
    prune_radii = float(prune_len / ref.median_radius) if ref.median_radius > 0 else None
    if prune_radii is None:
        notes["prune_radii"] = "the reference skeleton has no voxel with a radius"
    row = {
        "dice": dice, "iou": iou,
        "cldice": M.cldice_of(counts),
        "betti0_gt": int(ref.a.n_comp), "betti0_pred": int(pa.n_comp),
        "betti0_error": abs(int(pa.n_comp) - int(ref.a.n_comp)),
        "erl": None if erl_v is None else float(erl_v),
        "erl_frac": erl_frac,
        "merged_frac": None if merged is None else float(merged),
        "diadem_like": diadem,
        "traceable_frac": _frac(reach_m, ref.base_multi, "traceable_frac", notes, "the reference skeleton is empty"),
        "traceable_single_frac": _frac(reach_s, ref.base_single, "traceable_single_frac", notes, why_src),
        "conductance_twosided": None if cfrac is None else (min(cfrac, 1.0 / cfrac) if cfrac > 0 else 0.0),
        "conductance_frac": cfrac,
        "perfused_of_self": perf,
        "traceable_length": int(reach_m) if ref.weights is None else float(reach_m),
        "conductance": float(cond),
        "traceable_length_ref": int(ref.base_multi) if ref.weights is None else float(ref.base_multi),
        "conductance_ref": float(ref.conductance_ref),
        "prune_px": ref.prune_px,
        "prune_radii": prune_radii,
        "voxel_size": None if voxel_size is None else [float(v) for v in voxel_size],
        "erl_star": erl_frac,
        "erl_split": erl_split,
        "node_recall": diadem,
        "conductance_excess": None if cfrac is None else max(cfrac - 1.0, 0.0),
        "conductance_deficit": None if cfrac is None else max(1.0 - cfrac, 0.0),
        "spacing": list(ref.spacing.values) if ref.spacing is not None else [1.0] * len(ref.shape),
        "spacing_source": ref.spacing.source if ref.spacing is not None else "default",
        "spacing_unit": ref.spacing.unit if ref.spacing is not None else None,
        "prune_length": ref.prune_length,
        "notes": notes,
        "warnings": [],
    }
    refradii = _refradii(ref, pa, notes) if reference_radii else None
    pa.lab = None  # read by the costs only: the optional metrics run without the label image
    if all_metrics:
        row.update(_optional(ref, gt_m, pa, pred, notes, betti))
    if refradii is not None:
        row.update(refradii)
    order = {k: i for i, k in enumerate(ROW_KEYS + OPTIONAL_KEYS + REFRADII_KEYS)}
    row["notes"] = dict(sorted(notes.items(), key=lambda kv: order.get(kv[0], len(order))))
    row["warnings"] = scale_warnings(row)
    return row


score = moved(_score, "segscore.curvilinear.scoring.score",
              "segscore.api.curve(truth=gt, pred=pred, ...)")


def _optional(ref: Reference, gt_m, pa: _Analysis, pred, notes, betti: bool = True) -> dict:
    recall = M.skeleton_recall(ref.a.skel, pred)
    if recall is None:
        notes["skeleton_recall"] = "the reference skeleton is empty"
    cb = M.cbdice_star(ref.a.skel, gt_m, pa.skel, pred,
                       gt_radii=ref.skeleton_radii() if gt_m is ref.gt else None)
    if cb is None:
        notes["cbdice_star"] = "a skeleton is empty"
    if not betti:
        notes["betti_matching"] = "not computed (betti=False)"
    rp, pp = ref.points(), M.SkeletonPoints(pa.skel)
    ap = M.apls(rp, pp)
    if ap is None:
        notes["apls"] = ("no two control points (end points, junction clusters) of either skeleton are joined by a "
                         "skeleton path")
    jf = M.junction_f1(rp, pp)
    if jf is None:
        notes["junction_f1"] = "neither skeleton has a junction (a voxel with three or more skeleton neighbours)"
    return {"skeleton_recall": recall, "cbdice_star": cb, "hd95": M.hd95(gt_m, pred, ref.sp),
            "betti_matching": betti_matching_error(gt_m, pred) if betti else None,
            "apls": ap, "junction_f1": jf}


def _refradii(ref: Reference, pa: _Analysis, notes) -> dict:
    """curvicost's topology-only conductance (``reference_radii``): the prediction's graph and sinks
    as for ``conductance``, with the radius at each prediction-skeleton voxel replaced by the
    reference's radius at the nearest reference-skeleton voxel strictly within
    :data:`REFRADII_MATCH_PX` voxels (cKDTree's nearest, ties as cKDTree breaks them:
    :class:`segscore.curvilinear.graph.PointTree`); calibre then cannot enter, connectivity, path
    length and added or missing branches still do."""
    from segscore.curvilinear.graph import PointTree

    g = pa.graph
    cond = 0.0
    if g is not None and len(g.alive_edges()) and ref.src_pos is not None and len(ref.sinks):
        if "ref_tree" not in ref.extra:
            ref.extra["ref_tree"] = PointTree(ref.skel_coords)
        idx = pa.edt.idx
        pts = np.array(np.unravel_index(idx, pa.mask.shape), dtype=np.float64).T.reshape(-1, pa.mask.ndim)
        d, j = ref.extra["ref_tree"].query(pts, distance_upper_bound=REFRADII_MATCH_PX)
        ok = np.isfinite(d)
        val = pa.edt.val.copy()
        val[ok] = ref.a.edt.val[j[ok]]
        src = C.nearest_node(g, ref.src_pos)
        cond = C.kirchhoff(g, src, ref.sinks, pa.lab, SkeletonRadius(idx, val))
    frac = _frac(cond, ref.conductance_ref, "conductance_refradii_frac", notes,
                 "the reference's own conductance is 0 (the reference graph has no branch longer than prune_px, "
                 "so no source and no sinks)")
    if frac is None:
        notes["conductance_refradii_twosided"] = notes["conductance_refradii_frac"]
    return {"conductance_refradii_frac": frac,
            "conductance_refradii_twosided": None if frac is None else (min(frac, 1.0 / frac) if frac > 0 else 0.0)}


#: how a spacing read from a file names its origin in a warning
_SPACING_FROM = {"nifti": "the NIfTI header", "ome-zarr": "the OME-Zarr metadata", "tiff": "the TIFF resolution tags",
                 "imagej": "the ImageJ metadata"}


def scale_warnings(row: dict) -> list[str]:
    """Warnings a reader of ``row`` should see: pruning far from 1-4 vessel radii, anisotropy."""
    out = []
    pr = row.get("prune_radii")
    if pr is not None and not (1.0 <= pr <= 4.0):
        out.append(f"--prune-px {row['prune_px']:g} is {pr:.2f} median vessel radii, outside 1-4: scale it to the "
                   "structure (e.g. 2-3 radii) or the costs are not comparable across datasets")
    vs = row.get("voxel_size")
    applied = row.get("spacing")
    src = row.get("spacing_source")
    if applied is not None and src not in (None, "default", "given") and len(set(applied)) > 1:
        unit = row.get("spacing_unit")
        unit = "" if unit is None else " " + (unit if isinstance(unit, str) else "/".join(map(str, unit)))
        out.append(f"anisotropic spacing {tuple(applied)}{unit} from {_SPACING_FROM.get(src, src)} applied: lengths, "
                   "radii, the r^4 conductance and hd95 are in that unit, where curvicost measures in voxels; give "
                   f"--spacing {' '.join(['1'] * len(applied))} to reproduce curvicost's numbers")
    if vs is not None and len(set(vs)) > 1 and (applied is None or list(applied) != list(vs)):
        out.append(f"anisotropic voxels {tuple(vs)} not applied (spacing {applied}): lengths and radii are in voxels "
                   "and the r^4 conductance is off by the anisotropy; give --spacing, or resample to isotropic voxels")
    if row.get("betti_matching") is not None and len(row.get("spacing") or ()) == 3:
        out.append(BETTI_MATCHING_3D_WARNING)
    return out
