"""``surfaces``: the Vesuvius surface-detection score (TopoScore, surface Dice, VOI, leaderboard)
of a prediction against labels, or of folders of them paired by file stem."""

from __future__ import annotations

import os
from pathlib import Path

from segscore.commands._options import value_text as _fmt

#: the per-case CSV columns of folder mode (then the per-dimension counts)
CASE_COLUMNS = ("case", "leaderboard", "toposcore", "topoF1_0", "topoF1_1", "topoF1_2", "surface_dice",
                "voi_score", "voi_total", "voi_split", "voi_merge")
SUMMARY_FIELDS = ("leaderboard", "toposcore", "surface_dice", "voi_score", "voi_total", "voi_split", "voi_merge",
                  "topoF1_0", "topoF1_1", "topoF1_2")


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import (cluster_options, missing_option, number, output_options,  # noqa: E402
                                        plot_option, positive_int)


def topo_weight(value):
    """One TopoScore weight (a finite number), or (Python) a mapping ``{dim: weight}``."""
    if isinstance(value, dict):
        return {int(k): number(float)(str(v)) for k, v in value.items()}
    return number(float)(str(value))


#: what ``--processes``/``--scheduler`` distribute, said in ``--help`` and docs/cluster.md
CLUSTER_NOTE = ("with a cluster and files, every term is distributed and the client reads no voxel: TopoScore's "
                "Betti matching is one task per --topo-tiles tile (a tile needs up to 120 bytes per voxel on one "
                "worker, and one needing more than the workers' memory limit is refused); surface Dice (halo "
                "ceil(tolerance/spacing)+1), the counts and VOI (components built block by block, a sparse "
                "contingency per window) are counted by the workers in windows of --tile-rows slices, the same "
                "numbers for any --tile-rows (docs/cluster.md). Arrays from Python, or a prepared truth: the tiles "
                "travel with their tasks and surface Dice and VOI are computed in the client")


def _cluster_options() -> tuple:
    """:func:`cluster_options`, ``--scheduler``'s help ending with :data:`CLUSTER_NOTE`."""
    import dataclasses

    processes, scheduler = cluster_options(only="folder mode (--gt-dir/--pred-dir)")
    return processes, dataclasses.replace(scheduler, help=f"{scheduler.help}; {CLUSTER_NOTE}")


#: ``segscore surfaces PRED TRUTH`` (the competition's order); ``segscore.api.surfaces(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", nargs="?", metavar="PRED", role="pred", arrays=True,
           help="the prediction volume (TIFF, npy, NIfTI, zarr; 3D, or 2D as one slice): non-zero (or above "
                "--fg-threshold) is surface"),
    Option("truth", nargs="?", metavar="TRUTH", role="truth", arrays=True,
           help="the label volume, same shape (the competition's order: PRED GT)"),
    Option("gt_dir", ("--gt-dir",), metavar="D", role="truth",
           help="folder mode: label volumes, paired with --pred-dir by file stem"),
    Option("pred_dir", ("--pred-dir",), metavar="D", role="pred", help="folder mode: prediction volumes"),
    Option("ignore_mask_dir", ("--ignore-mask-dir",), metavar="D",
           help="folder mode: ignore masks, by the same stems (optional)"),
    Option("out", ("--out",), metavar="DIR", help="folder mode: writes metrics_per_case.csv and summary.json here"),
    *missing_option("folder mode: a label volume without a prediction is a case (listed in summary.json's "
                    "missing_predictions); null (the default) leaves it out of the means and counts it, worst counts it "
                    "at each term's worst value (0; VOI none: not imputable)"),
    *plot_option("the leaderboard score, its terms and the Betti counts per dimension (folder mode: histograms of "
                 "the per-case scores)"),
    Option("ignore_label", ("--ignore-label",), type=number(float, whole_float=True), default=2, metavar="V",
           help="label value to ignore (background in both volumes; default 2)"),
    Option("no_ignore_label", ("--no-ignore-label",), kind="flag", help="ignore no label value"),
    Option("ignore_mask", ("--ignore-mask",), metavar="FILE", arrays=True,
           help="a mask of voxels to ignore, instead of --ignore-label"),
    Option("fg_threshold", ("--fg-threshold",), type=number(float), metavar="T",
           help="foreground is value > T (a probability map); default: any non-zero value"),
    Option("tolerance", ("--tolerance",), type=number(float, lo=0), default=2.0, metavar="TAU",
           help="surface Dice tolerance in the spacing's unit (default 2.0)"),
    Option("spacing", ("--spacing",), type=number(float, lo=0, lo_open=True), nargs="+", metavar="S",
           help="voxel size per axis in array order (default 1 each)"),
    Option("voi_connectivity", ("--voi-connectivity",), type=int, choices=(6, 18, 26), default=26,
           help="connectivity of the components VOI compares (default 26)"),
    Option("voi_alpha", ("--voi-alpha",), type=number(float, lo=0), default=0.3, metavar="A",
           help="VOI score = 1/(1 + A * VOI) (default 0.3, the competition's)"),
    Option("voi_transform", ("--voi-transform",), choices=("one_over_one_plus", "exp"), default="one_over_one_plus",
           help="map VOI to a score: 1/(1+a*VOI) (default) or exp(-a*VOI)"),
    Option("weights", ("--weights",), type=number(float), nargs=3, default=(0.3, 0.35, 0.35), metavar="W",
           help="leaderboard weights of TopoScore, surface Dice, VOI score (default 0.3 0.35 0.35)"),
    Option("topo_weights", ("--topo-weights",), type=topo_weight, nargs="+", default=(0.34, 0.33, 0.33), metavar="W",
           help="TopoScore weights, one per dimension of --dims (default 0.34 0.33 0.33); in Python also a mapping "
                "{dim: weight} over the defaults, as topometrics takes"),
    Option("dims", ("--dims",), type=int, choices=(0, 1, 2), nargs="+", default=(0, 1, 2), metavar="D",
           help="the homology dimensions TopoScore weighs, as topometrics' dims (default 0 1 2)"),
    Option("topo_tiles", ("--topo-tiles",), type=positive_int, nargs=3, default=(2, 2, 2), metavar="N",
           help="tiles per axis for Betti matching, counts summed (default 2 2 2: the competition's octants; 1 1 1: "
                "the whole volume)"),
    Option("threads", ("--threads",), type=positive_int, metavar="N",
           help="tiles matched at once (default: the CPUs available, at most 8)"),
    Option("tile_rows", ("--tile-rows",), type=positive_int, metavar="N",
           help="files only: slices per window of surface Dice, VOI and the counts, which are then streamed "
                "window by window (with --scheduler/--processes always; given on threads, for a pair larger than "
                "memory: the whole volumes are never read; default about 16 M voxels; no number depends on it)"),
    Option("tile_shape", ("--tile-shape",), type=positive_int, nargs="+", metavar="N",
           help="files only, instead of --tile-rows: windows as boxes of Z Y X voxels (Y X for 2D inputs) tiling "
                "the volume, for a slice too large for one worker (a whole scroll); no number depends on it"),
    *output_options(csv=True),
    Option("executor", where="api",
           help="where TopoScore's tiles are matched: None (threads here) or a distributed.Client (one task per "
                "tile; workers read their own tiles of files given by path)"),
    *_cluster_options(),
)


def _topo_weights(given):
    """A mapping given in Python stays one; numbers are a tuple."""
    items = list(given)
    return items[0] if len(items) == 1 and isinstance(items[0], dict) else tuple(items)


def _options(o) -> dict:
    from segscore.engine.executor import default_workers

    return dict(ignore_label=None if o["no_ignore_label"] else o["ignore_label"],
                fg_threshold=o["fg_threshold"], tolerance=o["tolerance"], spacing=o["spacing"],
                voi_connectivity=o["voi_connectivity"], voi_alpha=o["voi_alpha"], voi_transform=o["voi_transform"],
                weights=tuple(o["weights"]), topo_weights=_topo_weights(o["topo_weights"]),
                topo_tiles=tuple(o["topo_tiles"]), dims=tuple(o["dims"]),
                threads=o["threads"] or default_workers())


def _read(path, what):
    from segscore.io.readers import open_labels
    from segscore.topology.score import PreparedSurfaces

    if isinstance(path, PreparedSurfaces):  # segscore.api.prepare_surfaces's: read already
        return path
    with open_labels(path, what=what, ndims=(2, 3)) as source:
        return source.read_all()


def case_row(name, result) -> dict:
    row = {"case": name}
    row.update({k: result[k] for k in CASE_COLUMNS[1:]})
    for k in range(3):
        for f in ("matched", "pred", "gt"):
            row[f"dim{k}_{f}"] = result["topology"][f"dim{k}"][f]
    return row


def csv_row(result) -> dict:
    from segscore.io.results import flatten

    row = flatten({k: v for k, v in result.items() if k not in ("notes", "warnings", "params")})
    row["notes"] = "; ".join(f"{k}: {v}" for k, v in result["notes"].items()) or None
    return row


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The result ``--json`` prints (folder mode: the summary); its ``plot()`` draws
    :func:`segscore.figures.surfaces_terms` of the result (folder mode: ``surfaces_cases`` of the
    per-case rows), the figure ``--plot FILE`` writes."""
    from segscore import figures
    from segscore.commands._options import write_outputs
    from segscore.errors import ScoreError
    from segscore.io.results import with_figure

    folder = o["gt_dir"] or o["pred_dir"]
    if o["plot"]:
        figures.require_matplotlib()  # before the work
    if folder:
        from segscore.commands._options import refuse_cluster

        refuse_cluster(o, "folder mode scores its cases one after the other in this process")
        if o["executor"] is not None:
            raise ScoreError("executor=: folder mode scores its cases in this process; give executor= with one pair")
        if not (o["gt_dir"] and o["pred_dir"] and o["out"]):
            raise ScoreError("folder mode needs --gt-dir, --pred-dir and --out together")
        for key, flag in (("tile_rows", "--tile-rows"), ("tile_shape", "--tile-shape")):
            if o.get(key) is not None:
                raise ScoreError(f"{flag}: folder mode reads each case whole; stream one pair at a time "
                                 f"(PRED GT {flag} N...), or leave {flag} out")
        if o["pred"] is not None or o["truth"] is not None:  # (arrays from segscore.api too)
            raise ScoreError("give either PRED GT or --gt-dir/--pred-dir, not both")
        result, rows = score_folders(o)
        result = with_figure(result, lambda: figures.surfaces_cases(rows, missing=result["missing"]))
        write_outputs(o, result)
        if o["plot"]:
            figures.draw_after(o["plot"], result.plot, "surfaces")
        return result
    if o["missing"] is not None:
        raise ScoreError(f"--missing {o['missing']}: a policy for a mean over cases, in folder mode (--gt-dir, "
                         "--pred-dir, --out); one pair has no mean")
    if o["pred"] is None or o["truth"] is None:
        raise ScoreError("give PRED GT (two volumes), or --gt-dir D --pred-dir D --out DIR")
    from segscore.commands._options import cluster_executor

    with cluster_executor(o, warm="segscore.topology.warmup:warm") as executor:
        result = _score_pair(o, executor)
    result = with_figure(result, lambda: figures.surfaces_terms(result))
    write_outputs(o, result, csv_rows=[csv_row(result)])
    if o["plot"]:
        figures.draw_after(o["plot"], result.plot, "surfaces")
    return result


def _shape_of(x, what):
    """The shape of an input, from its header (a path) or as it is (an array, a prepared truth)."""
    from segscore.io.readers import open_labels
    from segscore.topology.score import PreparedSurfaces

    if isinstance(x, PreparedSurfaces):
        return tuple(x.shape[1:] if x.two_d else x.shape)
    with open_labels(x, what=what, ndims=(2, 3)) as source:
        return tuple(source.shape)


def _score_pair(o, executor) -> dict:
    """One pair's result. The shapes are checked from the files' headers, then the inputs go to
    :func:`surfaces` as given: paths stay paths, so on an executor, or with ``tile_rows`` or
    ``tile_shape`` (streamed on threads), its workers read their own tiles and windows, and on the
    whole volumes it reads each file itself and drops what it read once it is binarized (a 512³
    pair's 268 MB of raw volumes are not held beside the Betti matching's octants)."""
    from segscore.errors import ScoreError
    from segscore.io.readers import input_name
    from segscore.topology.score import surfaces

    shapes = {k: _shape_of(o[k], what) for k, what in (("pred", "prediction"), ("truth", "labels"),
                                                         ("ignore_mask", "ignore mask")) if o[k] is not None}
    if "ignore_mask" in shapes and shapes["ignore_mask"] != shapes["truth"]:
        raise ScoreError(f"{input_name(o['ignore_mask'], 'ignore mask')}: shape {shapes['ignore_mask']} differs "
                         f"from the labels' {shapes['truth']}; give the mask on the labels' grid")
    if shapes["pred"] != shapes["truth"]:
        raise ScoreError(f"{input_name(o['pred'], 'prediction')}: shape {shapes['pred']} differs from the labels "
                         f"{input_name(o['truth'], 'labels')}'s {shapes['truth']}; score a prediction on the "
                         "labels' grid")

    def given(key, what):  # a path as it is; anything else as _read makes it
        x = o[key]
        return x if x is None or isinstance(x, (str, os.PathLike)) else _read(x, what)

    return surfaces(truth=given("truth", "labels"), pred=given("pred", "prediction"),
                    ignore_mask=given("ignore_mask", "ignore mask"), executor=executor,
                    tile_rows=o.get("tile_rows"),
                    tile_shape=tuple(o["tile_shape"]) if o.get("tile_shape") is not None else None, **_options(o))


_SUFFIXES = (".nii.gz", ".nii", ".tiff", ".tif", ".npy", ".zarr", ".png")


def _stem(name: str) -> str:
    low = name.lower()
    for s in _SUFFIXES:
        if low.endswith(s):
            return name[: -len(s)]
    return Path(name).stem


def _by_stem(folder, what) -> dict:
    from segscore.errors import ScoreError

    d = Path(folder)
    if not d.is_dir():
        raise ScoreError(f"{folder}: not a folder of {what} volumes; give an existing folder")
    return {_stem(p.name): p for p in sorted(d.iterdir()) if not p.name.startswith(".")
            and (p.is_file() or p.name.lower().endswith(".zarr"))}


def tail_risk(values, share: float = 0.05) -> dict:
    """Lower and upper ``share`` value at risk (the ``share`` and ``1 - share`` quantiles,
    numpy's linear method) and conditional value at risk (the mean of the values at or beyond
    each)."""
    import numpy as np

    v = np.asarray(values, float)
    lo = float(np.quantile(v, share))
    hi = float(np.quantile(v, 1 - share))
    return {"var_lower_5": lo, "cvar_lower_5": float(v[v <= lo].mean()),
            "var_upper_5": hi, "cvar_upper_5": float(v[v >= hi].mean())}


def summarize(rows) -> dict:
    """Each of :data:`SUMMARY_FIELDS` over the rows: ``n`` (the numbers), ``n_null`` (the nulls,
    left out and counted), mean, median, std, IQR; None when no row has a number."""
    import numpy as np

    out = {}
    for f in SUMMARY_FIELDS:
        v = np.array([r[f] for r in rows if r[f] is not None], float)
        if v.size == 0:
            out[f] = None
            continue
        q1, q3 = np.quantile(v, [0.25, 0.75])
        out[f] = {"n": int(v.size), "n_null": len(rows) - int(v.size), "mean": float(v.mean()),
                  "median": float(np.median(v)), "std": float(v.std(ddof=0)), "iqr": float(q3 - q1)}
    vt = [r["voi_total"] for r in rows if r["voi_total"] is not None]
    if vt:
        out["voi_total"].update(tail_risk(vt))
    return out


def missing_row(name, policy: str) -> dict:
    """The per-case row of a label volume without a prediction: every field null under ``null``;
    under ``worst`` each field's declared worst value (:data:`segscore.metrics.missing.WORST`:
    0 for the scores, VOI none: it stays null)."""
    from segscore.metrics.missing import worst_number

    row = {"case": name}
    for f in CASE_COLUMNS[1:]:
        row[f] = worst_number(f, {})[0] if policy == "worst" else None
    for k in range(3):
        for f in ("matched", "pred", "gt"):
            row[f"dim{k}_{f}"] = None
    return row


def _listed(names) -> str:
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")


def score_folders(o) -> tuple[dict, list]:
    """Folder mode: ``(summary, per-case rows)``. Every label volume is a case: one without a
    prediction is listed in ``missing_predictions`` and counted under ``--missing`` (``null``, the
    default: its row is null, left out of the means and counted in ``n_null``; ``worst``: each
    term at its worst value); a prediction without a label volume is left out with a warning."""
    from segscore.errors import ScoreError
    from segscore.io.results import write_csv, write_json
    from segscore.metrics.missing import check_policy, worst_of
    from segscore.topology.score import surfaces

    policy = check_policy(o["missing"])
    gts = _by_stem(o["gt_dir"], "label")
    preds = _by_stem(o["pred_dir"], "prediction")
    masks = _by_stem(o["ignore_mask_dir"], "ignore mask") if o["ignore_mask_dir"] else {}
    stems = sorted(set(gts) & set(preds))
    if not stems:
        raise ScoreError(f"{o['pred_dir']}: no file stem in common with {o['gt_dir']}; name each prediction "
                         "like its label volume (case.tif <-> case.tif)")
    warnings = []
    orphans = sorted(set(preds) - set(gts))
    if orphans:
        warnings.append(f"{len(orphans)} prediction{'' if len(orphans) == 1 else 's'} without a label volume left "
                        f"out: {_listed(orphans)}")
    missed = sorted(set(gts) - set(preds))
    if missed:
        how = ("left out of the means and counted (n_null)" if policy == "null" else
               "counted at each term's worst value (VOI: not imputable, left out)")
        warnings.append(f"{len(missed)} label volume{'' if len(missed) == 1 else 's'} without a prediction, "
                        f"--missing {policy}: {how}: {_listed(missed)}")
    opts = _options(o)
    rows, cases = [], {}
    for stem in sorted(gts):
        if stem not in preds:
            rows.append(missing_row(stem, policy))
            cases[stem] = {"notes": {"leaderboard": f"no prediction named {stem} in {o['pred_dir']} (--missing "
                                                    f"{policy})"}, "warnings": []}
            continue
        truth = _read(gts[stem], "labels")
        pred = _read(preds[stem], "prediction")
        if pred.shape != truth.shape:
            raise ScoreError(f"{preds[stem]}: shape {pred.shape} differs from the labels {gts[stem]}'s "
                             f"{truth.shape}; score a prediction on the labels' grid")
        mask = _read(masks[stem], "ignore mask") if stem in masks else None
        r = surfaces(truth=truth, pred=pred, ignore_mask=mask, **opts)
        rows.append(case_row(stem, r))
        cases[stem] = {k: r[k] for k in ("notes", "warnings")}
    out = Path(o["out"])
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "metrics_per_case.csv", rows)
    notes = {f"cases.{s}.{k}": v for s, c in cases.items() for k, v in c["notes"].items()}
    if missed and policy == "worst":
        for f in SUMMARY_FIELDS:
            w = worst_of(f)
            if isinstance(w, str) and w.startswith("none"):
                notes[f"summary.{f}"] = f"{len(missed)} case(s) without a prediction left out: {w}"
    summary = {"cases": len(rows), "scored": len(stems), "missing": policy, "missing_predictions": missed,
               "summary": summarize(rows), "per_case_csv": str(out / "metrics_per_case.csv"), "notes": notes,
               "warnings": warnings + [f"{s}: {w}" for s, c in cases.items() for w in c["warnings"]]}
    write_json(out / "summary.json", summary)
    return summary, rows


def text(r: dict) -> str:
    """The result as ``segscore surfaces`` prints it."""
    if "summary" in r:  # folder mode
        missed = r.get("missing_predictions") or []
        said = (f" ({len(missed)} without a prediction, --missing {r.get('missing')})" if missed else "")
        lines = [f"{r['cases']} cases{said}; per case: {r['per_case_csv']}",
                 "field          mean     median   std      iqr"]
        for f, s in r["summary"].items():
            if s is None:
                lines.append(f"{f:<13}  null")
                continue
            lines.append(f"{f:<13}  {s['mean']:.4f}   {s['median']:.4f}   {s['std']:.4f}   {s['iqr']:.4f}")
        vt = r["summary"].get("voi_total") or {}
        if "var_lower_5" in vt:
            lines.append(f"voi_total 5% VaR/CVaR: lower {vt['var_lower_5']:.4f}/{vt['cvar_lower_5']:.4f}, "
                         f"upper {vt['var_upper_5']:.4f}/{vt['cvar_upper_5']:.4f}")
        return "\n".join(lines)
    lines = [f"leaderboard   {_fmt(r['leaderboard'])}",
             f"toposcore     {_fmt(r['toposcore'])}   (topoF1 {_fmt(r['topoF1_0'])} {_fmt(r['topoF1_1'])} "
             f"{_fmt(r['topoF1_2'])}; {r['tiles']} tile{'' if r['tiles'] == 1 else 's'})",
             f"surface_dice  {_fmt(r['surface_dice'])}   (tolerance {r['params']['tolerance']:g})",
             f"voi_score     {_fmt(r['voi_score'])}   (total {_fmt(r['voi_total'])} = split {_fmt(r['voi_split'])} "
             f"+ merge {_fmt(r['voi_merge'])})",
             "", "dim  matched  pred  gt"]
    for k in range(3):
        d = r["topology"][f"dim{k}"]
        lines.append(f"{k:>3}  {d['matched']:>7}  {d['pred']:>4}  {d['gt']:>3}")
    for k, why in r["notes"].items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)
