"""Every segmentation metric of the scorecard, on one field, from one contingency table.

Keys (spacr.scorecard's names): ``match_iou, precision, recall, f1, true_positives,
false_positives, false_negatives, iou_mean, dice_per_object, dice_pixel, n_matched,
ap_0.5 ... ap_0.9, ap_mean, boundary_precision_{t}px, boundary_recall_{t}px,
boundary_f1_{t}px, splits, merges, n_truth, n_pred, count_error, area_error_mean,
area_error_abs_mean``; panoptic quality at the match IoU ``pq, sq, rq`` (stardist's
``panoptic_quality``: the matched IoUs summed over tp + fp/2 + fn/2; SQ their mean, RQ = tp /
(tp + fp/2 + fn/2)) and panoptica's Dice-based ``pq_dsc, sq_dsc``; the connectomics measures
``voi_split`` = H(prediction | truth) and ``voi_merge`` = H(truth | prediction) in bits (scikit-image's
``variation_of_information(truth, prediction)`` in that order) and ``adapted_rand_error,
adapted_rand_precision, adapted_rand_recall`` (scikit-image's ``adapted_rand_error(truth,
prediction)``), with the truth's background left out unless ``count_background`` (recorded);
with ``surface=True`` the surface distances in physical units ``hd95_per_object,
assd_per_object, nsd_per_object`` (each with ``_sd``), ``hd_pixel, hd95_pixel, assd_pixel,
nsd_pixel, nsd_tolerance, spacing`` (:mod:`segscore.objects.surface`); with ``per_object=True``
the rows ``per_object`` (:func:`per_object_rows`); ``shape`` (the images' shape: with ``spacing``,
the image diagonal a distance counts as under ``--missing worst``, :mod:`segscore.metrics.missing`); and ``notes`` ({metric: why it is null}). A
ratio that does not exist (an empty truth or prediction, nothing matched) is None with a note,
never 0 or NaN.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError, moved
from segscore.io.results import as_result
from segscore.objects.matching import (DEFAULT_IOU_THRESHOLDS, Match, _chosen_index, _ratio, ap_key,
                                       match_table, sweep)
from segscore.objects.table import ContingencyTable, check_pair, table_for

#: boundary tolerances in pixels (Chebyshev distance)
DEFAULT_BOUNDARY_TOLERANCES = (1, 2, 3)
#: fraction of a truth object a prediction must cover to count in a split or a merge
DEFAULT_MINIMUM_OVERLAP = 0.1


def _f1(p, r):
    if p is None or r is None:
        return None
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


# ---------------------------------------------------------------- parts (each from a table)

def _dice_sums(table: ContingencyTable, match: Match) -> dict:
    ious = np.asarray(match.ious, dtype=np.float64)
    return {"dice_sum": math.fsum(2 * ious / (1 + ious)) if ious.size else 0.0,  # exactly rounded: order-free
            "n_matched": int(ious.size),
            "fg_overlap": table.foreground_overlap,
            "fg_total": int(table.truth_area.sum() + table.pred_area.sum())}


def _dice_from_sums(s: dict, notes: dict) -> dict:
    per_object = s["dice_sum"] / s["n_matched"] if s["n_matched"] else None
    if per_object is None:
        notes["dice_per_object"] = "no matched pairs at the match IoU"
    pixel = _ratio(2 * s["fg_overlap"], s["fg_total"])
    if pixel is None:
        notes["dice_pixel"] = "neither image has a labelled pixel"
    return {"dice_per_object": per_object, "dice_pixel": pixel, "n_matched": s["n_matched"]}


def _area_sums(table: ContingencyTable, match: Match) -> dict:
    idx = _chosen_index(table, match)
    ta = table.truth_area[table.pair_t[idx]].astype(np.float64)
    pa = table.pred_area[table.pair_p[idx]].astype(np.float64)
    err = (pa - ta) / ta
    return {"area_err_sum": math.fsum(err), "area_abs_sum": math.fsum(np.abs(err)), "n_matched": int(idx.size),
            "n_truth": table.n_truth, "n_pred": table.n_pred}


def _areas_from_sums(s: dict, notes: dict) -> dict:
    n = s["n_matched"]
    if not n:
        notes["area_error_mean"] = notes["area_error_abs_mean"] = "no matched pairs at the match IoU"
    return {"n_truth": s["n_truth"], "n_pred": s["n_pred"], "count_error": s["n_pred"] - s["n_truth"],
            "area_error_mean": s["area_err_sum"] / n if n else None,
            "area_error_abs_mean": s["area_abs_sum"] / n if n else None}


def _splits_merges_table(table: ContingencyTable, minimum_overlap: float) -> dict:
    minimum_overlap = float(minimum_overlap)
    if not 0 < minimum_overlap <= 1:
        raise ScoreError(f"minimum_overlap {minimum_overlap}: must be in (0, 1]")
    covers = table.pair_n / table.truth_area[table.pair_t] >= minimum_overlap
    per_truth = np.bincount(table.pair_t[covers], minlength=table.n_truth)
    per_pred = np.bincount(table.pair_p[covers], minlength=table.n_pred)
    return {"splits": int((per_truth >= 2).sum()), "merges": int((per_pred >= 2).sum())}


def _boundary_from_counts(s: dict, notes: dict) -> dict:
    out = {}
    for k, tol in enumerate(s["tolerances"]):
        p = _ratio(s["pred_matched"][k], s["pred_boundary"])
        r = _ratio(s["truth_matched"][k], s["truth_boundary"])
        if p is None:
            notes[f"boundary_precision_{tol}px"] = "the prediction has no boundary pixels"
        if r is None:
            notes[f"boundary_recall_{tol}px"] = "the truth has no boundary pixels"
        if p is None and r is None:
            f = None
            notes[f"boundary_f1_{tol}px"] = "neither image has boundary pixels"
        elif p is None or r is None:
            f = 0.0  # one side has a boundary and the other none: nothing of it was found
        else:
            f = _f1(p, r)
        out[f"boundary_precision_{tol}px"] = p
        out[f"boundary_recall_{tol}px"] = r
        out[f"boundary_f1_{tol}px"] = f
    return out


# ---------------------------------------------------------------- the public parts

def dice(truth, pred, threshold: float = 0.5, *, table=None) -> dict:
    """Per-object Dice (mean 2·IoU/(1+IoU) over pairs matched at ``threshold``) and pixel-wise Dice.

    ``dice_per_object`` is None when nothing matched; ``dice_pixel`` when neither image has
    a labelled pixel. ``notes`` says why.
    """
    tab = table_for(truth, pred, table)
    notes = {}
    out = _dice_from_sums(_dice_sums(tab, match_table(tab, threshold)), notes)
    out["notes"] = notes
    return out


def counts_and_areas(truth, pred, threshold: float = 0.5, *, table=None) -> dict:
    """``count_error = n_pred - n_truth`` (signed) and the relative area error of matched pairs.

    ``area_error_mean`` is the mean of (pred area - truth area) / truth area over pairs matched
    at ``threshold``; ``area_error_abs_mean`` the mean of its absolute value. None when nothing matched.
    """
    tab = table_for(truth, pred, table)
    notes = {}
    out = _areas_from_sums(_area_sums(tab, match_table(tab, threshold)), notes)
    out["notes"] = notes
    return out


def splits_and_merges(truth, pred, minimum_overlap: float = DEFAULT_MINIMUM_OVERLAP, *, table=None) -> dict:
    """Truth objects split, and predicted objects that merge truth objects.

    A truth object is split when two or more predicted objects each cover >= ``minimum_overlap``
    of it; a predicted object merges when it covers >= ``minimum_overlap`` of each of two or more
    truth objects (both fractions of the TRUTH object's area, as the issue defines them;
    spacr measures the merge fraction against the predicted object instead).
    """
    return _splits_merges_table(table_for(truth, pred, table), minimum_overlap)


def boundary_f1(truth, pred, tolerances=DEFAULT_BOUNDARY_TOLERANCES) -> dict:
    """Boundary precision, recall and F1 at each tolerance (pixels, Chebyshev distance).

    See :mod:`segscore.kernels.boundary` for the definitions. Precision is None when the
    prediction has no boundary pixel, recall when the truth has none; F1 is 0 when exactly
    one of them is None and None when both are.
    """
    t, p = check_pair(truth, pred, ndims=(2, 3))
    notes = {}
    out = _boundary_from_counts(_boundary_counts(t, p, tuple(tolerances)), notes)
    out["notes"] = notes
    return out


# ---------------------------------------------------------------- the whole scorecard

def _check_tolerances(tolerances) -> list[int]:
    tols = [int(x) for x in tolerances]
    if any(x < 0 for x in tols) or any(x != y for x, y in zip(tols, tolerances)):
        raise ScoreError(f"boundary tolerances {list(tolerances)}: must be whole numbers of pixels >= 0")
    return tols


def canonical_tile(block: np.ndarray) -> np.ndarray:
    """A label block (non-negative ids, :func:`segscore.objects.table.as_labels`) in one of the two
    dtypes the tile kernels are compiled for: uint32 for ids of up to 32 bits (a view of 32-bit
    ids, which are non-negative here; a copy of this tile only for 8- and 16-bit ids: 4 bytes per
    voxel of the tile, never of the whole image), uint64 for 64-bit ids (a view). The same ids,
    so the same numbers, whatever the images' dtypes; and the first run compiles the contingency
    and boundary kernels once, not once per input dtype."""
    if block.dtype.itemsize == 8:
        return block.view(np.uint64)
    if block.dtype.itemsize == 4:
        return block.view(np.uint32)
    return block.astype(np.uint32)


def _boundary_marks(labels) -> np.ndarray:
    """The boundary marks (uint8 0/1, :func:`segscore.kernels.boundary.boundary_mask`) of a 2D or
    3D label block, in the kernels' 3D view."""
    from segscore.kernels.boundary import boundary_mask

    lab3 = labels[None] if labels.ndim == 2 else labels
    marks = np.zeros(lab3.shape, np.uint8)
    boundary_mask(lab3, marks)
    return marks


def _boundary_tile(t, p, own, tols) -> dict:
    """Boundary counts of the owned rows ``own`` (a slice of axis 0) of two label blocks read
    with a halo of ``max(tols) + 1`` rows (or the whole image): every boundary mark within
    ``max(tols)`` of an owned row is then the whole image's."""
    return _marks_tile(_boundary_marks(t), _boundary_marks(p), own, tols, 1 if t.ndim == 2 else 0)


def _marks_tile(te, pe, own, tols, axis) -> dict:
    """:func:`_boundary_tile` on the blocks' boundary marks ``te``, ``pe`` (3D views; ``axis``
    the tiled one): the labels themselves are no longer needed, so a tile can free them first."""
    from segscore.kernels.boundary import nearest_counts, pack_marks

    cut = [slice(None)] * 3
    cut[axis] = own
    n_t = int(np.count_nonzero(te[tuple(cut)]))
    n_p = int(np.count_nonzero(pe[tuple(cut)]))
    T = max(tols) if tols else 0
    ph = np.zeros(T + 2, np.int64)
    th = np.zeros(T + 2, np.int64)
    # owned marks against every mark of the block (a tile may own marks of one image only,
    # with the other's within reach in its halo); with none of the other's, none is in reach
    t_any, p_any = (n_p and te.any()), (n_t and pe.any())
    if t_any or p_any:  # both directions read both images' marks, packed 64 to a word once
        tb, pb, C = pack_marks(te), pack_marks(pe), te.shape[2]
        if t_any:
            nearest_counts(pb, tb, T, ph, own.start, own.stop, axis, C)
        if p_any:
            nearest_counts(tb, pb, T, th, own.start, own.stop, axis, C)
    return {"truth_boundary": n_t, "pred_boundary": n_p, "ph": ph, "th": th}


def _surface_tile(t, p, own, offset) -> tuple:
    """The surface voxels (:func:`segscore.objects.surface.label_surfaces`) of both label blocks'
    owned rows, in image coordinates: the blocks carry a halo of at least one row, so an owned
    voxel's neighbours are all read unless it lies on the image's own border."""
    from segscore.objects.surface import label_surfaces

    planar = t.ndim == 2
    axis = 1 if planar else 0
    out = []
    for block in (t, p):
        coords, ids, fg = label_surfaces(block[None] if planar else block, planar, axis, own.start, own.stop)
        coords[:, axis] += offset
        out += [coords, ids, fg]
    return tuple(out)


def _boundary_totals(parts, tols) -> dict:
    n_t = sum(b["truth_boundary"] for b in parts)
    n_p = sum(b["pred_boundary"] for b in parts)
    T = max(tols) if tols else 0
    ph = np.sum([b["ph"] for b in parts], axis=0) if parts else np.zeros(T + 2, np.int64)
    th = np.sum([b["th"] for b in parts], axis=0) if parts else np.zeros(T + 2, np.int64)
    if not (n_t and n_p):
        ph[:] = 0
        th[:] = 0
    pc, tc = np.cumsum(ph), np.cumsum(th)
    return {"tolerances": tols, "truth_boundary": int(n_t), "pred_boundary": int(n_p),
            "pred_matched": [int(pc[x]) for x in tols], "truth_matched": [int(tc[x]) for x in tols]}


def _boundary_counts(t, p, tolerances) -> dict:
    """Boundary pixel counts and matched counts at each tolerance (additive over fields)."""
    tols = _check_tolerances(tolerances)
    if t.ndim not in (2, 3):
        raise ScoreError(f"boundary F1 of shape {t.shape}: expected a 2D or 3D label image")
    return _boundary_totals([_boundary_tile(t, p, slice(0, t.shape[0]), tols)], tols)


def stream_pair(truth, pred, *, boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES, contingency=True,
                tile_rows=None, executor=None, threads=None, progress=None, surface: bool = False,
                details: dict | None = None):
    """The contingency table and boundary counts of two label images, reduced tile by tile.

    ``truth`` and ``pred`` are paths (TIFF, ``.npy``, PNG, NIfTI, zarr; ``PATH.zarr/KEY``
    inside a group), arrays (NumPy, memory-mapped, zarr, dask) or sources, 2D or 3D, of one
    shape. Tiles are bands of ``tile_rows`` rows (slices in 3D) read with a halo of the
    largest tolerance + 1; arrays already in memory are one tile unless ``tile_rows`` is
    given. The table and the counts are exact integer sums, so the result does not depend on
    the tiles, the executor or the threads. Returns ``(table or None, boundary counts)``.

    ``details``, a dict, receives the images' ``shape``; with ``surface`` also ``surface``: the
    surface voxels of every object of both images (:func:`segscore.objects.surface.collect`,
    about 21 bytes per surface voxel, gathered tile by tile: no image is held whole).
    """
    from segscore.engine import check_options, reduce
    from segscore.objects.tiles import label_tiles
    from segscore.io.readers import open_labels
    from segscore.io.sources import ArraySource
    from segscore.objects.table import as_labels

    tols = _check_tolerances(tuple(boundary_tolerances))
    halo = (max(tols) if tols else 0) + 1
    with open_labels(truth, name="truth") as ts, open_labels(pred, name="prediction") as ps:
        if ts.shape != ps.shape:
            raise ScoreError(f"{ps.name} {ps.shape} and {ts.name} {ts.shape} are different shapes; "
                             "score a prediction on its truth's grid")
        per_row = int(np.prod(ts.shape[1:], dtype=np.int64))  # pixels per position of axis 0
        engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads)
        loading = None
        if engine["executor"] in (None, "threads", "synchronous"):  # elsewhere the workers load their own
            from segscore.objects.warmup import BIG_IMAGE, start_loading

            wide = max(np.dtype(ts.dtype).itemsize, np.dtype(ps.dtype).itemsize) == 8
            loading = start_loading(wide, surface, surface and per_row * int(ts.shape[0]) > BIG_IMAGE)
        windows = label_tiles(ts.shape, halo, in_memory=isinstance(ts, ArraySource) and isinstance(ps, ArraySource),
                              spread=surface, **engine)
        names = (ts.name, ps.name)
        if surface and len(ts.shape) not in (2, 3):
            raise ScoreError(f"surface distances of shape {ts.shape}: expected 2D or 3D label images")
        if details is not None:
            details["shape"] = tuple(int(n) for n in ts.shape)

        n0, rest = int(ts.shape[0]), tuple(slice(0, int(n)) for n in ts.shape[1:])

        def chunk(tile):
            # each tile reads its own blocks (the window plus the halo) and lets go of the label
            # blocks as soon as their boundary marks are made: a thread holds at most both label
            # blocks and one block of marks at once
            w0 = tile.window[0]
            lo, hi = max(0, w0.start - halo), min(n0, w0.stop + halo)
            own = slice(w0.start - lo, w0.stop - lo)
            t = canonical_tile(as_labels(ts.read((slice(lo, hi),) + rest), names[0]))
            p = canonical_tile(as_labels(ps.read((slice(lo, hi),) + rest), names[1]))
            # the kernels are imported once the tile is read: numba starts on the loading thread
            # meanwhile (and a dispatcher closed over would be pickled with the task)
            from segscore.kernels.contingency import contingency as table_of

            table = table_of(t[own], p[own], w0.start * per_row) if contingency else None
            out = {"tables": [table] if contingency else [], "surface": []}
            if surface:
                out["surface"].append(_surface_tile(t, p, own, lo))
            axis = 1 if t.ndim == 2 else 0
            te = _boundary_marks(t)
            del t
            pe = _boundary_marks(p)
            del p
            out["boundary"] = [_marks_tile(te, pe, own, tols, axis)]
            return out

        def combine(a, b):
            return {"tables": a["tables"] + b["tables"], "boundary": a["boundary"] + b["boundary"],
                    "surface": a["surface"] + b["surface"]}

        try:
            out = reduce(None, chunk, combine, windows=windows, progress=progress, **engine)  # tiles read their own
        finally:
            if loading is not None:
                loading.join()
    out = out or {"tables": [], "boundary": [], "surface": []}
    if surface and details is not None:
        from segscore.objects.surface import collect

        details["surface"] = collect(out["surface"])
    table = None
    if contingency:
        from segscore.kernels.contingency import merge_tables

        tables = out["tables"]
        table = ContingencyTable(*(tables[0] if len(tables) == 1 else merge_tables(tables)),
                                 n_pixels=per_row * int(ts.shape[0]))
    return table, _boundary_totals(out["boundary"], tols)


def _xlogx_sum(counts) -> float:
    """sum of n log2 n over positive counts, exactly rounded (order-free)."""
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    return math.fsum((c * np.log2(c)).tolist())


def _square_sum(counts) -> int:
    """sum of n**2, exact at any image size (int64 where it cannot overflow, Python integers else)."""
    c = np.asarray(counts, dtype=np.int64)
    if c.size == 0:
        return 0
    top = int(np.abs(c).max())
    if top < 1 << 31 and c.size * top * top < 1 << 62:
        return int(np.dot(c, c))
    return sum(int(v) * int(v) for v in c.tolist())


def _information_sums(table: ContingencyTable, count_background: bool) -> dict:
    """The additive statistics of variation of information and the adapted Rand error.

    Cells of the joint table: every overlapping pair of objects, each truth object's pixels on
    the prediction's background (one "prediction 0" column), and, with ``count_background``,
    the truth background's row (its pixels on each predicted object and on the prediction's
    background). Without it the truth background is left out, as CREMI and scikit-image's
    ``adapted_rand_error`` leave it out. Sums of n log2 n and of n**2 over the cells, the truth
    rows and the prediction columns that belong to objects add over fields (fields pooled are
    disjoint sets of objects); the background's row, column and cell are kept as counts and
    entered at the end, so pooled fields score as the fields side by side in one image."""
    k = table.pair_t.size
    per_truth = np.bincount(table.pair_t, weights=table.pair_n, minlength=table.n_truth).astype(np.int64) \
        if k else np.zeros(table.n_truth, np.int64)
    per_pred = np.bincount(table.pair_p, weights=table.pair_n, minlength=table.n_pred).astype(np.int64) \
        if k else np.zeros(table.n_pred, np.int64)
    t_on_bg = table.truth_area.astype(np.int64) - per_truth  # truth object i on prediction 0
    cells = [table.pair_n.astype(np.int64), t_on_bg]
    cols = per_pred
    truth_bg = bg_bg = 0
    pred_bg = int(t_on_bg.sum())
    if count_background:
        if table.n_pixels is None:
            raise ScoreError("count_background needs the image size; score the images, not a bare table")
        bg_on_p = table.pred_area.astype(np.int64) - per_pred  # truth background on prediction j
        truth_bg = int(table.n_pixels) - int(table.truth_area.sum())
        bg_bg = truth_bg - int(bg_on_p.sum())
        cells.append(bg_on_p)
        cols = table.pred_area.astype(np.int64)
        pred_bg += bg_bg
    cells = np.concatenate(cells)
    rows = table.truth_area.astype(np.int64)
    return {"n": int(rows.sum()) + truth_bg, "cell_xlogx": _xlogx_sum(cells), "truth_xlogx": _xlogx_sum(rows),
            "pred_xlogx": _xlogx_sum(cols), "cell_sq": _square_sum(cells), "truth_sq": _square_sum(rows),
            "pred_sq": _square_sum(cols), "truth_bg": truth_bg, "pred_bg": pred_bg, "bg_bg": bg_bg}


def _information_from_sums(s: dict, notes: dict) -> dict:
    """VOI split and merge (bits, as scikit-image) and the adapted Rand error, precision and recall."""
    n = s["n"]
    out = {"voi_split": None, "voi_merge": None, "adapted_rand_error": None, "adapted_rand_precision": None,
           "adapted_rand_recall": None}
    if n == 0:
        for k in out:
            notes[k] = "no pixel is counted (the truth has no object, and its background is not counted)"
        return out
    cell_xlogx = s["cell_xlogx"] + _xlogx_sum([s["bg_bg"]])
    truth_xlogx = s["truth_xlogx"] + _xlogx_sum([s["truth_bg"]])
    pred_xlogx = s["pred_xlogx"] + _xlogx_sum([s["pred_bg"]])
    # H(pred | truth) = (sum_i a_i log2 a_i - sum_ij n_ij log2 n_ij) / n, and the other way round
    out["voi_split"] = max(0.0, (truth_xlogx - cell_xlogx) / n)
    out["voi_merge"] = max(0.0, (pred_xlogx - cell_xlogx) / n)
    pairs = s["cell_sq"] + s["bg_bg"] ** 2 - n
    truth_pairs = s["truth_sq"] + s["truth_bg"] ** 2 - n
    pred_pairs = s["pred_sq"] + s["pred_bg"] ** 2 - n
    # scikit-image's adapted_rand_error: precision over the truth's pairs, recall over the prediction's
    out["adapted_rand_precision"] = pairs / truth_pairs if truth_pairs else None
    out["adapted_rand_recall"] = pairs / pred_pairs if pred_pairs else None
    if truth_pairs + pred_pairs:
        out["adapted_rand_error"] = 1.0 - pairs / (0.5 * truth_pairs + 0.5 * pred_pairs)
    else:
        notes["adapted_rand_error"] = "every counted pixel is its own segment in both images (no pixel pairs)"
    if out["adapted_rand_precision"] is None:
        notes["adapted_rand_precision"] = "no two counted pixels share a truth segment"
    if out["adapted_rand_recall"] is None:
        notes["adapted_rand_recall"] = "no two counted pixels share a predicted segment"
    return out


def _panoptic_from_sums(s: dict, notes: dict) -> dict:
    """Panoptic quality at the match IoU: SQ (mean IoU of matched pairs), RQ (tp / (tp + fp/2 +
    fn/2)), PQ = SQ x RQ, and panoptica's Dice-based SQ_DSC and PQ_DSC."""
    tp = s["tp"]
    fp, fn = s["n_pred"] - tp, s["n_truth"] - tp
    den = tp + 0.5 * fp + 0.5 * fn
    out = {"pq": None, "sq": None, "rq": None, "pq_dsc": None, "sq_dsc": None}
    if den:
        out["rq"] = tp / den
        out["pq"] = s["iou_sum"] / den
        out["pq_dsc"] = s["dice"]["dice_sum"] / den
    else:
        for k in ("pq", "rq", "pq_dsc"):
            notes[k] = "neither image has an object"
    if tp:
        out["sq"] = s["iou_sum"] / tp
        out["sq_dsc"] = s["dice"]["dice_sum"] / tp
    else:
        for k in ("sq", "sq_dsc"):
            notes.setdefault(k, "no matched pairs at the match IoU")
    return out


def field_sums(truth, pred, *, threshold=0.5, iou_thresholds=DEFAULT_IOU_THRESHOLDS,
               boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES, minimum_overlap=DEFAULT_MINIMUM_OVERLAP,
               table=None, tile_rows=None, executor=None, threads=None, progress=None,
               count_background: bool = False, surface: bool = False, spacing=None,
               nsd_tolerance: float = 1.0, distance_definition=None) -> dict:
    """The additive summary of one field every scorecard metric derives from (pooled by
    :func:`metrics_from_sums` for one field or summed over a held-out set).

    ``truth`` and ``pred`` may be arrays or paths of any size: they are reduced tile by tile
    (:func:`stream_pair`). ``surface``: add the surface distances (``summary["surface"]``,
    :mod:`segscore.objects.surface`)."""
    return _field_parts(truth, pred, threshold=threshold, iou_thresholds=iou_thresholds,
                        boundary_tolerances=boundary_tolerances, minimum_overlap=minimum_overlap, table=table,
                        tile_rows=tile_rows, executor=executor, threads=threads, progress=progress,
                        count_background=count_background, surface=surface, spacing=spacing,
                        nsd_tolerance=nsd_tolerance, distance_definition=distance_definition)[0]


def _field_parts(truth, pred, *, threshold=0.5, iou_thresholds=DEFAULT_IOU_THRESHOLDS,
                 boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES, minimum_overlap=DEFAULT_MINIMUM_OVERLAP,
                 table=None, tile_rows=None, executor=None, threads=None, progress=None,
                 count_background: bool = False, surface: bool = False, spacing=None,
                 nsd_tolerance: float = 1.0, distance_definition=None) -> tuple:
    """``(field summary, parts)``: parts are the ``table``, the ``match`` at ``threshold``, the
    images' ``shape``, the checked ``spacing`` (None when not given and ``surface`` is off)
    and, with ``surface``, the surface values of each matched pair (``per_pair``)."""
    threshold = float(threshold)
    thresholds = tuple(float(x) for x in iou_thresholds)
    if not thresholds:
        raise ScoreError("give at least one IoU threshold for the AP sweep")
    from segscore.metrics.surface import check_definition

    definition = check_definition(distance_definition)
    if surface:
        from segscore.objects.surface import check_tolerance

        nsd_tolerance = check_tolerance(nsd_tolerance)
    details = {}
    tab, boundary = stream_pair(truth, pred, boundary_tolerances=tuple(boundary_tolerances),
                                contingency=table is None, tile_rows=tile_rows, executor=executor,
                                threads=threads, progress=progress, surface=surface, details=details)
    tab = table if table is not None else tab
    matches = sweep(tab, thresholds + ((threshold,) if threshold not in thresholds else ()))
    m = matches[threshold]
    parts = {"table": tab, "match": m, "shape": details.get("shape"), "spacing": None, "per_pair": None}
    if surface or spacing is not None:
        from segscore.objects.surface import check_spacing

        parts["spacing"] = check_spacing(spacing, len(details["shape"]))
    sums = {
        "match_iou": threshold,
        "thresholds": list(thresholds),
        "n_truth": tab.n_truth, "n_pred": tab.n_pred,
        "tp": m.true_positives, "iou_sum": math.fsum(m.ious) if m.ious else 0.0,
        "sweep_tp": [matches[x].true_positives for x in thresholds],
        "dice": _dice_sums(tab, m),
        "areas": _area_sums(tab, m),
        "split_merge": _splits_merges_table(tab, minimum_overlap),
        "boundary": boundary,
        "information": _information_sums(tab, bool(count_background)),
        "count_background": bool(count_background),
    }
    if surface:
        from segscore.objects.surface import _as_mask, surface_sums

        labels = None
        if definition == "deepmind":  # surface elements between voxels: both images read whole
            labels = (_as_mask(truth, "truth"), _as_mask(pred, "prediction"))
        sums["surface"], parts["per_pair"] = surface_sums(tab, m, details["surface"], parts["spacing"],
                                                          nsd_tolerance, threads, definition, labels)
    return sums, parts


def add_sums(a: dict, b: dict) -> dict:
    """Two fields' summaries added (same settings)."""
    if a["thresholds"] != b["thresholds"] or a["match_iou"] != b["match_iou"] \
            or a["boundary"]["tolerances"] != b["boundary"]["tolerances"] \
            or a.get("count_background") != b.get("count_background") or ("surface" in a) != ("surface" in b):
        raise ScoreError("fields scored with different settings cannot be pooled")

    def add(x, y):
        if isinstance(x, dict):
            return {k: add(x[k], y[k]) for k in x}
        if isinstance(x, list):
            return [add(u, v) for u, v in zip(x, y)]
        return x + y

    settings = ("match_iou", "thresholds", "count_background", "surface")
    out = add({k: v for k, v in a.items() if k not in settings}, {k: v for k, v in b.items() if k not in settings})
    if "surface" in a:
        from segscore.objects.surface import add_surface_sums

        out["surface"] = add_surface_sums(a["surface"], b["surface"])
    out["count_background"] = a.get("count_background", False)
    out["boundary"]["tolerances"] = a["boundary"]["tolerances"]
    out["match_iou"], out["thresholds"] = a["match_iou"], a["thresholds"]
    return out


def metrics_from_sums(s: dict) -> dict:
    """The scorecard dict (keys in the module docstring) from a field summary or a pooled one."""
    notes = {}
    n_t, n_p, tp = s["n_truth"], s["n_pred"], s["tp"]
    fp, fn = n_p - tp, n_t - tp
    precision, recall = _ratio(tp, n_p), _ratio(tp, n_t)
    # 0/0 is null here; stardist reports 0 (segscore.objects.matching_stardist follows it)
    sd = "; stardist reports 0 (segscore.objects.matching_stardist)"
    if precision is None:
        notes["precision"] = "no predicted objects" + sd
    if recall is None:
        notes["recall"] = "no truth objects" + sd
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    if f1 is None:
        notes["f1"] = "neither image has an object" + sd
    out = {"match_iou": s["match_iou"], "precision": precision, "recall": recall, "f1": f1,
           "true_positives": tp, "false_positives": fp, "false_negatives": fn,
           "iou_mean": s["iou_sum"] / tp if tp else None}
    if not tp:
        notes["iou_mean"] = "no matched pairs at the match IoU"
    out.update(_dice_from_sums(s["dice"], notes))
    aps = []
    for thr, tpt in zip(s["thresholds"], s["sweep_tp"]):
        ap = _ratio(tpt, n_t + n_p - tpt)
        out[ap_key(thr)] = ap
        if ap is None:
            notes[ap_key(thr)] = "neither image has an object"
        aps.append(ap)
    out["ap_mean"] = None if any(a is None for a in aps) else float(np.mean(aps))
    if out["ap_mean"] is None:
        notes["ap_mean"] = "neither image has an object"
    out.update(_boundary_from_counts(s["boundary"], notes))
    out.update(s["split_merge"])
    out.update(_areas_from_sums(s["areas"], notes))
    out.update(_panoptic_from_sums(s, notes))
    out.update(_information_from_sums(s["information"], notes))
    out["count_background"] = s["count_background"]
    if "surface" in s:
        from segscore.objects.surface import surface_from_sums

        out.update(surface_from_sums(s["surface"], notes))
    out["notes"] = notes
    return out


@as_result
def _score_segmentation(truth, pred, *, threshold: float = 0.5, iou_thresholds=DEFAULT_IOU_THRESHOLDS,
                       boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES,
                       minimum_overlap: float = DEFAULT_MINIMUM_OVERLAP, table=None, tile_rows=None,
                       executor=None, threads=None, progress=None, count_background: bool = False,
                       surface: bool = False, spacing=None, nsd_tolerance: float = 1.0,
                       per_object: bool = False, distance_definition=None, components=None,
                       ignore_label=None, ignore_mask=None) -> dict:
    """Every segmentation metric of the scorecard on one 2D or 3D field (one streamed pass for
    the contingency table and the boundary counts). ``truth`` is the ground truth; both may
    be arrays (NumPy, memory-mapped, zarr, dask) or paths (TIFF, ``.npy``, PNG, NIfTI, zarr).
    ``threshold`` is the IoU at which precision, recall, F1, Dice and the area errors are
    matched, reported as ``match_iou``. Engine options (``tile_rows``, ``executor``,
    ``threads``, ``progress``): see :func:`segscore.engine.reduce`; none changes a result.

    Compatibility entry point (spacr's and scikit-image's shape): prefer :func:`segscore.api.objects`.

    ``surface=True`` adds surface distances in physical units (definitions:
    :mod:`segscore.objects.surface`): ``hd95_per_object``, ``assd_per_object``,
    ``nsd_per_object`` (means over the pairs matched at ``threshold``, each with a ``_sd``,
    ddof 0; each pair measured on its two objects' surface voxels only), the whole-foreground
    ``hd_pixel``, ``hd95_pixel``, ``assd_pixel``, ``nsd_pixel`` (the masks ``truth != 0`` and
    ``pred != 0``), ``nsd_tolerance`` (τ, in the spacing's unit) and ``spacing`` (one voxel
    size per axis in array order, default 1 per axis). The surface voxels are gathered in the
    same streamed pass (tile by tile, in at least one band per thread), so nothing is held whole
    but them: about 21 bytes per surface voxel of every object of both images, then about 40
    per surface voxel and one bit per voxel of each surface's bounding box while distances are
    measured (a few MB for a 2048² pair with 2,000 objects, about 100 MB for a 256³ pair with
    3,000); the default scorecard (``surface=False``) does none of this.

    ``distance_definition`` names whose HD95 and ASSD (and HD, NSD) these are, per object and of
    the whole foregrounds, recorded as ``distance_definition``: ``"monai"`` (the default: the
    larger directed 95th percentile, the mean of both directions pooled; curvicost's hd95 too),
    ``"panoptica"`` (one 95th percentile of both directions pooled, the mean of the two directed
    means) or ``"deepmind"`` (DeepMind surface-distance: surface elements on the voxel corners
    weighted by area, which reads both images whole); :mod:`segscore.metrics.surface`.

    ``per_object=True`` adds ``per_object``: a list of rows (:func:`per_object_rows`) from the
    same table and matching. ``spacing`` without ``surface`` only scales ``volume_truth``.

    Without ``spacing``, with ``surface`` or ``per_object``, a path whose header states one (NIfTI
    pixdim, OME-Zarr multiscales scale, TIFF/ImageJ resolution: :func:`segscore.io.spacing.read_spacing`)
    gives it (the truth's and the prediction's must then agree); the default scorecard, which no
    spacing changes, reads no header (nor do :func:`segscore.objects.holdout.score_holdout`'s
    arrays: each field's spacing is given, or its files' as ``segscore holdout --surface`` reads
    them; :func:`segscore.objects.surface_distances` reads its paths' as this does). The result then
    records ``spacing`` with ``spacing_source`` (``given``, ``nifti``, ``ome-zarr``, ``tiff``,
    ``imagej``, or ``default`` for 1 per axis) and ``spacing_unit`` as the file states it.

    ``ignore_label`` (a value of the truth) or ``ignore_mask`` (an array or path on the truth's
    grid, true = ignore; it wins over the label): those voxels are background (0) in both images
    before anything else (:mod:`segscore.metrics.masks`, as ``surfaces`` does; the default here
    ignores nothing). ``components`` (6, 18 or 26 in 3D; 4 or 8 in 2D): both images are binary or
    semantic masks, turned into instances by connected components of each class value (two
    touching regions of different classes are different instances); ``components`` alone on inputs
    not in memory (paths, memory maps, zarr, dask) or with a ``distributed.Client`` builds them block
    by block in the pass's bands, joined on their faces (:mod:`segscore.objects.blocklabel`: the same
    labels, never held whole). Otherwise, with any of the three, both
    images are read whole first (their own dtype plus 4 bytes per voxel each for the labels, and
    8 bytes per voxel for a moment while a semantic mask's classes are found); ``tile_rows`` then
    tiles the arrays and still changes no result.
    """
    from segscore.io.spacing import Spacing, read_spacing
    from segscore.objects.blocklabel import blockwise_components, wants_blockwise

    record = None
    if isinstance(spacing, Spacing):
        record, spacing = spacing, spacing.values
    elif spacing is not None:
        record = Spacing(tuple(spacing), "given", None)
    elif surface or per_object:  # what a spacing changes: distances, volume_truth (never the default card)
        stated = [(x, s) for x in (truth, pred) for s in [read_spacing(x)] if s is not None]
        if stated:
            from segscore.io.spacing import resolve_spacing

            record = resolve_spacing(None, [x for x, _ in stated], len(stated[0][1].values))
            spacing = record.values
    if surface and record is None:
        record = Spacing((), "default", None)
    said = []
    if components is not None and ignore_label is None and ignore_mask is None and wants_blockwise(truth, pred, executor):
        truth, pred, said = blockwise_components(truth, pred, components, halo=max(_check_tolerances(
            tuple(boundary_tolerances)) or [0]) + 1, tile_rows=tile_rows, executor=executor, threads=threads)
    elif components is not None or ignore_label is not None or ignore_mask is not None:
        truth, pred, said = prepare_masks(truth, pred, components=components, ignore_label=ignore_label,
                                          ignore_mask=ignore_mask)
    sums, parts = _field_parts(truth, pred, threshold=threshold, iou_thresholds=iou_thresholds,
                               boundary_tolerances=boundary_tolerances, minimum_overlap=minimum_overlap,
                               table=table, tile_rows=tile_rows, executor=executor, threads=threads,
                               progress=progress, count_background=count_background, surface=surface,
                               spacing=spacing, nsd_tolerance=nsd_tolerance, distance_definition=distance_definition)
    out = metrics_from_sums(sums)
    if parts["shape"] is not None:  # the image diagonal, a distance's worst value (segscore.metrics.missing)
        notes = out.pop("notes")
        out["shape"] = [int(n) for n in parts["shape"]]
        out["notes"] = notes
    if parts["spacing"] is not None and "spacing" not in out:
        notes = out.pop("notes")
        out["spacing"] = list(parts["spacing"])
        out["notes"] = notes
    if parts["spacing"] is not None:
        notes = out.pop("notes")
        out["spacing_source"] = record.source if record is not None else "given"
        out["spacing_unit"] = record.unit if record is not None else None
        out["notes"] = notes
    if per_object:
        notes = out.pop("notes")
        out["per_object"] = per_object_rows(parts["table"], parts["match"], minimum_overlap=minimum_overlap,
                                            spacing=parts["spacing"], per_pair=parts["per_pair"])
        out["notes"] = notes
    if components is None and table is None:
        said += binary_masks_warning(truth, pred, parts["table"])
    if said:
        out["warnings"] = said
    return out


score_segmentation = moved(_score_segmentation, "segscore.objects.metrics.score_segmentation",
                           "segscore.api.objects(truth, pred, ...)")


#: the binary-mask hint of :func:`binary_masks_warning` reads images up to this many voxels whole
BINARY_HINT_MAX_VOXELS = 1 << 27


def binary_masks_warning(truth, pred, table) -> list[str]:
    """A hint (one warning line) when both images look like binary masks given as instances: each
    holds no label but 1 (``table``'s ids) AND the region of 1 of each has at least two separate
    parts (fully connected: 8 in 2D, 26 in 3D). Scored as instances, each is then one object, and
    ``--components`` (``components=``) was meant. A real instance image with one object fires it
    only when that object is in pieces in both images; images of more than
    :data:`BINARY_HINT_MAX_VOXELS` are not labelled for the hint (no line)."""
    if table is None or truth is None or pred is None or not (
            np.array_equal(table.truth_ids, [1]) and np.array_equal(table.pred_ids, [1])):
        return []
    from segscore.io.readers import open_labels
    from segscore.metrics.masks import components

    names = []
    for x, what in ((truth, "truth"), (pred, "prediction")):
        with open_labels(x, name=what) as src:
            if len(src.shape) not in (2, 3) or int(np.prod(src.shape, dtype=np.int64)) > BINARY_HINT_MAX_VOXELS:
                return []
            labels = components(src.read_all() != 0, 8 if len(src.shape) == 2 else 26)
            if int(labels.max(initial=0)) < 2:
                return []
            names.append(src.name)
    both = "the truth and the prediction" if names == ["truth", "prediction"] else f"{names[0]} and {names[1]}"
    return [f"{both} hold only the value 1, in several separate regions each: binary masks, "
            "scored as one object each; for instances by connected components pass --components N "
            "(components=N: 4 or 8 in 2D, 6, 18 or 26 in 3D)"]


def prepare_masks(truth, pred, *, components=None, ignore_label=None, ignore_mask=None) -> tuple:
    """``(truth, pred, warnings)``: both images read whole, the ignore region set to 0 in both
    (:func:`segscore.metrics.masks.ignore_region`), then, with ``components``, each turned into
    instances (:func:`segscore.metrics.masks.components`). See :func:`score_segmentation`."""
    from segscore.io.readers import input_name, open_labels
    from segscore.metrics.masks import check_connectivity, ignore_region, ignored_warning, swapped_ignore_warning
    from segscore.metrics.masks import components as label
    from segscore.metrics.masks import zero_ignored
    from segscore.objects.table import as_labels

    with open_labels(truth, name="truth") as ts, open_labels(pred, name="prediction") as ps:
        if ts.shape != ps.shape:
            raise ScoreError(f"{ps.name} {ps.shape} and {ts.name} {ts.shape} are different shapes; "
                             "score a prediction on its truth's grid")
        names = (ts.name, ps.name)
        if components is not None:
            check_connectivity(components, len(ts.shape))  # before reading
        t, p = ts.read_all(), ps.read_all()
    said = []
    if ignore_label is not None or ignore_mask is not None:
        mask_name = input_name(ignore_mask, "ignore mask")
        if ignore_mask is not None:
            with open_labels(ignore_mask, what="ignore mask", name="<ignore mask>") as ms:
                if ms.shape != t.shape:
                    raise ScoreError(f"{mask_name}: shape {ms.shape} differs from the truth {names[0]}'s {t.shape}; "
                                     "give the ignore mask on the truth's grid")
                mask = ms.read_all()
        else:
            mask = None
            said += swapped_ignore_warning(t, p, ignore_label, truth_name=names[0], pred_name=names[1],
                                           order="`segscore objects TRUTH PRED` takes the truth first")
        region = ignore_region(t, ignore_label=ignore_label, ignore_mask=mask, mask_name=mask_name)
        t, p = zero_ignored(t, region), zero_ignored(p, region)
        said += ignored_warning(int(np.count_nonzero(region)) if region is not None else 0, ignore_label,
                                ignore_mask)
    if components is not None:
        t = label(as_labels(t, names[0]), components)
        p = label(as_labels(p, names[1]), components)
        said.append(f"instances are the {components}-connected components of each class of both images")
    return t, p, said


#: columns of :func:`per_object_rows` (``hd95`` and ``assd`` only with surface distances)
PER_OBJECT_COLUMNS = ("truth_id", "pred_id", "voxels_truth", "voxels_pred", "volume_truth", "iou", "dice",
                      "hd95", "assd", "split", "merged", "reason")


def per_object_rows(table: ContingencyTable, match: Match, *, minimum_overlap: float = DEFAULT_MINIMUM_OVERLAP,
                    spacing=None, per_pair=None) -> list:
    """One row per truth object (ascending id), then one per unmatched prediction (ascending id).

    Columns (:data:`PER_OBJECT_COLUMNS`): ``truth_id``, ``pred_id`` (its match, or the
    unmatched prediction); ``voxels_truth``, ``voxels_pred`` (voxel counts); ``volume_truth``
    (``voxels_truth`` times the voxel volume, the product of ``spacing``; 1 per axis when not
    given); ``iou`` and ``dice`` (2·IoU/(1+IoU)) of the matched pair; ``hd95`` and ``assd`` of the
    pair (only when ``per_pair`` holds surface values); ``split`` (two or more predictions each
    cover ``minimum_overlap`` of the truth object; None on a prediction's row); ``merged`` (a
    truth row: a prediction covering ``minimum_overlap`` of it also covers that much of another
    truth object; a prediction's row: it covers that much of two or more truth objects);
    ``reason``: why the matched columns are None (unmatched truth: a false negative; unmatched
    prediction: a false positive), None on a matched row. Values that do not apply are None.
    """
    threshold = match.threshold
    vox = float(np.prod(spacing)) if spacing is not None else 1.0
    covers = table.pair_n / table.truth_area[table.pair_t] >= float(minimum_overlap)
    per_truth = np.bincount(table.pair_t[covers], minlength=table.n_truth)
    per_pred = np.bincount(table.pair_p[covers], minlength=table.n_pred)
    pred_merges = per_pred >= 2
    truth_merged = np.zeros(table.n_truth, bool)
    sel = covers & pred_merges[table.pair_p]
    truth_merged[table.pair_t[sel]] = True
    idx = _chosen_index(table, match)
    iou = table.iou[idx] if idx.size else np.zeros(0)
    match_of = np.full(table.n_truth, -1, np.int64)
    slot = np.full(table.n_truth, -1, np.int64)
    match_of[table.pair_t[idx]] = table.pair_p[idx]
    # per_pair values follow the match's pair order, which is idx's order (sorted by truth, pred)
    slot[table.pair_t[idx]] = np.arange(idx.size)
    surface = per_pair is not None
    t_ids, p_ids = table.truth_ids.tolist(), table.pred_ids.tolist()
    t_area, p_area = table.truth_area.tolist(), table.pred_area.tolist()
    rows = []
    for i in range(table.n_truth):
        j, k = int(match_of[i]), int(slot[i])
        row = {"truth_id": t_ids[i], "pred_id": p_ids[j] if j >= 0 else None, "voxels_truth": t_area[i],
               "voxels_pred": p_area[j] if j >= 0 else None, "volume_truth": t_area[i] * vox,
               "iou": float(iou[k]) if k >= 0 else None,
               "dice": float(2 * iou[k] / (1 + iou[k])) if k >= 0 else None}
        if surface:
            row["hd95"] = float(per_pair["hd95"][k]) if k >= 0 else None
            row["assd"] = float(per_pair["assd"][k]) if k >= 0 else None
        row.update(split=bool(per_truth[i] >= 2), merged=bool(truth_merged[i]),
                   reason=None if k >= 0 else f"no prediction matched at IoU >= {threshold:g} (a false negative)")
        rows.append(row)
    matched_pred = np.zeros(table.n_pred, bool)
    matched_pred[table.pair_p[idx]] = True
    for j in np.flatnonzero(~matched_pred).tolist():
        row = {"truth_id": None, "pred_id": p_ids[j], "voxels_truth": None, "voxels_pred": p_area[j],
               "volume_truth": None, "iou": None, "dice": None}
        if surface:
            row["hd95"] = row["assd"] = None
        row.update(split=None, merged=bool(pred_merges[j]),
                   reason=f"matched no truth object at IoU >= {threshold:g} (a false positive)")
        rows.append(row)
    return rows


#: keys describing the data or the settings; they have no meaningful difference
NOT_A_SCORE = frozenset({"match_iou", "n_fields", "n_truth", "n_pred", "count_error", "threshold", "n",
                         "n_positive", "count_background", "nsd_tolerance", "spacing", "spacing_source",
                         "spacing_unit"})


def delta_of(a: dict, b: dict, drop=NOT_A_SCORE) -> dict:
    """``a - b`` for every numeric key of both (None where either is None), settings dropped."""
    out = {}
    for k, va in a.items():
        if k in drop or k == "notes" or k not in b:
            continue
        vb = b[k]
        if isinstance(va, bool) or isinstance(vb, bool):
            continue
        if va is None or vb is None:
            out[k] = None
        elif isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            out[k] = va - vb
    return out


@as_result
def compare_against_baseline(truth, finetuned, vanilla, **kwargs) -> dict:
    """Score two predictions of the same field: ``{"finetuned", "vanilla", "delta"}``.

    ``delta`` is finetuned - vanilla for every numeric metric except ``match_iou`` (a setting)
    and ``n_truth`` (the same truth); None where either side is None. ``notes`` (top level)
    says why each null is null, by dotted path (``finetuned.precision``, ``delta.precision``).
    """
    from segscore.io.results import lift_notes

    a = _score_segmentation(truth, finetuned, **kwargs)
    b = _score_segmentation(truth, vanilla, **kwargs)
    delta = delta_of(a, b, drop={"match_iou", "n_truth", "nsd_tolerance", "spacing", "spacing_source",
                                     "spacing_unit"})
    notes = {f"delta.{k}": f"{'finetuned' if a[k] is None else 'vanilla'}.{k} is null"
             for k, v in delta.items() if v is None}
    return lift_notes({"finetuned": a, "vanilla": b, "delta": delta, "notes": notes})
