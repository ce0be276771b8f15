"""Named, versioned held-out sets; pooled scores; the published scorecard table, CSV and chart.

A manifest is JSON ``{"name", "version", "fields": [{"image", "truth", "sha256"}]}`` with paths
relative to the manifest's folder. Scores over a set are POOLED FROM COUNTS: true/false
positives, false negatives, splits, merges and object counts are summed over fields and
precision, recall, F1 and every AP of the sweep are recomputed from the sums; ``iou_mean``,
``dice_per_object`` and the area errors are means over all matched pairs of the set (the
per-field means weighted by ``n_matched``); ``dice_pixel`` and the boundary scores come from
summed pixel counts. A field with three objects therefore weighs what its three objects weigh.

Nulls (the result contract of :mod:`segscore.io.results`): a pooled metric that is None is
explained in the result's ``notes`` (``finetuned.precision``); the rows (``per_field``
scorecards, the metric ``rows`` of the table) carry their reason in their own ``reason``, and
``n_left_out`` counts, per metric, the fields whose own value was null (they add nothing to
the pooled value).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from segscore.errors import InputFileError, ScoreError, moved
from segscore.io.paths import check_readable, special_kind
from segscore.io.results import as_result
from segscore.io.schema import Field, validate
from segscore.objects.table import as_labels, read_labels  # noqa: F401  (segscore.objects.holdout.read_labels too)

#: the metrics the scorecard chart draws, in order (absent ones are skipped, never drawn as 0)
CHART_METRICS = ("f1", "precision", "recall", "ap_mean", "dice_per_object", "boundary_f1_2px")
#: the metrics a headline leads with
HEADLINE_METRICS = ("f1", "ap_mean", "dice_per_object")
#: what to say when an entry carries no scorecard
NO_SCORECARD = ("This model does not carry a scorecard, so nothing here tells you how accurate it is "
                "on data it was not trained on.")
#: table columns (``reason``: why the row's finetuned or vanilla value is null, or None)
ROW_COLUMNS = ("metric", "finetuned", "vanilla", "delta", "holdout", "holdout_version", "reason")


@dataclass(frozen=True)
class HoldoutField:
    """One labelled field: ``image`` (what a model reads) and ``truth`` (its label mask), both
    relative to the manifest, and ``sha256``, the digest of the truth file ("" when unpublished)."""

    image: str
    truth: str
    sha256: str = ""


@dataclass(frozen=True)
class HoldoutSet:
    """A named, versioned set of labelled fields; ``root`` is the folder paths resolve against."""

    name: str
    version: str
    fields: tuple
    root: Path

    def path_to(self, relative: str) -> Path:
        """A manifest-relative path resolved against the set's root (manifests stay movable)."""
        return Path(self.root) / relative


@dataclass(frozen=True)
class HoldoutScore:
    """One model's pooled result on one named, versioned held-out set, and its per-field scorecards."""

    name: str
    version: str
    metrics: dict
    per_field: tuple = field(default=())
    #: the per-object means under ``--missing worst`` (:func:`worst_means`): ``{metric: (sum, count,
    #: n_imputed)}`` pooled over the fields, each unmatched object at the metric's worst value (a
    #: distance: its own field's diagonal); None for a metric that cannot be imputed
    worst_sums: dict = field(default_factory=dict)

    @property
    def n_fields(self) -> int:
        """How many labelled fields the score was computed over."""
        return len(self.per_field)

    @property
    def n_left_out(self) -> dict:
        """``{metric: number of fields whose own value is null}`` (only metrics with one or more):
        those fields add nothing to the pooled value (no objects, no matched pair)."""
        counts: dict = {}
        for m in self.per_field:
            for k, v in m.items():
                if v is None and k != "notes":
                    counts[k] = counts.get(k, 0) + 1
        return counts


#: what a held-out manifest's fields must be (the refusals of a missing name, version or field
#: list keep spacr's own wording below)
MANIFEST_FIELDS = (Field("name", (str, int)), Field("version", (str, int, float)), Field("fields", (list,)))
ENTRY_FIELDS = (Field("image", (str,)), Field("truth", (str,)), Field("sha256", (str,)))
_HEX64 = re.compile(r"[0-9a-f]{64}")


def load_holdout(manifest_path) -> HoldoutSet:
    """Read a held-out manifest; refuse one without a name, a version or any field."""
    path = Path(manifest_path)
    check_readable(path, "manifest")
    if not path.is_file():
        raise InputFileError(f"{path}: no such manifest; give the held-out set's JSON manifest")
    from segscore.io import budget

    fix = "give the held-out set's JSON manifest"
    try:
        text = budget.read_text(path, fix=fix)
    except OSError as exc:
        raise ScoreError(f"{path}: cannot be read ({(exc.strerror or type(exc).__name__).lower()}); {fix}") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ScoreError(f"{path}: not a JSON manifest (it does not parse); fix the file") from None
    if not isinstance(data, dict):
        raise ScoreError(f"{path}: a manifest is a JSON object with name, version and fields")
    validate(data, MANIFEST_FIELDS, path)
    name = str(data.get("name") or "").strip()
    version = str(data.get("version") or "").strip()
    if not name:
        raise ScoreError(f"{path}: declares no name; add \"name\" to the manifest")
    if not version:
        raise ScoreError(f"{path}: declares no version; add \"version\" (a set that cannot say which "
                         "version it is cannot be compared against anything)")
    raw = data.get("fields")
    if not raw or not isinstance(raw, list):
        raise ScoreError(f"{path}: declares no fields; add \"fields\": [{{\"image\", \"truth\", \"sha256\"}}]")
    fields = []
    for k, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ScoreError(f"{path}: field {k} is not an object with image, truth and sha256")
        validate(entry, ENTRY_FIELDS, f"{path}: fields.{k}")
        digest = str(entry.get("sha256") or "").strip().lower()
        if digest and not _HEX64.fullmatch(digest):
            raise ScoreError(f"{path}: fields.{k}.sha256 is {digest[:20]!r}; it should be the truth mask's sha256 "
                             "(64 hex digits) or \"\" for none")
        image = str(entry.get("image") or "").strip()
        truth = str(entry.get("truth") or "").strip()
        if not image or not truth:
            raise ScoreError(f"{path}: field {k} needs both an image and a truth path; got {entry!r}")
        for key, rel in (("image", image), ("truth", truth)):
            _check_inside(path, k, key, rel)
        fields.append(HoldoutField(image, truth, digest))
    return HoldoutSet(name, version, tuple(fields), path.resolve().parent)


def _check_inside(manifest: Path, k: int, key: str, rel: str) -> None:
    """Refuse a field path that is absolute or leads out of the manifest's folder (through
    ``..`` or a link), so the set stays movable and its digests cannot be checked elsewhere."""
    where = f"{manifest}: field {k} {key} path {rel!r}"
    if os.path.isabs(rel) or rel.startswith("~") or "\0" in rel:
        raise ScoreError(f"{where} is absolute; manifest paths are relative to the manifest's folder")
    root = os.path.realpath(manifest.resolve().parent)
    lexical = os.path.normpath(os.path.join(root, rel))
    try:
        real = os.path.realpath(lexical, strict=False)
    except (OSError, RuntimeError):  # a link loop
        raise ScoreError(f"{where} cannot be resolved (a link loop); fix the link") from None
    for p in (lexical, real):
        if os.path.commonpath([root, p]) != root:
            raise ScoreError(f"{where} leads out of the manifest's folder; keep the set's files inside it")


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_holdout(holdout: HoldoutSet) -> list:
    """One line per problem (a missing truth mask, a missing digest, a digest that does not match);
    empty when the set is intact. A missing digest is a finding, not a pass."""
    problems = []
    for f in holdout.fields:
        target = holdout.path_to(f.truth)
        if special_kind(target):
            problems.append(f"truth mask {f.truth} is {special_kind(target)}, not a file")
        elif not target.is_file():
            problems.append(f"missing truth mask: {f.truth}")
        elif not f.sha256:
            problems.append(f"no digest published for {f.truth}")
        else:
            digest = file_sha256(target)
            if digest != f.sha256:
                problems.append(f"{f.truth} does not match its digest (published {f.sha256[:12]}..., "
                                f"found {digest[:12]}...)")
    return problems


def _score_holdout(pairs, *, name: str, version: str, **kwargs) -> HoldoutScore:
    """Score ``(truth, prediction)`` label arrays per field, pooled from counts (module docstring).

    Compatibility entry point (spacr's shape, label arrays): for files prefer :func:`segscore.api.holdout`.

    ``pairs`` may be any iterable (a generator keeps one field in memory at a time) of
    ``(truth, prediction)`` or ``(truth, prediction, spacing)``: a field's own voxel spacing
    (one number per axis) overrides ``spacing`` for its surface distances, which are then pooled
    in physical units. ``kwargs`` are :func:`segscore.objects.score_segmentation`'s options.
    """
    from segscore.metrics.missing import PER_OBJECT, diagonal, worst_sum
    from segscore.objects.metrics import _field_parts, add_sums, metrics_from_sums

    pooled, per_field, worst = None, [], {}
    for pair in pairs:
        truth, pred = pair[0], pair[1]
        field_kwargs = kwargs if len(pair) < 3 else {**kwargs, "spacing": pair[2]}
        s, parts = _field_parts(truth, pred, **field_kwargs)
        m = metrics_from_sums(s)
        per_field.append(m)
        pooled = s if pooled is None else add_sums(pooled, s)
        diag = diagonal(parts["shape"], parts["spacing"]) if parts["shape"] is not None else None
        for key in PER_OBJECT:  # --missing worst: each unmatched object at the worst value, this field's diagonal
            if key in m:
                ws = worst_sum(key, m, diag)
                prev = worst.get(key, (0.0, 0, 0))
                worst[key] = None if ws is None or prev is None else \
                    (prev[0] + ws[0], prev[1] + ws[1], prev[2] + m["false_negatives"] + m["false_positives"])
    if pooled is None:
        raise ScoreError(f"held-out set {name}@{version} has no fields to score")
    metrics = {"n_fields": len(per_field), **metrics_from_sums(pooled)}
    return HoldoutScore(str(name), str(version), metrics, tuple(per_field), worst)


score_holdout = moved(_score_holdout, "segscore.objects.holdout.score_holdout",
                      "segscore.api.holdout(manifest, predictions, ...)")


def worst_means(score: HoldoutScore, missing: str = "worst") -> dict:
    """The per-object means of ``score`` under both ``--missing`` policies (:mod:`segscore.metrics.missing`):
    ``{metric: {"mean", "null", "worst", "n_left_out", "notes"}}``: ``null`` the pooled mean over
    matched pairs (the scorecard's value), ``worst`` the mean over every object of the set, each
    unmatched one (a false negative or positive) at the metric's worst value; ``n_left_out`` the
    unmatched objects ``null`` leaves out; ``mean`` the one ``missing`` picks; ``notes`` why a
    value is null. The pooled counts (precision, recall, F1, AP) count every miss already."""
    from segscore.metrics.missing import check_policy, worst_of

    policy = check_policy(missing)
    out = {}
    for key, acc in score.worst_sums.items():
        null = score.metrics.get(key)
        left = int(score.metrics.get("false_negatives", 0)) + int(score.metrics.get("false_positives", 0))
        notes = {}
        if acc is None:
            w = worst_of(key)
            worst = None
            notes["worst"] = (f"{key}: {w}" if isinstance(w, str) and w.startswith("none")
                              else f"{key}: its worst value is the image diagonal, unknown for a field")
        else:
            worst = acc[0] / acc[1] if acc[1] else None
            if worst is None:
                notes["worst"] = "neither image of any field has an object (both empty is not a miss)"
        if null is None:
            notes["null"] = str((score.metrics.get("notes") or {}).get(key, "no matched pairs at the match IoU"))
        entry = {"mean": worst if policy == "worst" else null, "null": null, "worst": worst, "n_left_out": left}
        if entry["mean"] is None:
            notes["mean"] = notes.get(policy, "null")
        entry["notes"] = notes
        out[key] = entry
    return out


def score_model_on_holdout(holdout: HoldoutSet, predict, *, read_mask=None, **kwargs) -> HoldoutScore:
    """Run ``predict`` (image path -> label array; injected, so no model is imported here) over
    the set's fields and score it against the truth masks (read with ``read_mask``, default
    segscore's readers). The set's name and version travel with the score.

    Compatibility entry point (spacr's shape): for a folder of predictions prefer :func:`segscore.api.holdout`."""
    read_mask = read_mask or read_labels
    pairs = ((read_mask(holdout.path_to(f.truth)), predict(holdout.path_to(f.image))) for f in holdout.fields)
    return _score_holdout(pairs, name=holdout.name, version=holdout.version, **kwargs)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def scorecard_rows(finetuned: HoldoutScore, vanilla: HoldoutScore) -> list:
    """The published table, one row per metric: ``metric, finetuned, vanilla, delta, holdout,
    holdout_version``. Refuses two scores from different sets or versions. ``delta`` is None for
    settings and counts (``match_iou``, ``n_fields``, ``n_truth``, ``n_pred``, ``count_error``)
    and where either value is None."""
    from segscore.objects.metrics import NOT_A_SCORE

    if (finetuned.name, finetuned.version) != (vanilla.name, vanilla.version):
        raise ScoreError(f"scored on different held-out sets: {finetuned.name}@{finetuned.version} against "
                         f"{vanilla.name}@{vanilla.version}; score both models on the same set and version")
    rows = []
    why_a, why_b = finetuned.metrics.get("notes") or {}, vanilla.metrics.get("notes") or {}
    for key, a in finetuned.metrics.items():
        if key == "notes" or key not in vanilla.metrics or isinstance(a, bool):  # a switch, not a metric
            continue
        b = vanilla.metrics[key]
        delta = a - b if key not in NOT_A_SCORE and _is_number(a) and _is_number(b) else None
        reasons = [f"{side} is null: {why.get(key, 'undefined')}" for side, v, why in
                   (("finetuned", a, why_a), ("vanilla", b, why_b)) if v is None]
        if delta is None and not reasons:
            reasons.append("delta is null: " + ("a setting or a count, not a score" if key in NOT_A_SCORE
                                                else "not a number"))
        rows.append({"metric": key, "finetuned": a, "vanilla": b, "delta": delta,
                     "holdout": finetuned.name, "holdout_version": finetuned.version,
                     "reason": "; ".join(reasons) if reasons else None})
    return rows


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        if not math.isfinite(v):  # a NaN is a bug, never an empty cell (segscore.io.results)
            from segscore.io.results import NonFiniteError

            raise NonFiniteError(f"scorecard cell is {v!r}: a metric must be a finite number or None")
        return repr(v)
    return str(v)


def scorecard_csv(rows) -> str:
    """The rows as CSV text (the first row's keys are the columns); "" for no rows."""
    rows = list(rows)
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = list(rows[0])
    w.writerow(cols)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in cols])
    return buf.getvalue()


def _number(value):
    """A CSV cell: None when empty, int when whole, float when a number, else the string."""
    text = str(value if value is not None else "").strip()
    if not text:
        return None
    try:
        parsed = float(text)
    except ValueError:
        return text
    if not math.isfinite(parsed):
        return None
    if parsed.is_integer() and "." not in text and "e" not in text.lower():
        return int(text)
    return int(parsed) if parsed.is_integer() else parsed


def read_scorecard_csv(text: str) -> dict:
    """``{metric: {"finetuned", "vanilla", "delta"}}`` plus ``holdout`` and ``holdout_version``
    from a CSV written by :func:`scorecard_csv`; whole numbers come back as int; {} for no rows."""
    rows = list(csv.DictReader(io.StringIO(str(text))))
    if not rows:
        return {}
    out = {}
    for r in rows:
        name = str(r.get("metric") or "").strip()
        if name:
            out[name] = {k: _number(r.get(k)) for k in ("finetuned", "vanilla", "delta")}
    for carried in ("holdout", "holdout_version"):
        value = str(rows[0].get(carried) or "").strip()
        if value:
            out[carried] = value
    return out


def scorecard_is_present(metrics) -> bool:
    """Whether ``metrics`` carries a scorecard: some entry is a mapping with a finetuned value."""
    if not metrics:
        return False
    return any(isinstance(v, dict) and v.get("finetuned") is not None for v in metrics.values())


def _values(metrics, baseline, key):
    v = metrics.get(key)
    if isinstance(v, dict):
        return v.get("finetuned"), v.get("vanilla"), v.get("delta")
    b = baseline.get(key) if baseline else None
    b = b.get("finetuned") if isinstance(b, dict) else b
    d = v - b if _is_number(v) and _is_number(b) else None
    return v, b, d


def headline(metrics, *, baseline=None, limit: int = 3) -> list:
    """Up to ``limit`` lines ``metric value (vanilla v, delta +d)`` for f1, ap_mean, dice_per_object,
    then a pointer to the full table; [] when ``metrics`` holds no scorecard.

    ``metrics`` is a parsed scorecard (:func:`read_scorecard_csv`) or a flat metrics dict, with
    ``baseline`` the vanilla model's flat dict.
    """
    lines = []
    for key in HEADLINE_METRICS:
        if len(lines) >= int(limit):
            break
        v, b, d = _values(metrics or {}, baseline, key)
        if not _is_number(v):
            continue
        text = f"{key} {v:.3f}"
        if _is_number(b):
            text += f" (vanilla {b:.3f}, delta {d:+.3f})" if _is_number(d) else f" (vanilla {b:.3f})"
        lines.append(text)
    if not lines:
        return []
    n = sum(1 for k, v in (metrics or {}).items() if k not in ("holdout", "holdout_version", "notes"))
    where = ""
    if isinstance(metrics.get("holdout"), str):
        where = f" on {metrics['holdout']}" + (f"@{metrics['holdout_version']}" if metrics.get("holdout_version")
                                               else "")
    lines.append(f"full scorecard: {n} metrics{where} in the scorecard CSV")
    return lines


def scorecard_figure(metrics, path, *, title: str = "", dpi=None):
    """Paired bars (vanilla, finetuned) for the :data:`CHART_METRICS` the scorecard carries,
    written to ``path`` (PNG). Refuses an empty chart: it would read as a model that scored zero."""
    names, fine, stock = [], [], []
    for key in CHART_METRICS:
        row = metrics.get(key)
        if not isinstance(row, dict) or not _is_number(row.get("finetuned")) or not _is_number(row.get("vanilla")):
            continue
        names.append(key.replace("_", " "))
        fine.append(float(row["finetuned"]))
        stock.append(float(row["vanilla"]))
    if not names:
        raise ScoreError("the scorecard carries none of the chart's metrics (" + ", ".join(CHART_METRICS)
                         + "); an empty chart would read as a model that scored zero")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.arange(len(names), dtype=float)
    w = 0.38
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 2.0, 4.2))
    try:
        ax.bar(x - w / 2, stock, w, label="vanilla", color="#b0b7c3")
        ax.bar(x + w / 2, fine, w, label="finetuned", color="#2f6df6")
        for xs, vals in ((x - w / 2, stock), (x + w / 2, fine)):
            for xi, v in zip(xs, vals):
                ax.text(xi, v + 0.015, f"{v:.3f}", ha="center", fontsize=8)
        ax.set_xticks(x)
        ax.set_xticklabels(names)
        ax.set_ylim(0.0, 1.08)
        ax.set_ylabel("score")
        ax.legend(frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.12))
        caption = [str(title)] if title else []
        if metrics.get("holdout"):
            caption.append(f"held-out {metrics['holdout']}"
                           + (f" @ {metrics['holdout_version']}" if metrics.get("holdout_version") else ""))
        if caption:
            ax.set_title("  -  ".join(caption), fontsize=10)
        fig.tight_layout()
        fig.savefig(os.fspath(path), dpi=dpi)
    finally:
        plt.close(fig)
    return Path(path)


# ---------------------------------------------------------------- files (what `segscore holdout` runs)

PREDICTION_SUFFIXES = (".tif", ".tiff", ".npy", ".png")


def prediction_path(folder, truth_relative: str) -> Path:
    """The prediction for a field whose truth is ``a/b.tif``: ``folder/b.tif``, else ``folder/b``
    with .tif, .tiff, .npy or .png."""
    folder = Path(folder)
    base = Path(truth_relative).name
    candidates = [folder / base] + [folder / (Path(base).stem + s) for s in PREDICTION_SUFFIXES]
    for c in candidates:
        if c.exists():
            return c
    raise InputFileError(f"{folder / base}: no prediction for truth {truth_relative} (looked for "
                         f"{Path(base).stem} with {', '.join(PREDICTION_SUFFIXES)}); name predictions after their truth")


def _score_folder(holdout: HoldoutSet, folder, **kwargs) -> HoldoutScore:
    folder = Path(folder)
    if not folder.is_dir():
        raise InputFileError(f"{folder}: no such folder of predictions")
    for f in holdout.fields:  # the set's own files first, then the predictions: refuse before the work
        if not holdout.path_to(f.truth).exists():
            raise InputFileError(f"{holdout.path_to(f.truth)}: the manifest's truth mask is missing; restore the "
                                 "held-out set's files beside its manifest")
    paths = [prediction_path(folder, f.truth) for f in holdout.fields]
    # with --surface and no --spacing, each field's distances take the spacing its files state
    # (truth and prediction must agree), as ``segscore objects`` does; else 1 per axis
    per_field_spacing = kwargs.get("surface") and kwargs.get("spacing") is None
    if per_field_spacing:
        from segscore.io.spacing import resolve_spacing

    units = {}  # unit -> the first file stating it: pooled distances need one unit

    def pairs():
        for f, p in zip(holdout.fields, paths):
            # checked here, naming each file (the scorer sees arrays: it could name only their roles)
            truth = as_labels(read_labels(holdout.path_to(f.truth)), str(holdout.path_to(f.truth)))
            pred = as_labels(read_labels(p), str(p))
            if truth.shape != pred.shape:
                raise ScoreError(f"{p}: the prediction is {' x '.join(map(str, pred.shape))} but its truth "
                                 f"{holdout.path_to(f.truth)} is {' x '.join(map(str, truth.shape))}; score a prediction on its "
                                 "truth's grid")
            if per_field_spacing:
                record = resolve_spacing(None, [holdout.path_to(f.truth), p], truth.ndim)
                if record.unit is not None:
                    units.setdefault(str(record.unit), holdout.path_to(f.truth))
                    if len(units) > 1:
                        (u0, f0), (u1, f1) = list(units.items())[:2]
                        raise ScoreError(f"{f1}: states its spacing in {u1}, {f0} in {u0}; surface distances "
                                         "pool in one unit: convert the headers, or give --spacing")
                yield truth, pred, record.values
            else:
                yield truth, pred

    return _score_holdout(pairs(), name=holdout.name, version=holdout.version, **kwargs)


@as_result
def _score_holdout_files(manifest, predictions, *, baseline=None, missing=None, **kwargs) -> dict:
    """Score a folder of predictions (and optionally a baseline folder) on a manifest's set.

    Returns ``{"holdout", "holdout_version", "n_fields", "digest_problems", "finetuned",
    "n_left_out", "per_field", "vanilla", "vanilla_n_left_out", "rows", "notes"}`` (the
    ``vanilla`` ones and ``rows`` only with a baseline). ``notes`` explains the pooled nulls
    (``finetuned.f1``); each ``per_field`` row carries ``reason`` ({metric: why it is null} for
    that field) and each table row ``reason`` (why its finetuned or vanilla value is null, or
    None); ``n_left_out`` counts, per metric, the fields whose own value is null. ``missing``
    (``"null"`` or ``"worst"``; default None: not added) adds ``missing`` and ``means``
    (``{"finetuned": worst_means(...), "vanilla": ...}``: the per-object means under both policies).
    """
    if missing is not None:
        from segscore.metrics.missing import check_policy

        missing = check_policy(missing)
    from segscore.io.results import lift_notes

    hs = load_holdout(manifest)
    problems = verify_holdout(hs)
    fine = _score_folder(hs, predictions, **kwargs)

    def row(f, m):
        return {"truth": f.truth, **{k: v for k, v in m.items() if k != "notes"}, "reason": dict(m.get("notes") or {})}

    out = {"holdout": hs.name, "holdout_version": hs.version, "n_fields": fine.n_fields,
           "digest_problems": problems, "finetuned": fine.metrics, "n_left_out": fine.n_left_out,
           "per_field": [row(f, m) for f, m in zip(hs.fields, fine.per_field)]}
    if baseline is not None:
        van = _score_folder(hs, baseline, **kwargs)
        out["vanilla"] = van.metrics
        out["vanilla_n_left_out"] = van.n_left_out
        out["rows"] = scorecard_rows(fine, van)
    if missing is not None:
        out["missing"] = missing
        out["means"] = {"finetuned": worst_means(fine, missing)}
        if baseline is not None:
            out["means"]["vanilla"] = worst_means(van, missing)
    return lift_notes(out)


score_holdout_files = moved(_score_holdout_files, "segscore.objects.holdout.score_holdout_files",
                            "segscore.api.holdout(manifest, predictions, ...)")
