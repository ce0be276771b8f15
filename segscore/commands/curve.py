"""``curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations

import argparse


def voxel_size_spec(text) -> tuple:
    """curvicost's ``--voxel-size`` SPEC: numbers separated by ``,`` (or ``x``), e.g. ``0.5,0.5,2``,
    or (in Python) a number or a sequence of numbers; one number stands for every axis
    (:func:`voxel_size_for` checks the count against the mask). Each must be a positive finite
    number (curvicost takes any float; a NaN could not be written)."""
    import math

    parts = [p for p in text.replace("x", ",").split(",") if p.strip()] if isinstance(text, str) else \
        list(text) if isinstance(text, (list, tuple)) else [text]
    try:
        vals = tuple(float(p) for p in parts)
    except (ValueError, TypeError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of numbers like 0.5,0.5,2") from None
    if not vals or not all(math.isfinite(v) and v > 0 for v in vals):
        raise argparse.ArgumentTypeError(f"{text!r}: give positive finite voxel sizes, e.g. 0.5,0.5,2")
    return vals


voxel_size_spec.takes_lists = True  # a Python caller may give the sizes as a list


def voxel_size_for(spec, ndim: int, text=None):
    """``spec`` (from :func:`voxel_size_spec`) for a ``ndim``-D mask: one value repeated per axis,
    else exactly ``ndim`` of them (curvicost's ``voxel_size_of``); None stays None."""
    from segscore.errors import ScoreError

    if spec is None:
        return None
    vals = tuple(spec)
    if len(vals) == 1:
        vals = vals * ndim
    if len(vals) != ndim:
        raise ScoreError(f"--voxel-size {text or ','.join(map(str, spec))}: {len(vals)} values for a {ndim}D mask; "
                         f"give one per axis in array order, or one for all")
    return vals


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import ignore_options, length_px, output_options, spacing_options  # noqa: E402

#: ``segscore curve PRED --gt TRUTH``; ``segscore.api.curve(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", nargs="?", metavar="PRED", role="pred", arrays=True,
           help="the predicted binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy"),
    Option("truth", ("--gt", "--reference"), required=True, metavar="TRUTH", role="truth", arrays=True,
           help="the reference (truth) binary mask, same shape"),
    Option("prune_px", ("--prune-px",), type=length_px, default=5, metavar="N",
           help="spur-pruning length in voxels for both graphs (default 5; ~2-3 vessel radii)"),
    *spacing_options(),
    Option("voxel_size", ("--voxel-size",), type=voxel_size_spec, metavar="SPEC",
           help='physical voxel size as curvicost takes it, e.g. "0.5,0.5,2" (one number: every axis); recorded in '
                "the row's voxel_size in place of the header's, not applied (--spacing, or the header's spacing, is "
                "what lengths are measured in)"),
    Option("all_metrics", ("--all-metrics",), kind="bool", default=True,
           help="curvicost 0.3.1's further metrics, computed by default as curvicost's score does: skeleton_recall, "
                "cbdice_star, hd95, betti_matching (unmatched Betti-matching pairs; curvicost needs a compiled module "
                "for it, and has NaN in 3D), apls and junction_f1; --no-all-metrics skips them"),
    Option("no_erl", ("--no-erl",), kind="flag",
           help="skip ERL and the DIADEM-like score, as curvicost's --no-erl (erl, erl_frac, merged_frac, "
                "diadem_like, erl_star, erl_split and node_recall are then null with a note)"),
    Option("reference_radii", ("--reference-radii",), kind="flag",
           help="also report the topology-only conductance, the prediction's radii read from the reference "
                "(conductance_refradii_frac, conductance_refradii_twosided), as curvicost's --reference-radii"),
    *ignore_options("reference", note="; the reference may then hold 0, V and one foreground value"),
    Option("reference", where="api",
           help="the truth's skeleton graph prepared once (segscore.curvilinear.prepare_reference(truth, "
                "prune_px=...)), reused across predictions scored against the same truth"),
    *output_options(csv=True, json_path="pred"),
    Option("quiet", ("--quiet",), kind="flag", where="cli",
           help="print nothing but errors (no text report, no warnings on stderr; the files of --json FILE.json, "
                "--json-out and --csv are written, and --json alone still prints the JSON)"),
)


def csv_row(row: dict) -> dict:
    """The row as one CSV row: lists joined with ``,``, ``notes`` as one cell ``KEY: REASON; ...``."""
    return {k: (",".join(map(str, v)) if isinstance(v, list) else
                "; ".join(f"{n}: {why}" for n, why in v.items()) or None if isinstance(v, dict) else v)
            for k, v in row.items()}


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    import numpy as np

    from segscore.commands._options import write_outputs
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.scoring import _score as score
    from segscore.engine import side_by_side
    from segscore.errors import ScoreError

    if o["pred"] is None:
        raise ScoreError("no prediction: give the predicted mask, e.g. `segscore curve PRED.png --gt GT.png`")
    ignore_label, ignore_mask = o["ignore_label"], o["ignore_mask"]
    raw = ignore_label is not None or ignore_mask is not None  # checked binary once the ignored voxels are 0
    (gt, vox), (pred, pvox) = side_by_side([lambda: load_mask(o["truth"], what="reference mask", raw=raw),  # decoded side by side
                                            lambda: load_mask(o["pred"], what="prediction mask", raw=raw)],
                                           threads=2)
    from segscore.io.readers import input_name

    gt_name, pred_name = input_name(o["truth"], "reference mask"), input_name(o["pred"], "prediction mask")
    said = []
    if raw:
        from segscore.curvilinear.scoring import apply_ignore

        gt, pred, said = apply_ignore(gt, pred, ignore_label=ignore_label, ignore_mask=ignore_mask, gt_name=gt_name,
                                      pred_name=pred_name)
    if not np.any(gt):
        raise ScoreError(f"{gt_name}: the reference mask is empty; a reference needs at least one foreground voxel")
    if gt.shape != pred.shape:
        raise ScoreError(f"{pred_name}: shape {pred.shape} differs from the reference {gt_name}'s {gt.shape}; "
                         "resample one onto the other's grid")
    from segscore.io.spacing import resolve_spacing

    spacing = resolve_spacing(o["spacing"], [o["truth"], o["pred"]], gt.ndim)
    given = voxel_size_for(o["voxel_size"], gt.ndim)
    row = score(gt, pred, prune_px=o["prune_px"], voxel_size=given or vox or pvox,
                all_metrics=o["all_metrics"], spacing=spacing,
                prune_length=o["prune_length"], with_erl=not o["no_erl"],
                reference_radii=o["reference_radii"], reference=o["reference"])
    if said:
        row["warnings"] = list(row.get("warnings") or []) + said
    write_outputs(o, row, csv_rows=[csv_row(row)])
    return row


CURVE_KEYS = ("dice", "cldice", "betti0_error", "erl_frac", "traceable_frac", "conductance_frac")


def headline(result: dict) -> list:
    """Curvilinear (``segscore curve``): Dice, clDice, the Betti-0 error, ERL as a share of the
    reference's, the traceable share of the reference's length and the Kirchhoff conductance
    share. No floors."""
    from segscore.commands._headline import cell

    return [cell(result, k, k) for k in CURVE_KEYS]
