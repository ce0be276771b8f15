"""``objects``: the object scorecard of one predicted label image against its truth."""

from __future__ import annotations


def add_scorecard_options(p) -> None:
    """The options of the scorecard's optional measures, shared with ``holdout``."""
    from segscore.commands._options import number

    p.add_argument("--count-background", action="store_true",
                   help="count the truth's background in VOI and the adapted Rand error (default: left out, "
                        "as CREMI and scikit-image's adapted_rand_error do)")
    p.add_argument("--surface", action="store_true",
                   help="add surface distances: hd95, assd, nsd per matched object (means and _sd) and of the "
                        "whole foreground (hd_pixel, hd95_pixel, assd_pixel, nsd_pixel), in the spacing's unit")
    p.add_argument("--spacing", type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
                   help="voxel spacing, one number per axis in array order (Z Y X or Y X); without it, what the "
                        "files' headers state, else 1 each")
    p.add_argument("--nsd-tolerance", type=number(float, lo=0, hi=1e12), default=1.0, metavar="T",
                   help="normalized surface Dice tolerance, in the spacing's unit (default 1.0)")
    from segscore.metrics.surface import DEFAULT_DISTANCE_DEFINITION, DISTANCE_DEFINITIONS

    p.add_argument("--distance-definition", choices=DISTANCE_DEFINITIONS, default=DEFAULT_DISTANCE_DEFINITION,
                   help="whose surface distances --surface reports, per object and of the whole foreground: monai "
                        "(default; hd95 the larger directed 95th percentile, assd the mean of both directions "
                        "pooled), panoptica (hd95 one percentile of both directions pooled, assd the mean of the two "
                        "directed means) or deepmind (surface-distance: surface elements on voxel corners weighted "
                        "by area; reads both images whole)")


def add_arguments(p) -> None:
    from segscore.commands._options import add_engine_options, add_ignore_options, add_output_options, number, share

    p.add_argument("truth", help="the truth label image (TIFF, PNG, .npy, NIfTI or zarr: PATH.zarr or "
                   "PATH.zarr/KEY; 2D or 3D; 0 = background); read tile by tile")
    p.add_argument("prediction", help="the predicted label image, same shape")
    p.add_argument("--iou", type=share, default=0.5, help="IoU at which precision, recall, F1, Dice and areas "
                   "are matched (default 0.5)")
    p.add_argument("--tolerances", type=number(int, lo=0, hi=1000), nargs="+", default=[1, 2, 3], metavar="PX",
                   help="boundary tolerances in pixels (default 1 2 3)")
    p.add_argument("--minimum-overlap", type=share, default=0.1,
                   help="share of a truth object that counts toward a split or merge (default 0.1)")
    add_scorecard_options(p)
    p.add_argument("--components", type=int, choices=(4, 6, 8, 18, 26), metavar="N",
                   help="the images are binary or semantic masks: score the connected components of each class "
                        "value as instances (6, 18 or 26 in 3D; 4 or 8 in 2D; touching regions of different "
                        "classes are different instances); both images are then read whole")
    add_ignore_options(p, note="; both images are then read whole")
    p.add_argument("--per-object", metavar="FILE.csv",
                   help="also write one row per truth object and per unmatched prediction (ids, voxels, IoU, "
                        "Dice, split, merged; hd95 and assd with --surface)")
    add_output_options(p, csv=True)
    from segscore.figures import add_plot_option

    add_plot_option(p, "AP (TP/(TP+FP+FN)) against the IoU threshold")
    add_engine_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.objects.metrics import score_segmentation

    per_object = getattr(args, "per_object", None)
    plot = getattr(args, "plot", None)
    if plot:
        from segscore import figures

        figures.require_matplotlib()  # before the work
    result = score_segmentation(args.truth, args.prediction, threshold=args.iou,
                                boundary_tolerances=tuple(args.tolerances), minimum_overlap=args.minimum_overlap,
                                tile_rows=args.tile_rows, threads=args.threads, progress=progress,
                                count_background=getattr(args, "count_background", False),
                                surface=getattr(args, "surface", False), spacing=getattr(args, "spacing", None),
                                nsd_tolerance=getattr(args, "nsd_tolerance", 1.0), per_object=bool(per_object),
                                distance_definition=getattr(args, "distance_definition", None),
                                components=getattr(args, "components", None),
                                ignore_label=getattr(args, "ignore_label", None),
                                ignore_mask=getattr(args, "ignore_mask", None))
    rows = result.pop("per_object", None)
    if per_object:
        from segscore.io.results import write_csv

        write_csv(per_object, rows or [])
    from segscore.io.results import flatten

    write_outputs(args, result, csv_rows=[flatten(result)])
    if plot:
        figures.draw_after(plot, lambda: figures.objects_ap(result), "objects")
    return result


OBJECTS_KEYS = ("f1", "precision", "recall", "ap_0.5", "ap_mean", "pq", "dice_per_object")


def headline(result: dict) -> list:
    """Objects (``segscore objects``): the matching IoU, F1, precision, recall at it, the
    segmentation AP (TP/(TP+FP+FN), not the PR area) at IoU 0.5 and its mean over the sweep,
    PQ when present and per-object Dice. A scorecard has no floors."""
    from segscore.commands._headline import cell

    cells = [cell(result, "match_iou", "match_iou", "setting")]
    cells += [cell(result, k, k) for k in OBJECTS_KEYS if k != "pq" or "pq" in result]
    return cells


def text(r: dict) -> str:
    """The result as ``segscore objects`` prints it."""
    from segscore.commands._options import value_text as f

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
    if "pq" in r:
        lines.append(f"panoptic quality {f(r['pq'])} (SQ {f(r['sq'])} x RQ {f(r['rq'])}; Dice-based "
                     f"{f(r['pq_dsc'])})")
        bg = "truth background counted" if r.get("count_background") else "truth background left out"
        lines.append(f"VOI split {f(r['voi_split'])}  merge {f(r['voi_merge'])} bits  adapted Rand error "
                     f"{f(r['adapted_rand_error'])} (precision {f(r['adapted_rand_precision'])}  recall "
                     f"{f(r['adapted_rand_recall'])}; {bg})")
    if "hd95_pixel" in r:
        sp = " x ".join(f"{v:g}" for v in r.get("spacing") or [])
        how = r.get("distance_definition") or "monai"
        lines.append(f"surface ({how}'s definition, spacing {sp}): per object hd95 {f(r['hd95_per_object'])}  assd "
                     f"{f(r['assd_per_object'])}  nsd@{r['nsd_tolerance']:g} {f(r['nsd_per_object'])}")
        lines.append(f"whole foreground: hd {f(r['hd_pixel'])}  hd95 {f(r['hd95_pixel'])}  assd "
                     f"{f(r['assd_pixel'])}  nsd@{r['nsd_tolerance']:g} {f(r['nsd_pixel'])}")
    for k, why in r.get("notes", {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)
