"""``curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, add_spacing_options, length_px

    p.add_argument("prediction", help="the predicted binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy")
    p.add_argument("--gt", required=True, help="the reference binary mask, same shape")
    p.add_argument("--prune-px", type=length_px, default=5, metavar="N",
                   help="spur-pruning length in voxels for both graphs (default 5; ~2-3 vessel radii)")
    add_spacing_options(p)
    p.add_argument("--all-metrics", action="store_true",
                   help="also skeleton_recall, cbdice_star, hd95, betti_matching (unmatched Betti-matching pairs; "
                        "curvicost needs a compiled module for it, and has NaN in 3D), apls and junction_f1 (curvicost's optional metrics; full distance maps, slower)")
    add_output_options(p, csv=True)


def csv_row(row: dict) -> dict:
    """The row as one CSV row: lists joined with ``,``, ``notes`` as one cell ``KEY: REASON; ...``."""
    return {k: (",".join(map(str, v)) if isinstance(v, list) else
                "; ".join(f"{n}: {why}" for n, why in v.items()) or None if isinstance(v, dict) else v)
            for k, v in row.items()}


def compute(args, *, progress=None, argv=None) -> dict:
    import numpy as np

    from segscore.commands._options import write_outputs
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.scoring import score
    from segscore.engine import side_by_side
    from segscore.errors import ScoreError

    (gt, vox), (pred, pvox) = side_by_side([lambda: load_mask(args.gt, what="reference mask"),  # decoded side by side
                                            lambda: load_mask(args.prediction, what="prediction mask")], threads=2)
    if not np.any(gt):
        raise ScoreError(f"{args.gt}: the reference mask is empty; a reference needs at least one foreground voxel")
    if gt.shape != pred.shape:
        raise ScoreError(f"{args.prediction}: shape {pred.shape} differs from the reference {args.gt}'s {gt.shape}; "
                         "resample one onto the other's grid")
    from segscore.io.spacing import resolve_spacing

    spacing = resolve_spacing(getattr(args, "spacing", None), [args.gt, args.prediction], gt.ndim)
    row = score(gt, pred, prune_px=args.prune_px, voxel_size=vox or pvox, all_metrics=args.all_metrics,
                spacing=spacing, prune_length=getattr(args, "prune_length", None))
    write_outputs(args, row, csv_rows=[csv_row(row)])
    return row


def warnings(row: dict) -> list[str]:
    from segscore.curvilinear.scoring import scale_warnings

    return list(scale_warnings(row))
