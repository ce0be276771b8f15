"""``segscore curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations

import sys

HELP = "curvilinear masks: Dice, clDice, Betti-0, ERL beside reachable length and Kirchhoff conductance"

_LEFT = ("dice", "iou", "cldice", "betti0_error", "erl_frac", "diadem_like")
_RIGHT = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac", "perfused_of_self")


def add_arguments(p) -> None:
    from segscore.cli._common import add_output_options, length_px

    p.add_argument("prediction", help="the predicted binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy")
    p.add_argument("--gt", required=True, help="the reference binary mask, same shape")
    p.add_argument("--prune-px", type=length_px, default=5, metavar="N",
                   help="spur-pruning length in voxels for both graphs (default 5; ~2-3 vessel radii)")
    p.add_argument("--all-metrics", action="store_true",
                   help="also skeleton_recall, cbdice_star, hd95, betti_matching (null: needs a module curvicost does "
                        "not ship), apls and junction_f1 (curvicost's optional metrics; full distance maps, slower)")
    add_output_options(p, csv=True)


def _fmt(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def format_row(row: dict) -> str:
    from segscore.curvilinear.scoring import ALIAS_KEYS, CONDUCTANCE_SIDE_KEYS, OPTIONAL_KEYS

    lines = ["metric                 value   |  cost                      value", "-" * 68]
    for i in range(max(len(_LEFT), len(_RIGHT))):
        lk = _LEFT[i] if i < len(_LEFT) else ""
        rk = _RIGHT[i] if i < len(_RIGHT) else ""
        lcell = f"{lk:<18} {_fmt(row[lk]):>8}" if lk else " " * 27
        rcell = f"{rk:<22} {_fmt(row[rk]):>8}" if rk else ""
        lines.append(f"{lcell}   |  {rcell}".rstrip())
    pr = row.get("prune_radii")
    lines.append("")
    lines.append(f"betti0 {row['betti0_gt']} -> {row['betti0_pred']}; reachable {row['traceable_length']} of "
                 f"{row['traceable_length_ref']} reference-skeleton voxels; --prune-px {row['prune_px']:g}"
                 + (f" = {pr:.2f} vessel radii" if pr is not None else ""))
    same = [f"{k} {_fmt(row[k])}" for k in ALIAS_KEYS + CONDUCTANCE_SIDE_KEYS if k in row]
    if same:
        lines.append("; ".join(same))
    extra = [f"{k} {_fmt(row[k])}" for k in OPTIONAL_KEYS if k in row]
    if extra:
        lines.append("; ".join(extra))
    if row.get("voxel_size"):
        lines.append(f"voxel size {tuple(row['voxel_size'])} (recorded; lengths and radii are in voxels)")
    if row.get("betti0_pred") == 0:
        lines.append("note: the prediction is empty: every cost is 0")
    for k, why in (row.get("notes") or {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    import numpy as np

    from segscore.cli._common import emit
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.scoring import score, scale_warnings

    from segscore.engine import side_by_side

    (gt, vox), (pred, pvox) = side_by_side([lambda: load_mask(args.gt, what="reference mask"),  # decoded side by side
                                            lambda: load_mask(args.prediction, what="prediction mask")], threads=2)
    if not np.any(gt):
        from segscore.errors import ScoreError

        raise ScoreError(f"{args.gt}: the reference mask is empty; a reference needs at least one foreground voxel")
    if gt.shape != pred.shape:
        from segscore.errors import ScoreError

        raise ScoreError(f"{args.prediction}: shape {pred.shape} differs from the reference {args.gt}'s {gt.shape}; "
                         "resample one onto the other's grid")
    row = score(gt, pred, prune_px=args.prune_px, voxel_size=vox or pvox, all_metrics=args.all_metrics)
    for w in scale_warnings(row):
        sys.stderr.write(f"segscore curve: warning: {w}\n")
    csv_row = {k: (",".join(map(str, v)) if isinstance(v, list) else
                   "; ".join(f"{n}: {why}" for n, why in v.items()) or None if isinstance(v, dict) else v)
               for k, v in row.items()}
    emit(args, row, format_row(row), csv_rows=[csv_row])
    return 0
