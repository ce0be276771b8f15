"""The ``segscore fibers`` scorecard: a prediction (or a floor) beside every floor of its target.

JSON layout (ScrollGT's ``score-fibers`` card): ``target``, ``prediction``, ``split``,
``tolerance``, ``size_class``, ``class_oracle_erl``, ``metrics``, ``floors`` (the four
``floor_*`` rows, as ScrollGT's card keeps them), ``oracle`` (the oracle's full row beside them,
which ScrollGT's card leaves out: its ERL is ``class_oracle_erl``; null with a note when the
target publishes none), ``floors_source`` (``published`` or ``recomputed``, for the floors and
the oracle alike), ``below_baseline`` (the prediction's ERL is below the connected-components
floor's) and ``notes`` (always present): each null metric's dotted path (``metrics.erl``,
``floors.floor_single_instance.precision``, ``oracle.erl``) to the reason.

ScrollGT's headline finding is carried on the card itself: ``cannot_rank`` (always present) is
empty, or, when the prediction scores the same coverage and the same precision as every floor
(two or more), holds ``coverage`` and ``precision``, each with why that number cannot rank it;
the text card prints one line saying so (:func:`coverage_precision_tie`). (Not in ``notes``:
those explain null values, and these two are defined.)
"""

from __future__ import annotations

import math

import os

import numpy as np

from segscore.errors import InputFileError, ScoreError, moved
from segscore.fibers import floors as _floors
from segscore.fibers.floors import FLOORS
from segscore.fibers.score import score_labels
from segscore.fibers.target import MAX_TOLERANCE, FiberTarget, load_target
from segscore.io.results import as_result
from segscore.io.targets import refuse_target_as_prediction

#: ScrollGT's fiber scoring version this module reproduces: runs read in stored edge-row order
#: (meta.json without ``floors_scoring_version`` means 1)
SCORING_VERSION = 1

COLUMNS = ("erl", "erl_merge_penalized", "coverage", "precision", "splits", "merges", "merged_instances",
           "n_pred_instances")


def open_labels(path, shape) -> np.ndarray:
    """An instance-label volume from ``.npy`` (memory-mapped), ``.tif`` or zarr, checked for shape."""
    from segscore.io.readers import format_of, open_labels
    from segscore.io.sources import RawFileSource

    kind = format_of(path)
    if kind not in ("npy", "tiff", "zarr"):
        raise ScoreError(f"{path}: not a .npy, .tif or zarr array; save the instance labels as .npy")
    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file; give your tracer's instance labels (a .npy of integer "
                             f"ids shaped {tuple(shape)}), or score a floor with --floor connected_components")
    source = open_labels(path, what="labels", ndims=(1, 2, 3, 4))
    try:
        src_shape = tuple(source.shape)
        if src_shape != tuple(shape):
            raise ScoreError(f"{path}: shape {src_shape} differs from the cube's shape {tuple(shape)}; "
                             f"label exactly the target's cube")
        if source.dtype == np.bool_ or source.dtype.kind not in "iu":
            raise ScoreError(f"{path}: holds {source.dtype} values; give integer instance ids "
                             f"(0 = background), not probabilities or a mask")
        if isinstance(source, RawFileSource) and source.file_dtype.isnative:
            need = source.offset + int(np.prod(src_shape, dtype=np.int64)) * source.file_dtype.itemsize
            if os.path.getsize(source.path) < need:
                raise ScoreError(f"{path}: file ends before its declared shape {src_shape}; re-save it")
            return np.memmap(source.path, dtype=source.file_dtype, mode="r", offset=source.offset, shape=src_shape)
        return np.asarray(source.read_all())
    finally:
        source.close()


def _published(meta) -> dict:
    floors = meta.get("floors") or {}
    return {k: v for k, v in floors.items() if k == "oracle" or k.startswith("floor_")}


@as_result
def _score_fibers(target, labels=None, *, floor: str | None = None, recompute_floors: bool = False,
                 prediction_name: str | None = None) -> dict:
    """Score ``labels`` (path or array) or the floor ``floor`` against a fiber target.

    Compatibility entry point (ScrollGT's score-fibers shape, target first): prefer :func:`segscore.api.fibers`.

    ``target`` is a target directory or a :class:`FiberTarget`. Floors are read from
    meta.json unless ``recompute_floors`` is true or none are published. Exactly one of
    ``labels`` and ``floor`` is required.
    """
    recompute = bool(recompute_floors)
    if (labels is None) == (floor is None):
        raise ScoreError("give exactly one of LABELS and --floor "
                         f"({', '.join(n for n in FLOORS)})")
    if floor is not None:
        floor = floor[len("floor_"):] if floor.startswith("floor_") else floor
        if floor not in FLOORS:
            raise ScoreError(f"unknown floor {floor!r}; choose one of {', '.join(FLOORS)}")
    refuse_target_as_prediction(labels, "segscore fibers LABELS TARGET", what="the labels (the prediction)")
    t = target if isinstance(target, FiberTarget) else load_target(target)

    published = _published(t.meta)
    version = t.meta.get("floors_scoring_version") or SCORING_VERSION
    if published and not recompute and version != SCORING_VERSION:
        raise ScoreError(f"{t.path}: meta.json's floors were computed with fiber scoring version {version}, this "
                         f"scorer implements version {SCORING_VERSION} (runs in stored edge order); pass "
                         f"--recompute-floors to compare against floors computed here")
    source = "recomputed" if (recompute or not published) else "published"

    # the prediction first: a bad labels file is refused before any floor is computed
    if floor is not None:
        metrics = None if source == "recomputed" else _floors.score_floor(t, floor)
        prediction = f"floor:{floor}"
    else:
        if isinstance(labels, (str, os.PathLike)):
            name = prediction_name or os.path.basename(os.fspath(labels).rstrip("/"))
            arr = open_labels(os.fspath(labels), t.shape)
            metrics = score_labels(t, arr, name=os.fspath(labels))
            del arr
        else:
            name = prediction_name or "<array>"
            metrics = score_labels(t, labels, name=name)
        prediction = name

    if source == "recomputed":
        rows = _floors.recompute_floors(t)
    else:  # meta.json's rows, with a note for any value it publishes as null
        rows = {k: {**row, "notes": {m: "published as null in the target's meta.json" for m, v in row.items()
                                      if v is None}} if isinstance(row, dict) else row
                for k, row in published.items()}
    if metrics is None:
        metrics = dict(rows[FLOORS[floor]])
    # ScrollGT's card keeps the four floors in ``floors``; the oracle's row goes beside them
    oracle = rows.pop("oracle", None)
    floors = rows
    cc = floors.get("floor_connected_components") or {}
    below = bool(cc) and cc.get("erl") is not None and (metrics["erl"] is None or metrics["erl"] < cc["erl"])
    oracle_erl = ((t.meta.get("floors") or {}).get("oracle") or {}).get("erl")
    if oracle_erl is None:
        oracle_erl = (oracle or {}).get("erl")
    notes = {}
    if oracle_erl is None:
        notes["class_oracle_erl"] = "the target publishes no oracle ERL and the oracle covers nothing"
    if oracle is None:
        notes["oracle"] = "the target's meta.json publishes no oracle row (--recompute-floors computes it)"
    from segscore.io.results import lift_notes

    return lift_notes({
        "target": t.name,
        "prediction": prediction,
        "split": t.meta.get("split") or "primary",
        "tolerance": t.tolerance,
        "size_class": t.size_class,
        "class_oracle_erl": oracle_erl,
        "metrics": metrics,
        "floors": floors,
        "oracle": oracle,
        "floors_source": source,
        "below_baseline": bool(below),
        "cannot_rank": _tie_notes(metrics, floors),
        "notes": notes,
        "warnings": [],
    })


score_fibers = moved(_score_fibers, "segscore.fibers.card.score_fibers",
                     "segscore.api.fibers(truth=target, pred=labels, ...)")


def coverage_precision_tie(metrics: dict, floors: dict):
    """``(coverage, precision, number of floors)`` when ``metrics`` and every ``floor_*`` row of
    ``floors`` (at least two) share one defined coverage and one defined precision; else None.

    Why that matters (ScrollGT's headline finding): coverage counts ground-truth length within
    the tolerance of *any* labelled voxel, precision counts labelled voxels near the ground
    truth, and neither looks at which instance a voxel carries. The floors label the same mask
    voxels in completely different ways (one instance, one per voxel, components, 50 random
    ids), so they tie on both; a labelling that ties with them cannot be placed among them by
    these two numbers: only ERL, merge-penalized ERL and the merge count tell them apart.
    """
    rows = [r for k, r in (floors or {}).items() if k.startswith("floor_") and isinstance(r, dict)]
    if len(rows) < 2 or not isinstance(metrics, dict):
        return None
    pairs = {(r.get("coverage"), r.get("precision")) for r in rows + [metrics]}
    if len(pairs) != 1:
        return None
    cov, prec = pairs.pop()
    if cov is None or prec is None:
        return None
    return cov, prec, len(rows)


def _tie_notes(metrics, floors) -> dict:
    tie = coverage_precision_tie(metrics, floors)
    if tie is None:
        return {}
    cov, prec, n = tie
    rank = "it cannot rank this labelling; erl_merge_penalized, erl and merges do"
    return {
        "coverage": f"coverage {cov:.4f} is the same for this labelling and all {n} floors: it counts "
                            f"ground-truth length near any labelled voxel whatever instance labels it, so it "
                            f"measures which voxels are labelled, not whether an instance holds one fiber, and {rank}",
        "precision": f"precision {prec:.4f} is the same for this labelling and all {n} floors: it counts "
                             f"labelled voxels near the ground truth whatever instance labels them, so it measures "
                             f"which voxels are labelled, not whether an instance holds one fiber, and {rank}",
    }


def _fmt(v, key):
    if v is None:
        return "null"
    if key in ("coverage", "precision"):
        return f"{v:.4f}"
    if key.startswith("erl"):
        return f"{v:.2f}"
    return str(int(v))


def format_card(card: dict) -> str:
    """The text scorecard: the prediction's row above every floor's, ERL always with its twin."""
    lines = [
        f"fiber target {card['target']} (split {card['split']}, size class {card['size_class']}^3, "
        f"tolerance {card['tolerance']:g} voxels)",
        f"prediction: {card['prediction']}   floors: {card['floors_source']}   "
        f"class oracle ERL: {_fmt(card['class_oracle_erl'], 'erl')}",
        "",
    ]
    rows = [(card["prediction"], card["metrics"])] + list(card["floors"].items())
    if isinstance(card.get("oracle"), dict):
        rows.append(("oracle", card["oracle"]))
    width = max(len(r[0]) for r in rows)
    head = ["erl", "erl_pen", "coverage", "precision", "splits", "merges", "merged", "instances"]
    widths = [max(len(h), 9) for h in head]
    lines.append(" ".join([" " * width] + [h.rjust(w) for h, w in zip(head, widths)]))
    for label, row in rows:
        cells = [_fmt(row.get(k), k).rjust(w) for k, w in zip(COLUMNS, widths)]
        lines.append(" ".join([label.ljust(width)] + cells))
        if label == card["prediction"] and len(rows) > 1:
            lines.append("")
    lines.append("")
    for path, why in (card.get("notes") or {}).items():
        key = path.split(".", 1)[-1]
        value = card["metrics"].get(key) if path.startswith("metrics.") else card.get(path)
        if (path.startswith("metrics.") or "." not in path) and value is None:
            lines.append(f"note: {key} is null: {why}")
    tie = coverage_precision_tie(card["metrics"], card["floors"])
    if tie is not None:
        cov, prec, n = tie
        lines.append(f"note: coverage {cov:.4f} and precision {prec:.4f} are the same for this labelling and all "
                     f"{n} floors (the mask labelled {n} different ways): both see only which voxels are labelled, "
                     f"not which instance, so they cannot rank it; ERL, merge-penalized ERL and merges can")
    cc = card["floors"].get("floor_connected_components")
    if cc:
        verdict = "BELOW" if card["below_baseline"] else "not below"
        lines.append(f"ERL {_fmt(card['metrics']['erl'], 'erl')} is {verdict} the connected-components floor "
                     f"({_fmt(cc.get('erl'), 'erl')}); merge-penalized ERL {_fmt(card['metrics']['erl_merge_penalized'], 'erl')}")
    return "\n".join(lines)


@as_result
def aggregate_fiber_scores(cards, *, names=None) -> dict:
    """Plain means of ERL and merge-penalized ERL over cards of one size class.

    Refuses an empty list and a mix of size classes (ERL is a length: a 512^3 cube admits
    longer runs than a 256^3 one) or of stated tolerances; a card that states no tolerance
    (ScrollGT's own cards) is accepted, and ``tolerance`` is then the one the others state, or
    None. A null ERL (nothing covered) counts as 0 in both means and is counted in
    ``n_null_erl`` (always present). ``notes`` is always present (no mean is ever null: the
    list is never empty). ``names`` (the cards' paths, say) name a refused card; else "card i".
    """
    cards = list(cards)
    names = [str(n) for n in names] if names is not None else [f"card {i}" for i in range(len(cards))]
    if not cards:
        raise ScoreError("no scorecards given; pass one or more `segscore fibers --json-out` cards")
    classes, tolerances, erls, pens = set(), set(), [], []
    for i, c in enumerate(cards):
        metrics = c.get("metrics") if isinstance(c, dict) else None
        if not isinstance(metrics, dict):
            raise ScoreError(f"{names[i]}: not a fiber scorecard (no metrics); pass `segscore fibers --json-out` cards")
        for key in ("erl", "erl_merge_penalized"):
            v = metrics.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ScoreError(f"{names[i]}: metrics.{key} is {v!r}, not a number or null; pass "
                                 f"`segscore fibers --json-out` cards")
        size = c.get("size_class")
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not 1 <= size <= 1 << 20 \
                or size != int(size):
            raise ScoreError(f"{names[i]}: size_class is {size!r}; a fiber scorecard states its cube size class "
                             f"(256, 512, ...)")
        classes.add(int(size))
        tol = c.get("tolerance") if c.get("tolerance") is not None else metrics.get("tolerance")
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= MAX_TOLERANCE:
                raise ScoreError(f"{names[i]}: tolerance is {tol!r}, not a distance in voxels (0 to "
                                 f"{MAX_TOLERANCE:g})")
            tolerances.add(float(tol))
        erls.append(metrics.get("erl"))
        pens.append(metrics.get("erl_merge_penalized"))
    classes, tolerances = sorted(classes), sorted(tolerances)
    if len(classes) > 1:
        raise ScoreError(f"refusing to aggregate across size classes {classes}: ERL is a length statistic and "
                         f"does not compare between cube sizes; aggregate each size class separately")
    if len(tolerances) > 1:
        raise ScoreError(f"refusing to aggregate across tolerances {tolerances}: ERL depends on the tolerance; "
                         f"aggregate cards scored at one tolerance")
    n = len(cards)
    out = {
        "size_class": classes[0],
        "n": n,
        "tolerance": tolerances[0] if tolerances else None,
        "erl_mean": float(sum(0.0 if v is None else float(v) for v in erls) / n),
        "erl_merge_penalized_mean": float(sum(0.0 if v is None else float(v) for v in pens) / n),
        "n_null_erl": sum(v is None for v in erls),
        "notes": {},
    }
    return out


def load_cards(paths) -> list[dict]:
    from segscore.io.results import read_json

    cards = []
    for p in paths:
        card = read_json(p, fix="give scorecards written by `segscore fibers --json-out`")
        cards.append(check_card(card, p))
    return cards


#: the fields every fiber scorecard file has (ScrollGT's and segscore's ``score-fibers`` cards)
CARD_KEYS = ("target", "prediction", "size_class", "metrics")
CARD_METRIC_KEYS = ("erl", "erl_merge_penalized")


def check_card(card, where) -> dict:
    """``card`` (a JSON document read from ``where``) if it is a fiber scorecard by its full
    schema: the fields of :data:`CARD_KEYS`, a metrics row with :data:`CARD_METRIC_KEYS` (null or
    a number; its other metrics, coverage, precision, splits..., numbers of their kind where
    present), floors (where present) whose rows are metrics rows too; else a refusal naming the
    file and the first field that does not fit (any JSON with ``metrics`` and ``size_class`` was
    taken for a card with a null ERL, and halved the mean)."""
    from segscore.fibers.target import row_fields
    from segscore.io.schema import Field, validate

    fix = "give cards written by `segscore fibers --json-out`"
    if not isinstance(card, dict):
        raise ScoreError(f"{where}: not a fiber scorecard (a JSON {type(card).__name__}, not an object); {fix}")
    missing = [k for k in CARD_KEYS if k not in card]
    if missing:
        raise ScoreError(f"{where}: not a fiber scorecard (no {', '.join(missing)}); {fix}")
    fields = [Field("target", (str,), required=True), Field("prediction", (str,), required=True),
              Field("size_class", (int,), lo=1, required=True), Field("tolerance", (float,), lo=0, hi=MAX_TOLERANCE),
              Field("class_oracle_erl", (float,), lo=0), Field("metrics", (dict,), required=True),
              Field("floors", (dict,)), Field("below_baseline", (bool,)),
              Field("floors_source", (str,))]
    validate(card, fields, where)
    absent = [k for k in CARD_METRIC_KEYS if k not in card["metrics"]]
    if absent:
        raise ScoreError(f"{where}: not a fiber scorecard (its metrics have no {', '.join(absent)}); {fix}")
    rows = list(row_fields("metrics"))
    for name, row in (card.get("floors") or {}).items():
        rows.append(Field(f"floors.{name}", (dict,)))
        if isinstance(row, dict):
            rows.extend(row_fields(f"floors.{name}"))
    validate(card, rows, where)
    return card
