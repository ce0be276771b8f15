"""Pixel AUC of a 2D ink map inside a supervision mask, with its control, bootstrap and compare.

The AUC is the chance that a labelled ink pixel scores above a labelled non-ink pixel,
counted inside the supervision mask with ties half (the Mann-Whitney statistic). It is
computed exactly from two 65,536-level histograms that are streamed tile by tile, so a
5,980 x 8,240 map (or one four times that) is scored in bounded memory.

``score_files`` is what ``segscore auc`` runs; ``score_array``, ``block_bootstrap``,
``auc_scores``, ``labels_on_map`` and ``label_grid`` are its parts, for notebooks. The result
dicts round AUCs to 4 decimals; ``auc_scores`` returns the unrounded value. An AUC the input
makes impossible (no ink or no background pixel left to score, no bootstrap draw with both
classes) is None, and the result's ``notes`` maps its dotted path (``forward.auc``,
``control.auc``, ``bootstrap.ci95``) to the reason (:mod:`segscore.io.results`).

Pixels where the map is exactly 0 are "unpredicted" and left out unless ``keep_zero``;
``inner`` leaves out that many pixels at every edge. The point estimates are exact; the
bootstrap intervals come from 1,024-bin block histograms (see :mod:`segscore.ink.bootstrap`).
"""

from __future__ import annotations

import os
from contextlib import ExitStack

import numpy as np

from segscore.engine import check_options
from segscore.io.grid import IndexedView
from segscore.io.sources import as_source
from segscore.errors import ScoreError, VerifyError, moved  # noqa: F401  (VerifyError: kit's name)
from segscore.ink.quantize import MIN_FLOAT_LEVELS, quantize_values  # noqa: F401
from segscore.io.grid import MAX_AXIS_MISMATCH, check_crop, label_grid  # noqa: F401
from segscore.io.results import as_result

DEFAULT_LEVEL = "2"
#: side of a bootstrap block: 1 mm at 9.366 um per pixel
BLOCK_PX = 107
BOOT_BINS = 1024
MIN_DRAWS = 20
MAX_DRAWS = 100_000  # each draw is a pass over the block counts: beyond this it is a typo
#: draws used by ``compare`` when no bootstrap was asked for
COMPARE_DRAWS = 300

__all__ = ["score_files", "score_array", "auc_scores", "block_bootstrap", "labels_on_map", "label_grid",
           "format_result", "ScoreError", "VerifyError", "DEFAULT_LEVEL", "BLOCK_PX", "BOOT_BINS",
           "MAX_AXIS_MISMATCH", "MIN_FLOAT_LEVELS"]


def _round(x, nd=4):
    """kit's 4 decimals; None stays None. A NaN is not hidden here: the JSON writer refuses it."""
    return None if x is None else round(float(x), nd)


# ---------------------------------------------------------------------------------------------
# pure metrics


def _auc_scores(ink_scores, background_scores):
    """Mann-Whitney AUC with ties counted half, exact on 65,536 integer levels.

    Compatibility entry point (kit's ``auc_scores(ink, background)``): prefer :func:`segscore.api.auc` for a map.

    int64 scores within 0..65535 are taken as levels; any other scores are quantized together
    first (the map rules of :mod:`segscore.ink.quantize`). Returns the unrounded float, or
    None when a class is empty. Raises ScoreError for NaN or infinite scores.
    """
    from segscore.metrics.ranking import auc

    a = np.ravel(np.asarray(ink_scores))
    b = np.ravel(np.asarray(background_scores))
    if a.size == 0 or b.size == 0:
        return None
    both = np.concatenate([a, b])
    if both.dtype == np.int64 and both.min() >= 0 and both.max() <= 65535:
        levels = both
    else:
        levels, _ = quantize_values(both)
    ha = np.bincount(levels[: a.size], minlength=65536)
    hb = np.bincount(levels[a.size:], minlength=65536)
    return auc(ha, hb)


auc_scores = moved(_auc_scores, "segscore.ink.auc.auc_scores",
                   "segscore.api.auc(truth, pred, mask=mask)")


# ---------------------------------------------------------------------------------------------
# validation helpers


def _check_boot_args(draws, block_px):
    if draws is not None and draws != 0 and draws < MIN_DRAWS:
        raise ScoreError(f"use at least {MIN_DRAWS} bootstrap draws")
    if draws is not None and draws > MAX_DRAWS:
        raise ScoreError(f"use at most {MAX_DRAWS:,} bootstrap draws (300 is plenty; {draws:,} were asked for)")
    if block_px is None or int(block_px) < 1:
        raise ScoreError("block size must be at least 1 px")


def _check_inner(inner, shape):
    inner = int(inner)
    if inner < 0:
        raise ScoreError(f"inner {inner} must be 0 or more pixels")
    if inner and 2 * inner >= min(shape):
        raise ScoreError(f"inner {inner} leaves nothing of a {tuple(shape)} map")
    return inner


def _open_map(obj, what, name=None):
    from segscore.io.readers import open_map

    return open_map(obj, what=what, name=name)


def _open_level(obj, level, what):
    from segscore.io.readers import open_zarr, squeeze

    if isinstance(obj, (str, os.PathLike)):
        src = squeeze(open_zarr(obj, level=level, what=what))
    else:
        src = squeeze(as_source(obj, name=f"<{what}>"))
    if src.ndim != 2:
        raise ScoreError(f"{src.name}: expected 2D {what} at level {level}, got shape {src.shape}")
    return src


def _same_shape(src, ref, what):
    if src.shape != ref.shape:
        raise ScoreError(f"{src.name}: {what} shape {src.shape} differs from the map's {ref.shape}; give the "
                         f"{what} of the same surface and crop as the map")


def _same_level_shape(lab, msk, level):
    if lab.shape != msk.shape:
        raise ScoreError(f"{msk.name}: labels {lab.shape} and mask {msk.shape} differ in shape at level {level} "
                         f"(labels: {lab.name}); give the labels and mask of the same segment")


# ---------------------------------------------------------------------------------------------
# the engine call shared by every entry point


def _run(sources, names, view, *, keep_zero, inner, draws, block_px, seed, paired, engine):
    """Score ``sources`` (map first; with ``paired`` the last one is the compared map)."""
    from segscore.ink import scan as S

    spec = S.ScanSpec(keep_zero=bool(keep_zero), inner=inner, block_px=block_px if draws else None,
                      paired=paired, **engine)
    loading = S.start_loading(sources, spec)  # beside the reads, not before them
    try:
        qs = S.quantizers(sources, names, spec)
        res = S.scan(sources, qs, view, spec)
    finally:
        if loading is not None:
            loading.join()
    cards = []
    for i in range(len(sources)):
        ink_h, bg_h = res.hist[i]
        cards.append(_card(ink_h, bg_h, int(res.zeros[i]), keep_zero, inner))
    boot = arrays = None
    if draws:
        boot, arrays = _bootstrap(res, paired, draws, block_px, seed, names)
    return cards, boot, qs, arrays


def _card(ink_h, bg_h, zeros, keep_zero, inner):
    from segscore.metrics.ranking import auc as exact_auc

    n_ink, n_bg = int(ink_h.sum()), int(bg_h.sum())
    auc = exact_auc(ink_h, bg_h)  # None when a class is empty
    notes = {}
    if auc is None:
        missing = "no ink or background pixel" if not (n_ink or n_bg) else "no ink pixel" if not n_ink \
            else "no background pixel"
        left_out = f" ({zeros} unpredicted px in the mask left out)" if zeros and not keep_zero else ""
        notes["auc"] = f"{missing} left to score inside the mask{left_out}"
    return {"auc": _round(auc), "ink_px": n_ink, "background_px": n_bg, "zero_px_in_mask": zeros,
            "zero_px_counted": bool(keep_zero), "inner": int(inner), "auc_exact": auc, "notes": notes}


def _interval(values, path, notes):
    """``[lo, hi]`` (4 decimals) of the finite draws, or ``[None, None]`` with a note at ``path``."""
    from segscore.ink.bootstrap import interval

    lo, hi = interval(values)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        notes[path] = "no bootstrap draw held both ink and background pixels"
        return [None, None], None
    return [_round(lo), _round(hi)], hi - lo


def _zero_map(res, names) -> str | None:
    """Why no block can be resampled when a map (the compared one first) is 0 at every supervised
    pixel, naming its file; None otherwise."""
    for i in sorted(range(len(names)), key=lambda i: -i):
        ink_h, bg_h = res.hist[i]
        if int(ink_h.sum()) + int(bg_h.sum()) == 0 and int(res.zeros[i]) > 0:
            role = "the compared map" if i == len(names) - 1 and i > 0 else "the map"
            return (f"{names[i]}: {role} is constant, 0 at every supervised pixel, and a map's zeros are left "
                    f"out as unscored, so no pixel is left to resample; give a map with scores (or --keep-zero "
                    f"to rank its zeros)")
    return None


def _bootstrap(res, paired, draws, block_px, seed, names=()):
    from segscore.ink import bootstrap as BS
    from segscore.ink.scan import block_table

    table = block_table(res, paired)
    if table.n_blocks == 0:
        raise ScoreError(_zero_map(res, names) or "no supervised pixels to resample")
    tot = table.totals()
    if tot[:BOOT_BINS].sum() == 0 or tot[BOOT_BINS:2 * BOOT_BINS].sum() == 0:
        raise ScoreError("the mask holds only one class; no AUC to resample")
    if paired and (tot[2 * BOOT_BINS:3 * BOOT_BINS].sum() == 0 or tot[3 * BOOT_BINS:].sum() == 0):
        raise ScoreError("the mask holds only one class; no AUC to resample")
    map_draws, other_draws = BS.resample(table, draws, seed, paired)
    notes = {}
    ci95, width = _interval(map_draws, "ci95", notes)
    if width is None:
        notes["half_width"] = notes["ci95"]
    out = {"draws": int(draws), "block_px": int(block_px), "blocks": table.n_blocks, "seed": int(seed),
           "ci95": ci95, "half_width": None if width is None else _round(width / 2)}
    undefined = int(np.count_nonzero(~np.isfinite(map_draws)))
    if undefined:
        out["draws_without_auc"] = undefined
    if paired:
        from segscore.metrics.ranking import auc as exact_auc

        a = exact_auc(tot[:BOOT_BINS], tot[BOOT_BINS:2 * BOOT_BINS])  # both classes present: refused above
        b = exact_auc(tot[2 * BOOT_BINS:3 * BOOT_BINS], tot[3 * BOOT_BINS:])
        diff = map_draws - other_draws
        dci, _ = _interval(diff, "compare.ci95", notes)
        ok = np.isfinite(diff)
        if not ok.any():
            notes["compare.share_draws_map_not_ahead"] = "no bootstrap draw held both classes in both maps"
        out["compare"] = {
            "auc_map": _round(a), "auc_other": _round(b), "difference": _round(a - b),
            "ci95": dci,
            "share_draws_map_not_ahead": _round(float(np.mean(diff[ok] <= 0)) if ok.any() else None),
            "pixels": int(tot[:BOOT_BINS].sum() + tot[BOOT_BINS:2 * BOOT_BINS].sum()),
        }
    out["notes"] = notes
    arrays = {"map": map_draws, "compare": other_draws, "difference": map_draws - other_draws if paired else None}
    return out, arrays


#: the keys of the draws ``return_draws=True`` returns (:func:`score_files`, :func:`block_bootstrap`)
DRAW_KEYS = ("map", "compare", "difference")


def _public(card):
    return {k: v for k, v in card.items() if k != "auc_exact"}


def _default_executor(arrays, executor):
    if executor is None and any(type(a).__module__.startswith("dask") for a in arrays):
        return "dask"
    return executor


# ---------------------------------------------------------------------------------------------
# public API


@as_result
def _score_array(prediction, ink, mask, keep_zero=False, inner=0, *, tile_rows=None, executor=None,
                threads=None, workers=None):
    """AUC of a 2D map against same-shape boolean ``ink`` and ``mask`` already on its grid.

    Compatibility entry point (kit's signature, prediction first): prefer :func:`segscore.api.auc`.

    Returns ``{"auc", "ink_px", "background_px", "zero_px_in_mask", "zero_px_counted",
    "inner", "notes"}``; ``auc`` is rounded to 4 decimals, or None when a class is empty (then
    ``notes["auc"]`` says which). Any of the
    arrays may be a NumPy, memory-mapped, zarr or dask array: they are read tile by tile.
    Raises ScoreError when ``inner`` leaves nothing, for NaN or inf in the map, or for
    arrays of different shapes.
    """
    executor = _default_executor((prediction, ink, mask), executor)
    with ExitStack() as stack:
        src = stack.enter_context(_open_map(prediction, "map", name="the map"))
        lab, msk = _labels_of(ink, mask, src)
        inner = _check_inner(inner, src.shape)
        cards, _, _, _ = _run([src], ["the map"], IndexedView.identity([lab, msk]), keep_zero=keep_zero,
                           inner=inner, draws=0, block_px=None, seed=0, paired=False,
                           engine=check_options(tile_rows=tile_rows, executor=executor, threads=threads,
                                                  workers=workers))
    return _public(cards[0])


score_array = moved(_score_array, "segscore.ink.auc.score_array",
                    "segscore.api.auc(truth=ink, pred=prediction, mask=mask)")


def _labels_of(ink, mask, src):
    """The ink labels and the mask as level sources, refused unless of the map ``src``'s shape."""
    lab = _open_level(ink, None, "ink labels")
    msk = _open_level(mask, None, "mask")
    for s, what in ((lab, "ink"), (msk, "mask")):
        if s.shape != src.shape:
            raise ScoreError(f"{s.name}: {what} shape {s.shape} differs from the map's {src.shape}; give "
                             f"{what} arrays of the map's shape")
    return lab, msk


def block_bootstrap(prediction, ink, mask, draws=300, block_px=BLOCK_PX, seed=0, other=None, keep_zero=False,
                    inner=0, *, tile_rows=None, executor=None, threads=None, workers=None, return_draws=False):
    """Block-bootstrap interval of a map's AUC (and of its difference from ``other``).

    Blocks are ``block_px`` squares of the map's grid; the draws resample the blocks holding
    scored pixels with replacement (see :mod:`segscore.ink.bootstrap` for the exact rule).
    With ``other``, both maps are scored on the pixels they share (zeros of either left
    out, unless ``keep_zero``) with the same draws, and ``compare`` carries the paired
    difference. Returns the ``bootstrap`` dict of the result, with its ``notes`` (why an
    interval is null: no draw held both classes).

    ``return_draws=True`` returns ``(bootstrap, draws)``: ``draws`` as in :func:`score_files`.

    Raises ScoreError for fewer than 20 draws, a block under 1 px, a compared map of another
    shape, NaN or inf in a map, no scored pixel, or a mask with one class.
    """
    _check_boot_args(draws, block_px)
    if not draws:
        raise ScoreError(f"use at least {MIN_DRAWS} bootstrap draws")
    executor = _default_executor((prediction, ink, mask, other), executor)
    with ExitStack() as stack:
        src = stack.enter_context(_open_map(prediction, "map", name="the map"))
        sources, names = [src], ["the map"]
        if other is not None:
            oth = stack.enter_context(_open_map(other, "compared map", name="the compared map"))
            _same_shape(oth, src, "compared map")
            sources.append(oth)
            names.append("the compared map")
        lab, msk = _labels_of(ink, mask, src)
        inner = _check_inner(inner, src.shape)
        _, boot, _, arrays = _run(sources, names, IndexedView.identity([lab, msk]), keep_zero=keep_zero,
                                  inner=inner, draws=int(draws), block_px=int(block_px), seed=int(seed),
                                  paired=other is not None, engine=check_options(tile_rows=tile_rows, executor=executor,
                                                                                 threads=threads, workers=workers))
    return (boot, arrays) if return_draws else boot


def labels_on_map(labels, mask, level, surface_shape, crop, map_shape):
    """``(ink, supervised)`` boolean arrays of ``map_shape``: the labels resampled onto the map.

    ``labels`` and ``mask`` are zarr stores (a group of levels or one 2D array) or arrays.
    Raises ScoreError for unreadable stores, a missing level, labels and mask of different
    shapes, and every refusal of :func:`label_grid`.
    """
    level = None if level is None else str(level)
    with ExitStack() as stack:
        lab = stack.enter_context(_open_level(labels, level, "labels"))
        msk = stack.enter_context(_open_level(mask, level, "mask"))
        _same_level_shape(lab, msk, level)
        if surface_shape is None:
            if crop is not None:
                raise ScoreError("a cropped map needs the full surface shape (surface_shape)")
            surface_shape = map_shape
        rows, cols = label_grid(lab.shape, surface_shape, crop, map_shape)
        view = IndexedView([lab, msk], rows, cols)
        (ink, sup), r, c = view.read((slice(0, len(rows)), slice(0, len(cols))))
        idx = np.ix_(r, c)
        return np.asarray(ink)[idx] > 0, np.asarray(sup)[idx] > 0


@as_result
def _score_files(prediction, labels, mask, control=None, level=DEFAULT_LEVEL, crop=None, surface_shape=None,
                keep_zero=False, inner=0, bootstrap=0, block_px=BLOCK_PX, compare=None, seed=0, *,
                tile_rows=None, executor=None, threads=None, progress=None, workers=None, return_draws=False):
    """Score a map file (and its control, and a compared map) against a segment's labels.

    Compatibility entry point (kit's published signature, prediction first): prefer :func:`segscore.api.auc`.

    ``prediction``, ``control`` and ``compare`` are 2D maps (TIFF, ``.npy``, PNG, zarr, or
    arrays); ``labels`` and ``mask`` are the segment's ``inklabels.zarr`` and
    ``supervision.zarr`` (a group of pyramid levels, or one 2D array). ``crop`` is
    ``[Y0, Y1, X0, X1]`` and ``surface_shape`` ``[H, W]``. Returns the result dict of the
    spec's Outputs table (``forward``, ``control``, ``files``, ``level``, ``crop``,
    ``bootstrap``) plus ``quantization``, the level rule used for each map, and ``notes``
    (always present): why each null AUC is null, by dotted path (``forward.auc``).

    Engine options: ``tile_rows`` (band height; default chunk-aligned bands of ~4 Mpx),
    ``executor`` ("threads", "synchronous", "dask" or a distributed Client), ``threads``
    (``workers``, its older name, still works), ``progress`` (a callable ``(done, total)``).
    None of them changes a result (see :func:`segscore.engine.reduce`).

    ``return_draws=True`` returns ``(result, draws)`` instead, ``result`` unchanged and ``draws``
    None without a bootstrap, else ``{"map", "compare", "difference"}``: the unrounded AUC of
    each bootstrap draw (float64 arrays of ``bootstrap.draws`` values, NaN where a draw held
    one class only; ``bootstrap.ci95`` is ``numpy.percentile`` 2.5 and 97.5 of the finite
    ``map`` values, rounded), and with ``compare`` the compared map's draws and the paired
    differences ``map - compare`` (``bootstrap.compare.ci95`` their percentiles); otherwise
    those two are None. The arrays are for figures (:func:`segscore.figures.auc_draws`), not
    for the JSON.
    """
    from segscore.io.readers import same_file

    draws = int(bootstrap or 0)
    _check_boot_args(draws, block_px)
    if draws < 0:
        raise ScoreError(f"use at least {MIN_DRAWS} bootstrap draws")
    if compare is not None and not draws:
        draws = COMPARE_DRAWS
    is_path = isinstance(prediction, (str, os.PathLike))
    if control is not None and is_path and isinstance(control, (str, os.PathLike)) \
            and os.path.exists(control) and same_file(prediction, control):
        raise ScoreError(f"control {control} is the map itself; give the reverse-depth map as the control")
    level = str(level)
    engine = check_options(tile_rows=tile_rows, executor=_default_executor((prediction, control, compare), executor),
                           threads=threads, progress=progress, workers=workers)
    with ExitStack() as stack:
        src = stack.enter_context(_open_map(prediction, "map"))
        if surface_shape is None:
            if crop is not None:
                raise ScoreError("a cropped map needs the full surface shape (surface_shape)")
            surface_shape = src.shape
        else:
            surface_shape = tuple(int(v) for v in surface_shape)
            check_crop(crop, surface_shape, src.shape, src.name)
        lab = stack.enter_context(_open_level(labels, level, "labels"))
        msk = stack.enter_context(_open_level(mask, level, "mask"))
        _same_level_shape(lab, msk, level)
        rows, cols = label_grid(lab.shape, surface_shape, crop, src.shape, src.name)
        sources, names = [src], [src.name]
        if control is not None:
            ctl = stack.enter_context(_open_map(control, "control"))
            _same_shape(ctl, src, "control")
            sources.append(ctl)
            names.append(ctl.name)
        if compare is not None:
            cmp_ = stack.enter_context(_open_map(compare, "compared map"))
            _same_shape(cmp_, src, "compared map")
            sources.append(cmp_)
            names.append(cmp_.name)
        inner = _check_inner(inner, src.shape)
        view = IndexedView([lab, msk], rows, cols)
        cards, boot, qs, arrays = _run(sources, names, view, keep_zero=keep_zero, inner=inner, draws=draws,
                                       block_px=int(block_px), seed=int(seed), paired=compare is not None,
                                       engine=engine)

    def given(x):
        return None if x is None else (os.fspath(x) if isinstance(x, (str, os.PathLike)) else f"<{type(x).__name__}>")

    result = {"forward": _public(cards[0])}
    if control is not None:
        result["control"] = _public(cards[1])
    files = {"prediction": given(prediction), "labels": given(labels), "mask": given(mask), "control": given(control)}
    if compare is not None:
        files["compare"] = given(compare)
    result.update({"files": files, "level": level, "crop": None if crop is None else [int(v) for v in crop]})
    if boot is not None:
        result["bootstrap"] = boot
    result["quantization"] = {"map": qs[0].rule}
    if control is not None:
        result["quantization"]["control"] = qs[1].rule
    if compare is not None:
        result["quantization"]["compare"] = qs[-1].rule
    from segscore.io.results import Result, lift_notes

    result = lift_notes(result)
    return (Result(result), arrays) if return_draws else result


score_files = moved(_score_files, "segscore.ink.auc.score_files",
                    "segscore.api.auc(truth=labels, pred=prediction, mask=mask, ...)")


# ---------------------------------------------------------------------------------------------
# text


def _line(label, r):
    if r["auc"] is None:
        return f"{label}: no AUC (ink {r['ink_px']} px, background {r['background_px']} px in the mask)"
    text = f"{label}: AUC {r['auc']:.4f} on {r['ink_px']} ink and {r['background_px']} background px"
    zeros = r.get("zero_px_in_mask", 0)
    if zeros:
        text += (f" ({zeros} zero px in the mask counted)" if r.get("zero_px_counted")
                 else f" ({zeros} unpredicted px in the mask left out)")
    return text


def format_result(result) -> str:
    """The text ``segscore auc`` prints for a result of :func:`score_files`."""
    rows = [_line("map    ", result["forward"])]
    if "control" in result:
        rows.append(_line("control", result["control"]))
        f, c = result["forward"]["auc"], result["control"]["auc"]
        if f is not None and c is not None:
            rows.append(f"map minus control: {f - c:+.4f} (near 0 means the model is not reading ink in this direction)")
    boot = result.get("bootstrap")
    if boot:
        lo, hi = boot["ci95"]
        if lo is not None:
            rows.append(f"map AUC 95 % interval {lo:.4f} to {hi:.4f} ({boot['draws']} draws of {boot['blocks']} "
                        f"blocks of {boot['block_px']} px)")
        cmp_ = boot.get("compare")
        if cmp_:
            other = result.get("files", {}).get("compare") or "the compared map"
            dlo, dhi = cmp_["ci95"]
            share = cmp_["share_draws_map_not_ahead"]
            if dlo is None or share is None:
                rows.append(f"compare: map minus {other} {cmp_['difference']:+.4f} (no interval: no draw held "
                            f"both classes in both maps; {cmp_['pixels']} shared px)")
            else:
                rows.append(f"compare: map minus {other} {cmp_['difference']:+.4f} (95 % interval {dlo:+.4f} to "
                            f"{dhi:+.4f}; map not ahead in {100 * share:.1f} % of {boot['draws']} draws, "
                            f"{cmp_['pixels']} shared px)")
    return "\n".join(rows)
