"""``segscore objects``: the object scorecard of one predicted label image against its truth."""

from __future__ import annotations

HELP = "object scorecard of an instance segmentation (matching, AP sweep, Dice, boundary F1, splits/merges)"


def add_arguments(p) -> None:
    from segscore.cli._common import add_output_options, number, share

    from segscore.cli._common import add_engine_options

    p.add_argument("truth", help="the truth label image (TIFF, PNG, .npy, NIfTI or zarr: PATH.zarr or "
                   "PATH.zarr/KEY; 2D or 3D; 0 = background); read tile by tile")
    p.add_argument("prediction", help="the predicted label image, same shape")
    p.add_argument("--iou", type=share, default=0.5, help="IoU at which precision, recall, F1, Dice and areas "
                   "are matched (default 0.5)")
    p.add_argument("--tolerances", type=number(int, lo=0, hi=1000), nargs="+", default=[1, 2, 3], metavar="PX",
                   help="boundary tolerances in pixels (default 1 2 3)")
    p.add_argument("--minimum-overlap", type=share, default=0.1,
                   help="share of a truth object that counts toward a split or merge (default 0.1)")
    add_output_options(p)
    add_engine_options(p)


def format_result(r: dict) -> str:
    def f(v):
        if v is None:
            return "null"
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = [f"objects: {r['n_truth']} truth, {r['n_pred']} predicted (count error {r['count_error']:+d})",
             f"at IoU {r['match_iou']:g}: TP {r['true_positives']}  FP {r['false_positives']}  "
             f"FN {r['false_negatives']}  precision {f(r['precision'])}  recall {f(r['recall'])}  F1 {f(r['f1'])}",
             f"mean IoU {f(r['iou_mean'])}  Dice per object {f(r['dice_per_object'])}  "
             f"pixel Dice {f(r['dice_pixel'])}  area error {f(r['area_error_mean'])} "
             f"(abs {f(r['area_error_abs_mean'])})",
             "AP (TP/(TP+FP+FN)) " + "  ".join(f"{k[3:]}:{f(v)}" for k, v in r.items()
                                               if k.startswith("ap_0") or k.startswith("ap_1"))
             + f"  mean {f(r['ap_mean'])}"]
    for k in r:
        if k.startswith("boundary_f1_"):
            t = k[len("boundary_f1_"):]
            lines.append(f"boundary {t}: precision {f(r['boundary_precision_' + t])}  "
                         f"recall {f(r['boundary_recall_' + t])}  F1 {f(r[k])}")
    lines.append(f"splits {r['splits']}  merges {r['merges']}")
    for k, why in r.get("notes", {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    from segscore.cli._common import emit, progress_printer
    from segscore.objects.metrics import score_segmentation

    result = score_segmentation(args.truth, args.prediction, threshold=args.iou,
                                boundary_tolerances=tuple(args.tolerances), minimum_overlap=args.minimum_overlap,
                                tile_rows=args.tile_rows, threads=args.threads,
                                progress=progress_printer(args, "objects"))
    emit(args, result, format_result(result))
    return 0
