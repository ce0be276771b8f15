"""Column-level scoring: is a map's signal in the text columns rather than the gutters?

The target (``columns.json``, ``valid_mask.png``, ``meta.json``) gives each column's box on a
grid (``text_band`` rows, ``gx0:gx1`` columns) and its status (``text`` or ``traces``), and a
papyrus valid mask. The prediction is a probability map at grid resolution over the full grid
or a rectangular sub-extent whose grid top-left is ``origin``. Definitions (ScrollGT's):

- a column is scored when its box lies fully inside the extent and holds a valid pixel;
- a gutter is the box between two consecutive scored columns (``x`` from one column's end
  to the next one's start, rows where both text bands overlap), skipped when narrower than
  2 px or shorter than 8 rows, and excluded (counted) when either column is ``cross_strip``;
- ``col_gutter_auc``: Mann-Whitney AUC (ties half) of text-column means against gutter means;
- ``col_gutter_pixel_auc``: the same over their valid pixels (an 8- or 16-bit map from its level
  histograms; a float map, clipped to [0, 1] as ScrollGT clips it, ranked exactly as float64,
  every distinct value a threshold, as scikit-learn ranks it: :mod:`segscore.metrics.exact`);
- ``line_period_peak``: for a text column, the row profile (mean over valid pixels of each row;
  rows without one are filled with the profile's mean), centred; the largest normalized
  autocorrelation ``sum(p[:-lag] p[lag:]) / sum(p^2)`` (at least 0) over lags in the target's
  ``line_pitch_range``; undefined when fewer than ``3 * pitch_lo`` rows hold a valid pixel;
- ``traces_mean_ratio``: mean of traces-column means over mean of text-column means.

The map is streamed by row bands through :func:`segscore.kernels.regions.box_rows`, which
keeps per-box row sums and class histograms, so memory is set by the band and the mask.
Floors (``constant_0_5``, ``papyrus_mask``, ``uniform_random``) are the same scoring run on the
trivial maps of the prediction's extent.

A value the extent makes impossible (too few columns or gutters, no text column long enough for
a line period, no traces column) is None, and the scorecard's ``notes`` maps its dotted path
(``metrics.col_gutter_auc``, ``per_column.3.line_period_peak``,
``floors.uniform_random.traces_mean_ratio``) to the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segscore.engine import check_options
from segscore.engine.plan import plan_bands
from segscore.errors import ScoreError, moved
from segscore.ink.targets import EXACT_BAND_PX, MAP_BAND_PX
from segscore.io.results import as_result

COLUMN_FLOORS = {
    "constant_0_5": "p = 0.5 everywhere",
    "papyrus_mask": "the target's own valid mask (1 on papyrus, 0 elsewhere)",
    "uniform_random": "numpy.random.default_rng(seed).random(extent shape) as float32 (as ScrollGT draws it)",
}
REPORT_COLUMNS = ("col_gutter_auc", "col_gutter_pixel_auc", "line_period_peak_mean", "n_text_cols", "n_gutters",
                  "traces_mean_ratio")


@dataclass
class ColumnTarget:
    path: str
    meta: dict
    columns: list
    valid: np.ndarray | None  # (H, W) uint8 (1 = papyrus) or None
    grid_shape: tuple
    target_id: str


def load_column_target(target_dir) -> ColumnTarget:
    """Read a column target folder (``columns.json``, ``meta.json``, optional ``valid_mask.png``)."""
    from segscore.io.results import read_json
    from segscore.io.schema import Field, validate
    from segscore.io.targets import read_gray, read_meta, target_file

    folder, cpath = target_file(target_dir, "column")

    data = read_json(cpath, fix="restore the target's columns.json")
    cols = data.get("columns") if isinstance(data, dict) else None
    if not isinstance(cols, list):
        raise ScoreError(f"{cpath}: not a columns file (no list under \"columns\"); restore the target's columns.json")

    column = (Field("gx0", (int,), lo=0, required=True), Field("gx1", (int,), lo=0, required=True),
              Field("col", (int, str), required=True), Field("transcription", (str,), required=True),
              Field("text_band", (list,), length=2, items=int, lo=0), Field("cross_strip", (bool,)))
    for i, c in enumerate(cols):
        if not isinstance(c, dict):
            raise ScoreError(f"{cpath}: columns.{i} is {c!r}, not an object; restore the file")
        validate(c, column, f"{cpath}: columns.{i}")

    meta = validate(read_meta(folder), (
        Field("target_id", (str,)), Field("geometry", (dict,)),
        Field("geometry.grid_shape", (list,), length=2, items=int, lo=1),
        Field("line_pitch_range", (list,), length=2, items=int, lo=1),
    ), folder / "meta.json")
    valid = None
    vpath = folder / "valid_mask.png"
    if vpath.exists():
        valid = (read_gray(vpath, "valid mask") > 127).view(np.uint8)
    shape = tuple((meta.get("geometry") or {}).get("grid_shape") or (valid.shape if valid is not None else ()))
    if valid is not None and shape and tuple(valid.shape) != shape:
        raise ScoreError(f"{vpath}: shape {valid.shape} differs from meta.json grid_shape {shape}; restore the mask")
    return ColumnTarget(str(folder), meta, cols, valid, shape, meta.get("target_id") or folder.name)


def _plan(tgt: ColumnTarget, origin, shape):
    """Scored columns and gutters: boxes (grid coords), kinds and descriptors."""
    oy, ox = origin
    h, w = shape
    valid = tgt.valid
    scored = []
    for c in tgt.columns:
        band = c.get("text_band")
        if band is None:
            continue
        y0, y1 = int(band[0]), int(band[1])
        x0, x1 = int(c["gx0"]), int(c["gx1"])
        if not (y0 >= oy and x0 >= ox and y1 <= oy + h and x1 <= ox + w):
            continue
        if y1 <= y0 or x1 <= x0:
            continue
        if valid is not None and not valid[y0:y1, x0:x1].any():
            continue
        scored.append({"col": c["col"], "status": c["transcription"], "cross_strip": bool(c.get("cross_strip")),
                       "box": (y0, y1, x0, x1)})
    gutters, excluded = [], 0
    for a, b in zip(scored, scored[1:]):
        gx0, gx1 = a["box"][3], b["box"][2]
        if gx1 - gx0 < 2:
            continue
        if a["cross_strip"] or b["cross_strip"]:
            excluded += 1
            continue
        y0, y1 = max(a["box"][0], b["box"][0]), min(a["box"][1], b["box"][1])
        if y1 - y0 < 8:
            continue
        if valid is not None and not valid[y0:y1, gx0:gx1].any():
            continue
        gutters.append({"between": [a["col"], b["col"]], "box": (y0, y1, gx0, gx1)})
    return scored, gutters, excluded


def _line_period_peak(rsum, rcnt, pitch_lo, pitch_hi):
    good = rcnt > 0
    if good.sum() < 3 * pitch_lo:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        profile = np.where(good, rsum / np.where(good, rcnt, 1), np.nan)
    p = np.where(good, profile, np.nanmean(profile))
    p = p - p.mean()
    denom = float((p * p).sum())
    if denom <= 0:
        return 0.0
    best = 0.0
    for lag in range(int(pitch_lo), min(int(pitch_hi) + 1, len(p) - 1)):
        best = max(best, float((p[:-lag] * p[lag:]).sum()) / denom)
    return best


def _accumulate(read_band, kind, shape, origin, valid, boxes, kinds, *, tile_rows=None, executor=None,
                threads=None, check_range=True, exact=None):
    """One pass over the rows of the boxes: row sums and counts per box, level histograms, the
    value range; with ``exact`` (an :class:`segscore.metrics.exact.ExactPass` and the boxes it
    ranks, :func:`_exact_pass`), also the exact ranking's first pass on the same bands (the map,
    or the floor's draws, read once), its merged partial appended to the result."""
    from segscore.engine import reduce
    from segscore.ink.quantize import kernel_array
    from segscore.kernels.levels import value_stats
    from segscore.kernels.regions import box_rows

    h, w = shape
    oy, ox = origin
    k = len(boxes)
    maxh = max([b[1] - b[0] for b in boxes] + [1])
    boxes_a = np.array(boxes, np.int64).reshape(-1, 4)
    # the level histograms give an 8- or 16-bit map's pixel AUC; a float map's is ranked exactly
    kinds_a = np.array(kinds, np.int64) if exact is None else np.full(len(kinds), -1, np.int64)
    valid_a = valid if valid is not None else np.zeros((0, 0), np.uint8)
    passthrough = kind != "float"
    vdiv = {"uint8": 255.0, "uint16": 65535.0}.get(kind, 1.0)
    if k:
        lo_row = max(min(b[0] for b in boxes) - oy, 0)
        hi_row = min(max(b[1] for b in boxes) - oy, h)
    else:
        lo_row = hi_row = 0
    # with the exact pass, smaller bands: each holds its gathered pixels and their copies in flight
    windows = plan_bands((slice(lo_row, hi_row), slice(0, w)), tile_rows=tile_rows,
                         target_px=MAP_BAND_PX if exact is None else 2 * EXACT_BAND_PX)

    def read(window):
        return [kernel_array(read_band(window[0].start, window[0].stop))]

    ep = exact[0] if exact is not None else None
    if ep is not None and ep.place([int(exact[2][:, wd[0]].sum()) for wd in windows]):
        # placed: each band's kernel adds the row profiles of its clipped values and writes the
        # ranked boxes' pixels straight into its slot of the gathered scores (one read, no copy)
        from segscore.kernels.exactrank import gather_boxes, value_range

        ft = np.float32 if ep.bits == 32 else np.float64

        def read_placed(window):
            return [np.ascontiguousarray(read_band(window[0].start, window[0].stop), ft)]

        def task_placed(tile, values):
            lo, hi, bad = np.inf, -np.inf, 0
            if check_range:
                lo, hi, bad = value_range(values)
            rs = np.zeros((k, maxh))
            rc = np.zeros((k, maxh), np.int64)
            n = gather_boxes(values, oy + tile.window[0].start, ox, valid_a, boxes_a, kinds_r, rs, rc,
                             ep.slot(tile.index))
            tc = exact[2][:, tile.window[0]].sum(axis=1).reshape(2, 1)  # the classes' counts (no thresholds)
            return [rs, rc, None, (float(lo), float(hi), int(bad)), ep.placed(tile.index, tc, (lo, hi, bad), n)]

        def merge_placed(a, b):
            a[0] += b[0]
            a[1] += b[1]
            (lo, hi, bad), (lo2, hi2, bad2) = a[3], b[3]
            a[3] = (min(lo, lo2), max(hi, hi2), bad + bad2)
            a[4] = ep.merge(a[4], b[4])
            return a

        kinds_r = np.array(kinds, np.int64)
        total = reduce(read_placed, task_placed, merge_placed, windows=windows, executor=executor, threads=threads)
        if total is None:
            return [np.zeros((k, maxh)), np.zeros((k, maxh), np.int64), np.zeros((2, 65536), np.int64),
                    (np.inf, -np.inf, 0), None]
        total[2] = np.zeros((2, 65536), np.int64)
        return total

    def task(tile, values):
        lo, hi, bad = np.inf, -np.inf, 0
        if check_range and kind == "float":
            occ = np.zeros((3, 65536), np.uint8)
            lo, hi, bad, _ = value_stats(values, occ[0], occ[1], occ[2])
        if kind == "float":  # ScrollGT clips its map to [0, 1] (the range was checked above)
            values = np.clip(values, 0, 1)
        rs = np.zeros((k, maxh))
        rc = np.zeros((k, maxh), np.int64)
        hist = np.zeros((2, 65536), np.int64)
        box_rows(values, oy + tile.window[0].start, ox, valid_a, boxes_a, kinds_a, passthrough, vdiv, rs, rc, hist)
        out = [rs, rc, hist, (float(lo), float(hi), int(bad))]
        if exact is not None:
            out.append(exact[0].first(*_box_pixels(values, tile.window[0].start, origin, valid, exact[1])))
        return out

    def merge(a, b):
        a[0] += b[0]
        a[1] += b[1]
        a[2] += b[2]
        (lo, hi, bad), (lo2, hi2, bad2) = a[3], b[3]
        a[3] = (min(lo, lo2), max(hi, hi2), bad + bad2)
        if exact is not None:
            a[4] = exact[0].merge(a[4], b[4])
        return a

    total = reduce(read, task, merge, windows=windows, executor=executor, threads=threads)
    if total is None:
        total = [np.zeros((k, maxh)), np.zeros((k, maxh), np.int64), np.zeros((2, 65536), np.int64),
                 (np.inf, -np.inf, 0)] + ([None] if exact is not None else [])
    return total


def _box_pixels(values, r0, origin, valid, picked):
    """The valid pixels of the ranked boxes in map rows ``r0 .. r0 + len(values)`` (``values`` the
    band, all the map's columns) and their classes (1 text column, 0 gutter), box after box, each
    box's pixels once per box, as ScrollGT concatenates them."""
    oy, ox = origin
    raws, classes = [], []
    for (y0, y1, x0, x1), kd in picked:
        a, b = max(y0, oy + r0), min(y1, oy + r0 + len(values))
        if a >= b:
            continue
        sub = values[a - oy - r0:b - oy - r0, x0 - ox:x1 - ox]
        if valid is not None:
            sub = sub[valid[a:b, x0:x1] != 0]
        raws.append(sub.ravel())
        classes.append(np.full(sub.size, kd, np.uint8))
    if not raws:
        return np.zeros(0, values.dtype), np.zeros(0, np.uint8)
    return np.concatenate(raws), np.concatenate(classes)


def _exact_pass(shape, origin, valid, boxes, kinds, *, dtype=None, executor=None, scratch=None):
    """``(ExactPass, picked, counts)``: the exact ranking (:mod:`segscore.metrics.exact`) of the valid
    pixels of the text columns (kind 1, positive) against those of the gutters (kind 0) of a float map
    of ``dtype``, ROC-AUC only (the pixel AUC); those boxes with their kinds; and ``counts`` (2, h),
    the pixels of each class the boxes rank in each map row (so each band's place in the gathered
    scores is known before the pass, :meth:`~segscore.metrics.exact.ExactPass.place`)."""
    from segscore.metrics.exact import ExactPass

    h, w = shape
    oy, ox = origin
    picked = [(b, kd) for b, kd in zip(boxes, kinds) if kd >= 0]
    counts = np.zeros((2, h), np.int64)
    for (y0, y1, x0, x1), kd in picked:
        a, b, c, d = max(y0, oy), min(y1, oy + h), max(x0, ox), min(x1, ox + w)
        if a < b and c < d:
            counts[kd, a - oy:b - oy] += (d - c) if valid is None else np.count_nonzero(valid[a:b, c:d], axis=1)
    ep = ExactPass(thresholds=(), dtype=dtype, expected_px=int(counts.sum()), executor=executor, scratch=scratch,
                   auc_only=True)
    return ep, picked, counts


def _exact_finish(ep, first, read_band, shape, origin, valid, picked, *, tile_rows=None, executor=None,
                  threads=None):
    """The exact ranking from its first pass (done in :func:`_accumulate`), reading the map again
    by bands only if it did not fit the budget."""
    h, w = shape
    oy = origin[0]
    if picked:
        lo_row = max(min(b[0] for b, _ in picked) - oy, 0)
        hi_row = min(max(b[1] for b, _ in picked) - oy, h)
    else:
        lo_row = hi_row = 0
    windows = plan_bands((slice(lo_row, hi_row), slice(0, w)), tile_rows=tile_rows, target_px=EXACT_BAND_PX)

    def read(window):
        r0, r1 = window[0].start, window[0].stop
        return _box_pixels(np.asarray(read_band(r0, r1)), r0, origin, valid, picked)

    return ep.finish(first, read, windows, executor=executor, threads=threads)


def _metrics(tgt, scored, gutters, excluded, rs, rc, hist, kind, pixel_auc=None):
    """(``pixel_auc``: a float map's exact pixel AUC, which replaces the histograms' when given)"""
    """``{"metrics", "per_column", "gutters", "notes"}``; ``notes`` by dotted path in that dict."""
    pitch_lo, pitch_hi = tgt.meta.get("line_pitch_range") or [60, 220]
    per_column, text_means, traces_means = [], [], []
    peaks = []
    notes = {}
    short = f"fewer than {3 * int(pitch_lo)} rows (3 x the shortest line pitch) hold a valid pixel"
    for i, c in enumerate(scored):
        n = int(rc[i].sum())
        mean = float(rs[i].sum() / n) if n else None
        if mean is None:
            notes[f"per_column.{i}.mean"] = "no valid pixel of the column lies in the extent"
        peak = None
        if c["status"] == "text":
            hgt = c["box"][1] - c["box"][0]
            peak = _line_period_peak(rs[i, :hgt], rc[i, :hgt], pitch_lo, pitch_hi)
            text_means.append(mean)
            if peak is not None:
                peaks.append(peak)
            else:
                notes[f"per_column.{i}.line_period_peak"] = short
        else:
            notes[f"per_column.{i}.line_period_peak"] = f"a {c['status']} column: line periods are scored on " \
                                                         f"text columns only"
            if c["status"] == "traces":
                traces_means.append(mean)
        per_column.append({"col": c["col"], "status": c["status"], "mean": mean, "line_period_peak": peak,
                           "n_pixels": n, "cross_strip": c["cross_strip"]})
    gut = []
    for j, g in enumerate(gutters):
        i = len(scored) + j
        n = int(rc[i].sum())
        gut.append({"between": g["between"], "mean": float(rs[i].sum() / n) if n else None, "n_pixels": n})
        if not n:
            notes[f"gutters.{j}.mean"] = "no valid pixel of the gutter lies in the extent"
    m = {"cols_scored": [c["col"] for c in scored], "n_text_cols": len(text_means),
         "n_traces_cols": len(traces_means), "n_gutters": len(gut), "excluded_gutters": excluded}
    if text_means and gut:
        from segscore.metrics.ranking import auc, histograms_of_samples

        # Mann-Whitney AUC, ties half: text-column means against gutter means, then pixels
        _, p_h, n_h = histograms_of_samples([t for t in text_means if t is not None],
                                            [g["mean"] for g in gut if g["mean"] is not None])
        m["col_gutter_auc"] = auc(p_h, n_h)
        if m["col_gutter_auc"] is None:
            notes["metrics.col_gutter_auc"] = "no text column or no gutter holds a scored pixel"
        m["col_gutter_pixel_auc"] = auc(hist[1], hist[0]) if pixel_auc is None else pixel_auc.roc_auc
        if m["col_gutter_pixel_auc"] is None:
            notes["metrics.col_gutter_pixel_auc"] = "no valid pixel in the text columns or in the gutters"
    else:
        m["col_gutter_auc"] = None
        m["col_gutter_pixel_auc"] = None
        why = "extent contains too few columns/gutters to score (needs a text column and a gutter)"
        notes["metrics.col_gutter_auc"] = notes["metrics.col_gutter_pixel_auc"] = why
    m["line_period_peak_mean"] = float(np.mean(peaks)) if peaks else None
    if not peaks:
        notes["metrics.line_period_peak_mean"] = (f"no text column has a line period: {short} in each"
                                                  if text_means else "no text column is scored in the extent")
    texts = [t for t in text_means if t is not None]
    traces = [t for t in traces_means if t is not None]
    m["traces_mean_ratio"] = None
    if texts and traces:
        tmean = float(np.mean(texts))
        if tmean > 0:
            m["traces_mean_ratio"] = float(np.mean(traces)) / tmean
        else:
            notes["metrics.traces_mean_ratio"] = "the text columns' mean is 0: the ratio is undefined"
    else:
        notes["metrics.traces_mean_ratio"] = ("no traces column is scored in the extent" if texts
                                              else "no text column is scored in the extent")
    m["quantized"] = False
    m["scale"] = {"uint8": "uint8: p = v / 255", "uint16": "uint16: p = v / 65535"}.get(
        kind, "float in [0, 1] (clipped), pixel AUC ranked exactly as float64")
    return {"metrics": m, "per_column": per_column, "gutters": gut, "notes": notes}


def _score(read_band, kind, shape, tgt, origin, scored, gutters, excluded, engine, check_range=True, name=None,
           dtype=None, scratch=None):
    boxes = [c["box"] for c in scored] + [g["box"] for g in gutters]
    kinds = [1 if c["status"] == "text" else -1 for c in scored] + [0] * len(gutters)
    ep = None
    if kind == "float" and scored and gutters:
        ep = _exact_pass(shape, origin, tgt.valid, boxes, kinds, dtype=dtype, executor=engine.get("executor"),
                         scratch=scratch)
    rs, rc, hist, stats, *first = _accumulate(read_band, kind, shape, origin, tgt.valid, boxes, kinds,
                                              check_range=check_range, exact=ep, **engine)
    if name is not None:  # refuse NaN, inf and values outside [0, 1] before any metric sees them
        from segscore.ink.targets import check_values

        check_values(name, *_rows_outside(stats, read_band, kind, shape, origin, boxes))
    exact = None
    if ep is not None:
        exact = _exact_finish(ep[0], first[0], read_band, shape, origin, tgt.valid, ep[1], **engine)
    return _metrics(tgt, scored, gutters, excluded, rs, rc, hist, kind, exact), stats


def _rows_outside(stats, read_band, kind, shape, origin, boxes):
    """``stats`` (lo, hi, non-finite count) of the rows the boxes span, with the non-finite values
    of a float map's other rows added: a NaN or an infinity anywhere in the map is refused, as
    every command refuses it, not only where a column is scored."""
    if kind != "float":
        return stats
    h, w = shape
    oy = origin[0]
    lo_row = max(min([b[0] for b in boxes] or [oy]) - oy, 0)
    hi_row = max(min(max([b[1] for b in boxes] or [oy]) - oy, h), lo_row)
    lo, hi, bad = stats
    for r0, r1 in ((0, lo_row), (hi_row, h)):
        for band in plan_bands((slice(r0, r1), slice(0, w)), target_px=MAP_BAND_PX):
            bad += int(np.count_nonzero(~np.isfinite(read_band(band[0].start, band[0].stop))))
    return lo, hi, bad


def _origin_and_shape(tgt, src_shape, origin, name="the prediction"):
    oy, ox = (0, 0) if origin is None else (int(origin[0]), int(origin[1]))
    if oy < 0 or ox < 0:
        raise ScoreError(f"--origin ({oy}, {ox}) must not be negative")
    gh, gw = tgt.grid_shape if tgt.grid_shape else (oy + src_shape[0], ox + src_shape[1])
    if oy + src_shape[0] > gh or ox + src_shape[1] > gw:
        raise ScoreError(f"{name}: prediction of shape {tuple(src_shape)} at origin ({oy}, {ox}) runs past the target's "
                         f"grid {(gh, gw)} (meta.json geometry.grid_shape); predict at grid resolution and pass "
                         f"--origin Y X for a sub-extent")
    return (oy, ox)


def column_floors(tgt: ColumnTarget, origin=(0, 0), shape=None, *, seed: int = 0, plan=None, tile_rows=None,
                  executor=None, threads=None, band_rows=None, workers=None, scratch=None) -> dict:
    """The three floors scored over the extent ``shape`` at ``origin`` (default: the full grid):
    ``{name: card}``, each card with its ``notes`` (why a metric of it is null). ``scratch``: the
    buffer the map's own ranking used (:class:`segscore.metrics.exact.Scratch`)."""
    from segscore.ink.targets import uniform_rows

    shape = tuple(shape or tgt.grid_shape)
    oy, ox = origin
    h, w = shape
    scored, gutters, excluded = plan or _plan(tgt, origin, shape)
    engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads, band_rows=band_rows, workers=workers)
    boxes = [c["box"] for c in scored] + [g["box"] for g in gutters]
    kinds = np.array([1 if c["status"] == "text" else -1 for c in scored] + [0] * len(gutters), np.int64)
    # uniform_random is the one floor to read; a constant map p has row sums p x row counts (the
    # counts do not depend on the values) and all its pixels on one level
    read = lambda a, b: uniform_rows(seed, w, a, b).astype(np.float32)  # noqa: E731
    ep = (_exact_pass(shape, origin, tgt.valid, boxes, kinds, dtype=np.float32, executor=engine.get("executor"),
                      scratch=scratch) if scored and gutters else None)
    rs, rc, hist, _, *first = _accumulate(read, "float", shape, origin, tgt.valid, boxes, kinds, check_range=False,
                                          exact=ep, **engine)
    exact = _exact_finish(ep[0], first[0], read, shape, origin, tgt.valid, ep[1], **engine) if ep else None
    sums = {"uniform_random": (rs, hist)}
    for name, p in (("constant_0_5", 0.5), ("papyrus_mask", 1.0)):  # the mask is 1 on every counted pixel
        h1 = np.zeros((2, 65536), np.int64)
        for k in (0, 1):
            h1[k, int(np.rint(p * 65535))] = rc[kinds == k].sum()
        sums[name] = (p * rc, h1)
    out = {}
    for name in ("constant_0_5", "papyrus_mask", "uniform_random"):
        # a constant floor ties every pixel (AUC 0.5 on its one level); the random one ranks exactly
        core = _metrics(tgt, scored, gutters, excluded, sums[name][0], rc, sums[name][1], "float",
                        exact if name == "uniform_random" else None)
        card = dict(core["metrics"])
        card["what"] = COLUMN_FLOORS[name]
        if name == "uniform_random":
            card["seed"] = int(seed)
        card["notes"] = {k[len("metrics."):]: v for k, v in core["notes"].items() if k.startswith("metrics.")}
        out[name] = card
    return out


@as_result
def score_columns_array(prediction, target, origin=(0, 0), *, floors=True, seed=0, tile_rows=None, executor=None,
                        threads=None, name="the prediction", band_rows=None, workers=None) -> dict:
    """Score a map (array or path) against a column target (folder or :class:`ColumnTarget`)."""
    from segscore.ink.targets import map_kind, png_or_path, prediction_name
    from segscore.io.readers import open_map
    from segscore.io.targets import refuse_target_as_prediction

    refuse_target_as_prediction(prediction, "segscore columns PRED TARGET")
    tgt = target if isinstance(target, ColumnTarget) else load_column_target(target)
    engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads, band_rows=band_rows, workers=workers)
    from segscore.metrics.exact import Scratch

    scratch = Scratch()  # the gathered scores' buffer: the map's ranking, then the floor's
    with open_map(png_or_path(prediction), what="prediction", name=name) as src:
        origin = _origin_and_shape(tgt, src.shape, origin, src.name)
        plan = _plan(tgt, origin, src.shape)
        kind = map_kind(src.dtype)
        w = src.shape[1]
        core, _ = _score(lambda a, b: src.read((slice(a, b), slice(0, w))), kind, src.shape, tgt, origin,
                         *plan, engine, name=src.name, dtype=src.dtype, scratch=scratch)
        shape = src.shape
    out = {"target": tgt.target_id,
           "prediction": prediction_name(prediction),
           "granularity": "column (no pixel ground truth exists for this target; see meta.json)",
           "origin": list(origin), "extent_shape": list(shape), **core}
    if floors:
        out["floors"] = column_floors(tgt, origin, shape, seed=seed, plan=plan, scratch=scratch, **engine)
    from segscore.io.results import lift_notes

    return lift_notes(out)


@as_result
def _score_columns(prediction, target_dir, origin=(0, 0), *, floors=True, seed=0, tile_rows=None, executor=None,
                  threads=None, band_rows=None, workers=None) -> dict:
    """Score a prediction file (or array) against a column target folder. Returns the scorecard:
    ``{"target", "prediction", "granularity", "origin", "extent_shape", "metrics", "per_column",
    "gutters", "floors", "notes"}``; ``notes`` maps each null value's dotted path to the reason."""
    return score_columns_array(prediction, target_dir, origin, floors=floors, seed=seed, tile_rows=tile_rows,
                               executor=executor, threads=threads, band_rows=band_rows, workers=workers)


score_columns = moved(_score_columns, "segscore.columns.score.score_columns",
                      "segscore.api.columns(truth=target_dir, pred=prediction, ...)")


def _cell(v):
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def format_columns(result: dict) -> str:
    cols = REPORT_COLUMNS
    lines = ["| model / target | " + " | ".join(cols) + " |", "|---|" + "|".join("---" for _ in cols) + "|"]
    lines.append(f"| {result['prediction']} vs {result['target']} | "
                 + " | ".join(_cell(result["metrics"].get(c)) for c in cols) + " |")
    for name, card in (result.get("floors") or {}).items():
        lines.append(f"| floor: {name} | " + " | ".join(_cell(card.get(c)) for c in cols) + " |")
    m = result["metrics"]
    lines.append(f"columns scored: {m['cols_scored']}; gutters {m['n_gutters']} "
                 f"({m['excluded_gutters']} excluded next to cross-strip columns)")
    for path, why in (result.get("notes") or {}).items():
        if path.startswith("metrics."):
            lines.append(f"note: {path[len('metrics.'):]} is null: {why}")
    lines.append("per column: " + ", ".join(
        f"{c['col']}({c['status'][0]}) {_cell(c['mean'])}"
        + (f"/{_cell(c['line_period_peak'])}" if c["line_period_peak"] is not None else "")
        for c in result["per_column"]))
    return "\n".join(lines)
