"""``curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations

import argparse


def voxel_size_spec(text: str) -> tuple:
    """curvicost's ``--voxel-size`` SPEC: numbers separated by ``,`` (or ``x``), e.g. ``0.5,0.5,2``;
    one number stands for every axis (:func:`voxel_size_for` checks the count against the mask).
    Each must be a positive finite number (curvicost takes any float; a NaN could not be written)."""
    import math

    parts = [p for p in text.replace("x", ",").split(",") if p.strip()]
    try:
        vals = tuple(float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of numbers like 0.5,0.5,2") from None
    if not vals or not all(math.isfinite(v) and v > 0 for v in vals):
        raise argparse.ArgumentTypeError(f"{text!r}: give positive finite voxel sizes, e.g. 0.5,0.5,2")
    return vals


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


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, add_spacing_options, length_px

    p.add_argument("prediction", nargs="?", metavar="PRED",
                   help="the predicted binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy")
    p.add_argument("--gt", "--reference", required=True, dest="gt", metavar="GT",
                   help="the reference binary mask, same shape")
    p.add_argument("--prune-px", type=length_px, default=5, metavar="N",
                   help="spur-pruning length in voxels for both graphs (default 5; ~2-3 vessel radii)")
    add_spacing_options(p)
    p.add_argument("--voxel-size", type=voxel_size_spec, metavar="SPEC",
                   help='physical voxel size as curvicost takes it, e.g. "0.5,0.5,2" (one number: every axis); '
                        "recorded in the row's voxel_size in place of the header's, not applied (--spacing, or the "
                        "header's spacing, is what lengths are measured in)")
    p.add_argument("--all-metrics", action=argparse.BooleanOptionalAction, default=True,
                   help="curvicost 0.3.1's further metrics, computed by default as curvicost's score does: "
                        "skeleton_recall, cbdice_star, hd95, betti_matching (unmatched Betti-matching pairs; "
                        "curvicost needs a compiled module for it, and has NaN in 3D), apls and junction_f1; --no-all-metrics skips them")
    p.add_argument("--no-erl", action="store_true",
                   help="skip ERL and the DIADEM-like score, as curvicost's --no-erl (erl, erl_frac, merged_frac, "
                        "diadem_like, erl_star, erl_split and node_recall are then null with a note)")
    p.add_argument("--reference-radii", action="store_true",
                   help="also report the topology-only conductance, the prediction's radii read from the reference "
                        "(conductance_refradii_frac, conductance_refradii_twosided), as curvicost's --reference-radii")
    from segscore.commands._options import add_ignore_options

    add_ignore_options(p, "reference", note="; the reference may then hold 0, V and one foreground value")
    add_output_options(p, csv=True, json_path="prediction")
    p.add_argument("--quiet", action="store_true",
                   help="print nothing but errors (no text report, no warnings on stderr; the files of --json "
                        "FILE.json, --json-out and --csv are written, and --json alone still prints the JSON)")


def csv_row(row: dict) -> dict:
    """The row as one CSV row: lists joined with ``,``, ``notes`` as one cell ``KEY: REASON; ...``."""
    return {k: (",".join(map(str, v)) if isinstance(v, list) else
                "; ".join(f"{n}: {why}" for n, why in v.items()) or None if isinstance(v, dict) else v)
            for k, v in row.items()}


def compute(args, *, progress=None, argv=None) -> dict:
    import numpy as np

    from segscore.commands._options import settle_json, write_outputs
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.scoring import score
    from segscore.engine import side_by_side
    from segscore.errors import ScoreError

    settle_json(args)
    if args.prediction is None:
        raise ScoreError("no prediction: give the predicted mask, e.g. `segscore curve PRED.png --gt GT.png`")
    ignore_label, ignore_mask = getattr(args, "ignore_label", None), getattr(args, "ignore_mask", None)
    raw = ignore_label is not None or ignore_mask is not None  # checked binary once the ignored voxels are 0
    (gt, vox), (pred, pvox) = side_by_side([lambda: load_mask(args.gt, what="reference mask", raw=raw),  # decoded side by side
                                            lambda: load_mask(args.prediction, what="prediction mask", raw=raw)],
                                           threads=2)
    from segscore.io.readers import input_name

    gt_name, pred_name = input_name(args.gt, "reference mask"), input_name(args.prediction, "prediction mask")
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

    spacing = resolve_spacing(getattr(args, "spacing", None), [args.gt, args.prediction], gt.ndim)
    given = voxel_size_for(getattr(args, "voxel_size", None), gt.ndim)
    row = score(gt, pred, prune_px=args.prune_px, voxel_size=given or vox or pvox,
                all_metrics=getattr(args, "all_metrics", True), spacing=spacing,
                prune_length=getattr(args, "prune_length", None), with_erl=not getattr(args, "no_erl", False),
                reference_radii=getattr(args, "reference_radii", False))
    if said:
        row["warnings"] = list(row.get("warnings") or []) + said
    write_outputs(args, row, csv_rows=[csv_row(row)])
    return row


CURVE_KEYS = ("dice", "cldice", "betti0_error", "erl_frac", "traceable_frac", "conductance_frac")


def headline(result: dict) -> list:
    """Curvilinear (``segscore curve``): Dice, clDice, the Betti-0 error, ERL as a share of the
    reference's, the traceable share of the reference's length and the Kirchhoff conductance
    share. No floors."""
    from segscore.commands._headline import cell

    return [cell(result, k, k) for k in CURVE_KEYS]
