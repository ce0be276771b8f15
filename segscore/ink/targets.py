"""Registered ink targets (ScrollGT ``score``): metrics card, floors, refusals.

A target is a folder holding ``gt_ink.png`` (ink where the value is > 127), optionally
``mask.png`` (scored where > 127; every pixel without it) and ``meta.json`` (region,
registration and placement record, scoring flag). A prediction is a probability map on
the target's fixed [0, 1] scale, never stretched:

- uint8 (an 8-bit PNG, TIFF, ``.npy`` or zarr): its 256 values, ``p = v / 255``;
- uint16: its 65,536 values, ``p = v / 65535``;
- anything else (float ``.npy``, TIFF, zarr): values in [0, 1] (a 1e-6 slack is clipped, as
  ScrollGT does), ranked exactly as float64, every distinct value a threshold, as ScrollGT's
  scikit-learn ranks them (:mod:`segscore.metrics.exact`: a map that fits its 128 MiB budget, as
  a 4,096² target does, is gathered in one read and sorted; a larger one is counted into 65,536
  buckets and only the buckets whose inner order matters refined in later passes over the map,
  in memory that does not grow with the map).

Zeros are counted and there is no inner margin. An 8- or 16-bit map is streamed in row bands
through the foundation's level-histogram kernel (:func:`segscore.kernels.levels.class_histograms`;
an 8-bit one through its branch-free count by label code and value, ``byte_class_counts``)
and its card computed from the two histograms (:mod:`segscore.ink.cards`), exact on its levels.

Floors are scored at scoring time on the target itself: ``all_positive`` (p = 1),
``constant_0_5`` (p = 0.5), whose histograms are one level holding every pixel, and
``uniform_random`` (``numpy.random.default_rng(seed).random(shape)``, streamed by bands and
ranked exactly through the same float path as a prediction; bands drawn by :func:`uniform_rows`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from segscore.engine import check_options
from segscore.engine.plan import plan_bands
from segscore.errors import InputFileError, ScoreError, moved
from segscore.ink.cards import EXACT_THRESHOLDS, card_from_exact, card_from_histograms, constant_card, p_levels_for

__all__ = ["Target", "load_target", "score_target", "score_map", "target_floors", "format_scorecard",
           "map_kind", "uniform_rows", "uniform_presorted", "curves_from_histograms", "RANGE_SLACK", "FLOOR_NAMES",
           "CURVE_KEYS"]

#: values this far outside [0, 1] are clipped (ScrollGT's tolerance); farther is refused
RANGE_SLACK = 1e-6
#: pixels per band of a map streamed against a target (the column targets' too)
MAP_BAND_PX = 1 << 21
#: pixels per band of the exact float passes of a target (each pass reads the map again)
EXACT_BAND_PX = 1 << 18
FLOOR_NAMES = ("all_positive", "constant_0_5", "uniform_random")

SCORECARD_COLUMNS = ("val_f1", "f1_at_0.5", "average_precision", "ap_prevalence_lift", "precision", "recall",
                     "positive_rate", "roc_auc")


@dataclass
class Target:
    """A loaded target: codes (bit 0 ink, bit 1 scored), meta.json and where it came from."""

    path: str
    meta: dict
    codes: np.ndarray  # (h, w) uint8
    has_mask: bool
    target_id: str = ""

    @property
    def shape(self):
        return self.codes.shape


# the target folder is read by segscore.io.targets (the names stay importable from here)
from segscore.io.results import as_result
from segscore.io.targets import read_gray as _gray  # noqa: E402
from segscore.io.targets import read_meta as _read_meta  # noqa: E402
from segscore.io.targets import read_png, target_file  # noqa: E402,F401


def meta_fields():
    """The meta.json fields an ink target's scoring reads (:mod:`segscore.io.schema`)."""
    from segscore.io.schema import Field

    return (
        Field("target_id", (str,)),
        Field("region", (dict,)), Field("region.y0", (int,), lo=0), Field("region.x0", (int,), lo=0),
        Field("region.size", (int,), lo=1),
        Field("scoring", (dict,)), Field("scoring.enabled", (bool,)), Field("scoring.reason", (str,)),
        Field("registration", (dict,)), Field("registration.median_residual", (float,)),
        Field("registration.placement", (dict,)),
        Field("registration.placement.passed", (bool,)),
        Field("registration.placement.offset_level2_px", (float,), lo=0),
        Field("registration.placement.offset_mm", (float,), lo=0),
        Field("registration.placement.gate_threshold_level2_px", (float,), lo=0),
        Field("registration.placement.peak_shift_level2_px", (list,), length=2, items=int),
    )


def load_target(target_dir) -> Target:
    """Read a target folder; ``InputFileError`` when it or its ``gt_ink.png`` is missing, and
    ScoreError naming the field when a meta.json field has the wrong type."""
    from segscore.io.schema import validate

    folder, gt_path = target_file(target_dir, "ink")
    meta = validate(_read_meta(folder), meta_fields(), folder / "meta.json")
    gt = _gray(gt_path, "ink label")
    codes = (gt > 127).view(np.uint8).copy()
    mask_path = folder / "mask.png"
    has_mask = mask_path.exists()
    if has_mask:
        mask = _gray(mask_path, "mask")
        if mask.shape != gt.shape:
            raise ScoreError(f"{mask_path}: shape {mask.shape} differs from gt_ink.png's {gt.shape}; "
                             f"restore the target's mask")
        codes |= (mask > 127).view(np.uint8) << 1
    else:
        codes |= 2
    return Target(str(folder), meta, codes, has_mask, meta.get("target_id") or folder.name)


# ---------------------------------------------------------------------------------------------
# the streamed pass


def uniform_rows(seed: int, width: int, r0: int, r1: int) -> np.ndarray:
    """Rows ``r0:r1`` of ``numpy.random.default_rng(seed).random((H, width))``, drawn alone.

    ``default_rng`` is PCG64 and ``random()`` takes one 64-bit draw per double, so advancing a
    fresh generator by ``r0 * width`` draws gives exactly those rows: bands can be drawn in
    any order, on any thread, and the floor is still the one full-array call.
    """
    bitgen = np.random.PCG64(seed)
    bitgen.advance(int(r0) * int(width))
    return np.random.Generator(bitgen).random((int(r1) - int(r0), int(width)))


#: pixels per NumPy call of :func:`uniform_presorted` (few and large: each call takes the GIL back
#: when it returns, waiting up to the interpreter's switch interval while another thread runs Python)
UNIFORM_CHUNK_PX = 1 << 22


def uniform_presorted(seed: int, codes: np.ndarray, *, scratch=None):
    """The uniform floor's first pass in NumPy alone: ``(packed, tcount, lo, hi)`` for
    :func:`segscore.metrics.exact.rank_exact`'s ``presorted``, or None when its scored pixels
    outgrow the exact ranking's budget (a larger target takes the passes).

    ``packed`` holds ``key << 1 | class`` of every scored pixel of
    ``numpy.random.default_rng(seed).random(codes.shape)`` (``key`` the float64 bits: the values
    are in [0, 1), so nothing is clipped), sorted; ``tcount`` the threshold counts
    (:func:`segscore.metrics.exact.sorted_threshold_counts` on the card's thresholds) and ``lo``,
    ``hi`` the range of every drawn value: what the placed pass (``gather_codes`` on each band,
    then the two-thread sort) gives, to the bit, whatever the bands.

    Why: every call here (the draws, the shifts, the sort) is NumPy's and releases the GIL, and
    none needs numba. So the floors' thread draws and sorts its 16.7 M doubles (a 4,096² target)
    on the second core while the warm-up thread imports numba and loads the kernels and the main
    thread decodes the prediction, and only the sweeps over the sorted scores wait for the kernels
    (benchmarks/README.md). One thread: the sort runs beside the import, not beside another sort. ``scratch`` lends the buffer
    (:class:`segscore.metrics.exact.Scratch`)."""
    from segscore.metrics.exact import DEFAULT_BUDGET_PX, Scratch, sorted_threshold_counts

    h, w = codes.shape
    scored = np.count_nonzero(codes & 2)
    if scored > DEFAULT_BUDGET_PX:
        return None
    packed = (scratch if scratch is not None else Scratch()).take(scored, np.uint64)
    step = max(1, UNIFORM_CHUNK_PX // max(w, 1))
    rng = np.random.Generator(np.random.PCG64(seed))
    lo, hi = np.inf, -np.inf
    if scored == h * w:  # every pixel scored: drawn straight into the buffer
        if scored:
            rng.random(out=packed.view(np.float64))
        packed <<= np.uint64(1)
        for r0 in range(0, h, step):
            r1 = min(h, r0 + step)
            part = packed[r0 * w:r1 * w]
            np.bitwise_or(part, (codes[r0:r1] & 1).ravel(), out=part)
    else:  # drawn by bands, the scored pixels of each packed into place
        off = 0
        for r0 in range(0, h, step):
            r1 = min(h, r0 + step)
            values = rng.random((r1 - r0, w))
            if values.size:
                lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
            band = codes[r0:r1]
            sel = (band & 2) != 0
            keys = values.view(np.uint64)[sel]
            keys <<= np.uint64(1)
            keys |= band[sel] & 1
            packed[off:off + keys.size] = keys
            off += keys.size
    packed.view(np.float64).sort()  # these bit patterns order as floats as they do as integers
    if scored and scored == h * w:  # every drawn value is scored: its range is the sorted ends'
        lo, hi = (packed[[0, -1]] >> np.uint64(1)).view(np.float64).tolist()
    return packed, sorted_threshold_counts(packed, EXACT_THRESHOLDS), lo, hi


def map_kind(dtype) -> str:
    """``'uint8'``, ``'uint16'`` or ``'float'``: how a map of ``dtype`` is put on levels."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return "uint8"
    if dtype == np.uint16:
        return "uint16"
    return "float"


def _scale_note(kind: str) -> dict:
    if kind == "uint8":
        return {"scale": "uint8: p = v / 255 (256 levels)", "quantized": False}
    if kind == "uint16":
        return {"scale": "uint16: p = v / 65535 (65,536 levels)", "quantized": False}
    return {"scale": "float in [0, 1], ranked exactly as float64 (every distinct value a threshold)",
            "quantized": False}


def _histograms(read_band, kind: str, codes: np.ndarray, *, tile_rows=None, executor=None, threads=None):
    """Stream an 8- or 16-bit map ``read_band(r0, r1)`` against ``codes``: (ink hist, bg hist, lo,
    hi, n_nonfinite), its values the levels (the range is the dtype's: nothing to check)."""
    from segscore.engine import reduce
    from segscore.ink.quantize import kernel_array
    from segscore.ink.scan import byte_histograms
    from segscore.kernels.levels import class_histograms

    if kind == "float":
        raise ValueError("float maps are ranked exactly (_rank_float), not on levels")
    h, w = codes.shape
    n_levels = 256 if kind == "uint8" else 65536
    cidx = np.arange(w, dtype=np.int64)
    empty = np.zeros((0, 0), np.int32)

    def read(window):
        r0, r1 = window[0].start, window[0].stop
        return kernel_array(read_band(r0, r1)), codes[r0:r1]

    def task(tile, values, band_codes):
        hist = np.zeros((2, 65536), np.int64)
        ridx = np.arange(len(band_codes), dtype=np.int64)
        if values.dtype == np.uint8:  # counted by label code and value, as the AUC pass counts them
            byte_histograms(values, band_codes, ridx, cidx, hist[0], hist[1], True)
        else:
            class_histograms(values, True, 0.0, 65535.0, True, band_codes, ridx, cidx, hist[0], hist[1], empty)
        return [hist, np.inf, -np.inf, 0]

    def merge(a, b):
        a[0] += b[0]
        return [a[0], min(a[1], b[1]), max(a[2], b[2]), a[3] + b[3]]

    windows = plan_bands((h, w), tile_rows=tile_rows, target_px=MAP_BAND_PX)
    hist, lo, hi, bad = reduce(read, task, merge, windows=windows, executor=executor, threads=threads)
    return hist[0, :n_levels], hist[1, :n_levels], lo, hi, bad


def _rank_float(read_band, codes: np.ndarray, *, tile_rows=None, executor=None, threads=None, check=None,
                keep_rows=False, dtype=None, scratch=None, presorted=None):
    """Rank ``read_band(r0, r1)`` (a map of ``dtype``; None: float64) exactly against ``codes``: a
    :class:`segscore.metrics.exact.ExactRanking` (``check(lo, hi, nonfinite)`` sees the range of
    every pixel of the map, scored or not, after the first pass).

    The scored pixels of each band are counted from ``codes`` first, so when they fit the budget
    each band's kernel (:func:`segscore.kernels.exactrank.gather_codes`) writes them straight into
    its place in the one buffer (``scratch``: a :class:`segscore.metrics.exact.Scratch` lending it);
    a larger map (or dask) takes :func:`segscore.metrics.exact.rank_exact`'s passes. ``presorted``:
    the first pass done already (the uniform floor's, :func:`uniform_presorted`)."""
    from segscore.metrics.exact import key_bits, rank_exact

    windows = plan_bands(codes.shape, tile_rows=tile_rows, target_px=EXACT_BAND_PX)
    if presorted is None:
        scored_rows = np.count_nonzero(codes & 2, axis=1)
        counts = [int(scored_rows[w[0]].sum()) for w in windows]
    else:  # no pass reads the map in this process
        counts = [int(presorted[0].size)]
    ft = np.float32 if key_bits(dtype if dtype is not None else np.float64) == 32 else np.float64

    def read(window):
        r0, r1 = window[0].start, window[0].stop
        values = np.asarray(read_band(r0, r1))
        c = codes[r0:r1]
        scored = (c & 2) != 0
        if scored.all():
            return values.ravel(), (c & 1).ravel(), values
        return values[scored], c[scored] & 1, values

    def read_placed(window):
        r0, r1 = window[0].start, window[0].stop
        return np.ascontiguousarray(read_band(r0, r1), ft), codes[r0:r1]

    def task(ep, tile, values, band_codes):
        from segscore.kernels.exactrank import gather_codes

        tcount = np.zeros((2, ep.thr.size + 1), np.int64)
        stats = np.array([np.inf, -np.inf, 0.0])
        k = gather_codes(values.reshape(band_codes.shape), band_codes, ep.thr, ep.below, tcount, stats,
                         ep.slot(tile.index))
        return ep.placed(tile.index, tcount, stats, k)

    return rank_exact(read, windows, thresholds=EXACT_THRESHOLDS, executor=executor, threads=threads, check=check,
                      keep_rows=keep_rows, dtype=dtype, expected_px=sum(counts), scratch=scratch,
                      placed=(counts, read_placed, task), presorted=presorted)


def _rows_curves(ex):
    """Curve points of an exact ranking's rows (:func:`curves_from_histograms`), or None."""
    if ex.rows is None:
        return None
    levels, pos, neg = ex.rows
    return curves_from_histograms(pos, neg, levels)


def _exact_card(ex):
    card = card_from_exact(ex)
    card.update(_scale_note("float"))
    card["notes"] = card.pop("notes")
    return card


def check_values(name: str, lo: float, hi: float, bad: int) -> None:
    if bad:
        raise ScoreError(f"{name}: the map holds {bad} NaN or infinite values; replace them (0 for no ink) "
                         f"before scoring")
    if lo < -RANGE_SLACK or hi > 1.0 + RANGE_SLACK:
        raise ScoreError(f"{name}: values outside [0, 1] (min {lo:.6g}, max {hi:.6g}); a prediction is a "
                         f"probability: apply a sigmoid or divide by the maximum of its scale")


def _card(ink_h, bg_h, kind):
    card = card_from_histograms(ink_h, bg_h, p_levels_for(kind))
    card.update(_scale_note(kind))
    card["notes"] = card.pop("notes")  # last, as in every result
    return card


@as_result
def score_map(prediction, label, mask=None, *, name: str = "the prediction", tile_rows=None, executor=None,
              threads=None, band_rows=None, workers=None) -> dict:
    """The metrics card of an in-memory or file map against a same-shape ``label`` (ink where
    true or > 0.5) inside ``mask`` (every pixel when None). Raises ScoreError for other shapes,
    NaN or values outside [0, 1]. Engine options: :func:`segscore.engine.reduce` (``band_rows``
    and ``workers`` are the older names of ``tile_rows`` and ``threads``)."""
    from segscore.io.readers import open_map

    engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads, band_rows=band_rows, workers=workers)
    label = np.asarray(label)
    codes = (label > 0.5).view(np.uint8).copy() if label.dtype != bool else label.view(np.uint8).copy()
    if mask is None:
        codes |= 2
    else:
        mask = np.asarray(mask)
        if mask.shape != label.shape:
            raise ScoreError(f"mask shape {mask.shape} differs from the label's {label.shape}")
        codes |= (mask.astype(bool)).view(np.uint8) << 1
    with open_map(png_or_path(prediction), what="prediction", name=name) as src:
        if src.shape != codes.shape:
            raise ScoreError(f"{src.name}: shape {src.shape} differs from the label's {codes.shape}")
        kind = map_kind(src.dtype)
        read_band = lambda a, b: src.read((slice(a, b), slice(0, codes.shape[1])))  # noqa: E731
        if kind == "float":
            ex = _rank_float(read_band, codes, check=lambda *s: check_values(name, *s), dtype=src.dtype, **engine)
            return _exact_card(ex)
        ink_h, bg_h, lo, hi, bad = _histograms(read_band, kind, codes, **engine)
    check_values(name, lo, hi, bad)
    return _card(ink_h, bg_h, kind)


def target_floors(codes: np.ndarray, *, seed: int = 0, tile_rows=None, executor=None, threads=None, band_rows=None,
                  workers=None) -> dict:
    """The three floors of a target whose ``codes`` (bit 0 ink, bit 1 scored) are given."""
    engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads, band_rows=band_rows, workers=workers)
    return _floors_and_histograms(codes, seed=seed, engine=engine)[0]


def _floors_and_histograms(codes: np.ndarray, *, seed: int, engine: dict, keep_rows: bool = False, scratch=None,
                           early: bool = True):
    """``(floor cards, {floor: (ink hist, bg hist, p_levels)})``: the histograms each card was
    computed from (a constant floor's is one level holding every pixel; the uniform floor's its
    exact rows, with ``keep_rows``, else absent). ``scratch``: the buffer a float prediction's
    ranking used before (:class:`segscore.metrics.exact.Scratch`).

    In this process (threads), the uniform floor's draws and sort come first, in NumPy alone
    (:func:`uniform_presorted`, before anything here needs numba); with dask, or ``early=False``,
    its bands take the placed pass. The numbers are the same."""
    presorted = None
    if early and engine.get("executor") in (None, "threads", "synchronous"):
        presorted = uniform_presorted(seed, codes, scratch=scratch)
    h, w = codes.shape
    # the uniform floor first: its kernels are being loaded by now, and the constant floors' cards
    # use those of the prediction's card, which the main thread loads meanwhile
    ex = _rank_float(lambda a, b: uniform_rows(seed, w, a, b), codes, keep_rows=keep_rows, scratch=scratch,
                     presorted=presorted, **engine)
    del presorted
    card = _exact_card(ex)
    card.update({"what": f"numpy.random.default_rng({seed}).random({(h, w)})", "seed": int(seed)})
    pos, neg = ex.n_pos, ex.n_neg
    out, hists = {}, {}
    for name, p, what in (("all_positive", 1.0, "p = 1 everywhere"),
                          ("constant_0_5", 0.5, "p = 0.5 everywhere")):
        const = constant_card(pos, neg, p)
        const.update({"what": what, "scale": "constant: one level holding every pixel", "quantized": False})
        out[name] = const
        hists[name] = (np.array([pos], np.int64), np.array([neg], np.int64), np.array([float(p)]))
    out["uniform_random"] = card
    if ex.rows is not None:
        hists["uniform_random"] = (ex.rows[1], ex.rows[2], ex.rows[0])
    return out, hists


#: the arrays of one curve entry of :func:`score_target`'s ``return_curves``
CURVE_KEYS = ("fpr", "tpr", "roc_thresholds", "precision", "recall", "pr_thresholds")


def curves_from_histograms(ink, bg, p_levels) -> dict | None:
    """The ROC and precision-recall curve points of a map whose pixels on level ``k``
    (probability ``p_levels[k]``) are ``ink[k]`` ink and ``bg[k]`` background pixels: the same
    histograms its card's ``roc_auc`` and ``average_precision`` come from, through
    :func:`segscore.metrics.ranking.roc_curve` and :func:`~segscore.metrics.ranking.precision_recall_curve`
    (every occupied level a point, nothing dropped). So ``numpy.trapezoid(tpr, fpr)`` is the card's
    ``roc_auc`` and ``-sum(diff(recall) * precision[:-1])`` its ``average_precision`` (to rounding).

    Returns ``{"fpr", "tpr", "roc_thresholds", "precision", "recall", "pr_thresholds"}`` (float64
    arrays; ``roc_thresholds[0]`` is ``inf``, the point (0, 0) where nothing is called), or None
    when the mask holds one class (the card's metrics are null then)."""
    from segscore.metrics import ranking as R

    ink = np.asarray(ink, dtype=np.int64)
    bg = np.asarray(bg, dtype=np.int64)
    roc = R.roc_curve(ink, bg, levels=p_levels)
    pr = R.precision_recall_curve(ink, bg, levels=p_levels)
    if roc is None or pr is None:
        return None
    return dict(zip(CURVE_KEYS, (*roc, *pr)))


# ---------------------------------------------------------------------------------------------
# the target command


def png_or_path(prediction):
    """A PNG prediction decoded with :func:`read_png` (as a named array source); else unchanged."""
    if isinstance(prediction, (str, os.PathLike)) and os.fspath(prediction).lower().endswith(".png"):
        from segscore.io.sources import ArraySource

        if not os.path.exists(prediction):
            raise InputFileError(f"{os.fspath(prediction)}: no such file or folder; check the path")
        return ArraySource(read_png(prediction), os.fspath(prediction))
    return prediction


def _scoring_enabled(meta: dict) -> bool:
    scoring = meta.get("scoring")
    if isinstance(scoring, dict) and scoring.get("enabled") is False:
        return False
    return True


def placement_record(meta: dict) -> dict:
    """The placement check a target's meta.json records (``registration.placement``), or {}."""
    reg = meta.get("registration") or {}
    return reg.get("placement") or {}


def prediction_name(prediction) -> str:
    """How a scorecard names the prediction: its file name, or ``<array>``."""
    return os.path.basename(os.fspath(prediction)) if isinstance(prediction, (str, os.PathLike)) else "<array>"


def _crop(src_shape, target: Target, origin, name: str = "prediction"):
    """Rows and columns of the prediction (``name``: its path) that cover the target's region."""
    h, w = target.shape
    region = target.meta.get("region") or {}
    where = (f"meta.json region y0={region.get('y0')} x0={region.get('x0')} size={region.get('size')}"
             if region else "the target's gt_ink.png")
    if origin is None:
        if tuple(src_shape) != (h, w):
            raise ScoreError(f"{name}: prediction shape {tuple(src_shape)} differs from the target's {(h, w)}: predict "
                             f"exactly {where}, or pass --origin Y X for a larger map")
        return 0, 0
    if "y0" not in region or "x0" not in region:
        raise ScoreError(f"{target.path}/meta.json has no region y0/x0, so --origin cannot place the map; "
                         f"give a map of the target's shape {(h, w)} instead")
    oy, ox = (int(v) for v in origin)
    cy, cx = int(region["y0"]) - oy, int(region["x0"]) - ox
    if cy < 0 or cx < 0 or cy + h > src_shape[0] or cx + w > src_shape[1]:
        raise ScoreError(f"{name}: prediction of shape {tuple(src_shape)} at origin ({oy}, {ox}) does not cover {where} "
                         f"(needs rows {cy}:{cy + h} and columns {cx}:{cx + w} of the map)")
    return cy, cx


def _warm_exact():
    """Load every kernel of the exact float ranking: the placed first pass (float64 and float32),
    the read one, a collecting pass, both kinds of rows, and the two-thread sort's partition."""
    from segscore.kernels.exactrank import partition, rotate
    from segscore.metrics.exact import warm_kernels

    warm_kernels(EXACT_THRESHOLDS)  # the read passes, float64 and float32 keys
    p = np.array([0.1, 0.1 + 1e-12, 0.1 + 2e-12, 0.9])
    cls = np.array([0, 1, 0, 1], np.uint8)
    codes = (cls | 2).reshape(2, 2)
    for dtype in (None, np.float32):
        _rank_float(lambda a, b: p.reshape(2, 2)[a:b], codes, executor="synchronous", dtype=dtype)
    for ut in (np.uint64, np.uint32):
        rotate(np.zeros(2, ut)[partition(np.zeros(2, ut), ut(1)):], 1)


class _Background:
    """``fn()`` on a thread of its own started now (``now``; else run by :meth:`result`, in the
    caller's thread), in the caller's context (so :func:`segscore.engine.executor.thread_budget`
    still caps its passes); :meth:`result` waits and returns it or raises its exception."""

    def __init__(self, fn, *, now=True):
        import contextvars
        import threading

        self._fn, self._out, self._err, self._thread = fn, None, None, None
        if now:
            ctx = contextvars.copy_context()
            self._thread = threading.Thread(target=ctx.run, args=(self._run,), name="segscore-floors", daemon=True)
            self._thread.start()

    def _run(self):
        try:
            self._out = self._fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller by result()
            self._err = e

    def join(self):
        if self._thread:
            self._thread.join()

    def result(self):
        if self._thread is None:  # not started: run here, once
            self._thread = False
            self._run()
        self.join()
        if self._err is not None:
            raise self._err
        return self._out


def _warm_floor():
    """Load the kernels of the uniform floor's ranking once its first pass is done in NumPy
    (:func:`uniform_presorted`): the sweeps over sorted float64 scores and the rows' terms."""
    from segscore.metrics.exact import rank_exact, sorted_threshold_counts

    p = np.array([0.1, 0.1 + 1e-12, 0.1 + 2e-12, 0.9])
    packed = np.sort((p.view(np.uint64) << np.uint64(1)) | np.array([0, 1, 0, 1], np.uint64))
    rank_exact(None, [], thresholds=EXACT_THRESHOLDS,
               presorted=(packed, sorted_threshold_counts(packed, EXACT_THRESHOLDS), 0.1, 0.9))


class _Warming:
    """Kernels loaded on a thread while PNGs decode (numba's import, its on-disk cache): the level
    kernels first (then :attr:`levels` is set), then every kernel of the exact float ranking
    (``exact``: the prediction may be a float map) or, for an 8- or 16-bit PNG prediction, only
    those the uniform floor's ranking runs after its NumPy first pass (``floor``): the rest would
    be loaded for nothing, about 0.1 s of CPU beside the floor's sort."""

    def __init__(self, *, exact=True, floor=False):
        import threading

        self.levels = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(exact, floor), name="segscore-prewarm", daemon=True)
        self._thread.start()

    def _work(self, exact, floor):
        try:
            from segscore.ink.scan import byte_histograms
            from segscore.kernels.levels import class_histograms

            codes = np.full((1, 1), 3, np.uint8)
            idx = np.zeros(1, np.int64)
            h = np.zeros(65536, np.int64)
            empty = np.zeros((0, 0), np.int32)
            byte_histograms(np.zeros((1, 1), np.uint8), codes, idx, idx, h, h.copy(), True)
            v = np.zeros((1, 1), np.float64)
            class_histograms(v, False, 0.0, 65535.0, True, codes, idx, idx, h, h.copy(), empty)
            self.levels.set()
            if exact:
                _warm_exact()
            elif floor:
                _warm_floor()
        except Exception:  # noqa: BLE001 - only a head start: the real call reports any problem
            pass
        finally:
            self.levels.set()

    def join(self):
        self._thread.join()


def _prewarm(*, exact=True, floor=False):
    """Start loading the kernels (:class:`_Warming`)."""
    return _Warming(exact=exact, floor=floor)


@as_result
def _score_target(prediction, target, *, origin=None, allow_non_scoring: bool = False,
                 allow_failing_placement: bool = False, floors: bool = True, seed: int = 0, tile_rows=None,
                 executor=None, threads=None, band_rows=None, workers=None, return_curves: bool = False):
    """Score ``prediction`` (a path or an array) against a target folder (or a loaded
    :class:`Target`). Returns ``{"target", "prediction", "registration", "scoring_enabled",
    "metrics", "floors"}``.

    Compatibility entry point (ScrollGT's shape, prediction first): prefer :func:`segscore.api.target`.

    ``return_curves=True`` returns ``(result, curves)`` instead, ``result`` unchanged and
    ``curves`` ``{"prediction": points, "floors": {name: points}}`` (``floors`` empty without
    floors), each ``points`` the ROC and precision-recall curves of
    :func:`curves_from_histograms` from the very histograms the card was computed from, or None
    where the card's metrics are null. The arrays are for figures
    (:func:`segscore.figures.target_curves`), not for the JSON.

    ``notes`` (always present) maps each null metric's dotted path (``metrics.roc_auc``,
    ``floors.uniform_random.roc_auc``) to the reason.

    Refuses (ScoreError) a non-scoring target unless ``allow_non_scoring``, one that fails its
    placement check unless ``allow_failing_placement``, a map of the wrong shape, NaN and
    values outside [0, 1]. ``origin=(Y, X)`` is the level-2 coordinate of the map's pixel (0, 0):
    the map is then cut to the target's region from meta.json.
    """
    from segscore.io.readers import open_map

    from segscore.io.targets import refuse_target_as_prediction

    engine = check_options(tile_rows=tile_rows, executor=executor, threads=threads, band_rows=band_rows, workers=workers)
    refuse_target_as_prediction(prediction, "segscore target PRED TARGET")
    png = isinstance(prediction, (str, os.PathLike)) and os.fspath(prediction).lower().endswith(".png")
    warming = _prewarm(exact=not png, floor=floors and engine.get("executor") in (None, "threads", "synchronous"))
    tgt = target if isinstance(target, Target) else load_target(target)
    meta = tgt.meta
    enabled = _scoring_enabled(meta)
    if not enabled and not allow_non_scoring:
        reason = (meta.get("scoring") or {}).get("reason", "")
        first = reason.split(". ")[0].strip().rstrip(".") if reason else "see its meta.json"
        raise ScoreError(f"target {tgt.target_id} is marked non-scoring ({first}); pass --allow-non-scoring "
                         f"(allow_non_scoring=True) to reproduce its historical rows")
    placement = placement_record(meta)
    if placement.get("passed") is False and not allow_failing_placement:
        raise ScoreError(f"target {tgt.target_id} FAILS its placement check: the label peaks "
                         f"{placement.get('offset_level2_px')} level-2 px ({placement.get('offset_mm')} mm) from zero "
                         f"shift, over the {placement.get('gate_threshold_level2_px')} px gate, so a score would "
                         f"measure misalignment; pass --allow-failing-placement to score it anyway")
    pred_name = prediction_name(prediction)
    h, w = tgt.shape
    # the floors need only the target: they are ranked on their own thread while the prediction is
    # decoded and scored (a float prediction waits for them, so one gathered buffer is held at a time)
    from segscore.engine.executor import default_workers

    beside = engine.get("executor") in (None, "threads") and (engine.get("threads") or default_workers()) > 1 \
        and default_workers() > 1  # one thread asked for (or a batch's budget of one): one after the other
    floor_job = _Background(lambda: _floors_and_histograms(tgt.codes, seed=seed, engine=engine,
                                                           keep_rows=return_curves), now=beside) if floors else None
    try:
        with open_map(png_or_path(prediction), what="prediction", name="the prediction") as src:
            cy, cx = _crop(src.shape, tgt, origin, src.name)
            kind = map_kind(src.dtype)
            warming.levels.wait()
            if kind == "float":
                warming.join()
            read_band = lambda a, b: src.read((slice(cy + a, cy + b), slice(cx, cx + w)))  # noqa: E731
            if kind == "float":
                if floor_job is not None:
                    floor_job.result()
                ex = _rank_float(read_band, tgt.codes, check=lambda *s: check_values(src.name, *s),
                                 keep_rows=return_curves, dtype=src.dtype, **engine)
                card = _exact_card(ex)
            else:
                ink_h, bg_h, lo, hi, bad = _histograms(read_band, kind, tgt.codes, **engine)
                check_values(src.name, lo, hi, bad)
                card = _card(ink_h, bg_h, kind)
    finally:
        if floor_job is not None:
            floor_job.join()  # never leave it running (an error of the prediction is raised as it is)
        warming.join()
    reg = meta.get("registration") or {}
    registration = {
        "median_residual_voxels": reg.get("median_residual"),
        "placement_offset_level2_px": placement.get("offset_level2_px"),
        "placement_mm": placement.get("offset_mm"),
        "placement_passed": placement.get("passed"),
    }
    if reg.get("validation_basis") is not None:
        registration["validation"] = reg.get("validation_basis")
    if placement.get("peak_shift_level2_px") is not None:
        registration["placement_peak_shift_level2_px"] = placement.get("peak_shift_level2_px")
    if placement.get("offset_mm"):
        registration["resolution_note"] = (f"scores are lower bounds; this target resolves to "
                                           f"~{placement['offset_mm']} mm")
    result = {
        "target": tgt.target_id,
        "prediction": pred_name,
        "registration": registration,
        "scoring_enabled": enabled,
        "metrics": card,
    }
    if origin is not None:
        result["origin"] = [int(origin[0]), int(origin[1])]
        result["crop"] = {"y0": cy, "x0": cx, "h": h, "w": w}
    overrides = [n for n, on in (("allow_non_scoring", allow_non_scoring and not enabled),
                                 ("allow_failing_placement",
                                  allow_failing_placement and placement.get("passed") is False)) if on]
    if overrides:
        result["overrides"] = overrides
    floor_hists = {}
    if floors:
        result["floors"], floor_hists = floor_job.result()
    from segscore.io.results import Result, lift_notes

    result = lift_notes(result)
    if not return_curves:
        return result
    curves = {"prediction": _rows_curves(ex) if kind == "float" else curves_from_histograms(ink_h, bg_h,
                                                                                            p_levels_for(kind)),
              "floors": {name: curves_from_histograms(*h) for name, h in floor_hists.items()}}
    return Result(result), curves


score_target = moved(_score_target, "segscore.ink.targets.score_target",
                     "segscore.api.target(truth=target, pred=prediction, ...)")


def _cell(v):
    return f"{v:.4f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else "n/a"


def format_scorecard(result: dict) -> str:
    """A markdown scorecard: the prediction's row and one row per floor."""
    cols = SCORECARD_COLUMNS
    lines = ["| model / target | " + " | ".join(cols) + " |", "|---|" + "|".join("---" for _ in cols) + "|"]

    def row(name, card):
        lines.append(f"| {name} | " + " | ".join(_cell(card.get(c)) for c in cols) + " |")

    row(f"{result['prediction']} vs {result['target']}", result["metrics"])
    for name, card in (result.get("floors") or {}).items():
        row(f"floor: {name}", card)
    notes = []
    m = result["metrics"]
    by_reason: dict = {}
    for path, why in (result.get("notes") or {}).items():
        if path.startswith("metrics."):
            by_reason.setdefault(why, []).append(path[len("metrics."):])
    for why, keys in by_reason.items():
        notes.append(f"{', '.join(keys)} {'is' if len(keys) == 1 else 'are'} null: {why}")
    if m.get("quantized"):
        notes.append(f"quantized: {m['scale']}")
    reg = result.get("registration") or {}
    if reg.get("placement_offset_level2_px") is not None:
        notes.append(f"placement {reg['placement_offset_level2_px']} level-2 px / {reg.get('placement_mm')} mm, "
                     f"{'passed' if reg.get('placement_passed') else 'FAILED'} (residual "
                     f"{reg.get('median_residual_voxels') if reg.get('median_residual_voxels') is None else round(reg['median_residual_voxels'], 2)} "
                     f"voxels is scatter, not placement)")
    if not result.get("scoring_enabled", True):
        notes.append("target is NON-SCORING: a historical record, not a bar to beat")
    if result.get("floors", {}).get("uniform_random", {}).get("seed") is not None:
        notes.append(f"uniform_random floor seed {result['floors']['uniform_random']['seed']}")
    return "\n".join(lines + [f"note: {n}" for n in notes])
