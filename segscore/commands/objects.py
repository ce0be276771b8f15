"""``objects``: the object scorecard of one predicted label image against its truth."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import (engine_options, ignore_options, number, output_options,  # noqa: E402
                                        plot_option, share)


def matching_options(matched: str) -> tuple:
    """``--iou`` and ``--tolerances``, shared with ``holdout``; ``matched``: what is matched at the IoU."""
    return (Option("iou", ("--iou",), type=share, default=0.5,
                   help=f"IoU at which {matched} are matched (default 0.5)"),
            Option("tolerances", ("--tolerances",), type=number(int, lo=0, hi=1000), nargs="+", default=[1, 2, 3],
                   metavar="PX", help="boundary tolerances in pixels (default 1 2 3)"))


def scorecard_options() -> tuple:
    """The options of the scorecard's optional measures, shared with ``holdout``."""
    from segscore.metrics.definitions import DEFAULT_DISTANCE_DEFINITION, DISTANCE_DEFINITIONS

    return (
        Option("count_background", ("--count-background",), kind="flag",
               help="count the truth's background in VOI and the adapted Rand error (default: left out, as CREMI "
                    "and scikit-image's adapted_rand_error do)"),
        Option("surface", ("--surface",), kind="flag",
               help="add surface distances: hd95, assd, nsd per matched object (means and _sd) and of the whole "
                    "foreground (hd_pixel, hd95_pixel, assd_pixel, nsd_pixel), in the spacing's unit"),
        Option("spacing", ("--spacing",), type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
               help="voxel spacing, one number per axis in array order (Z Y X or Y X); without it, what the files' "
                    "headers state, else 1 each"),
        Option("nsd_tolerance", ("--nsd-tolerance",), type=number(float, lo=0, hi=1e12), default=1.0, metavar="T",
               help="normalized surface Dice tolerance, in the spacing's unit (default 1.0)"),
        Option("distance_definition", ("--distance-definition",), choices=DISTANCE_DEFINITIONS,
               default=DEFAULT_DISTANCE_DEFINITION,
               help="whose surface distances --surface reports, per object and of the whole foreground: monai "
                    "(default; hd95 the larger directed 95th percentile, assd the mean of both directions pooled), "
                    "panoptica (hd95 one percentile of both directions pooled, assd the mean of the two directed "
                    "means) or deepmind (surface-distance: surface elements on voxel corners weighted by area; reads "
                    "both images whole)"),
    )


#: ``segscore objects TRUTH PRED``; ``segscore.api.objects(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("truth", metavar="TRUTH", role="truth", arrays=True,
           help="the truth label image (TIFF, PNG, .npy, NIfTI or zarr: PATH.zarr or PATH.zarr/KEY; 2D or 3D; "
                "0 = background); read tile by tile"),
    Option("pred", metavar="PRED", role="pred", arrays=True, help="the predicted label image, same shape"),
    *matching_options("precision, recall, F1, Dice and areas"),
    Option("minimum_overlap", ("--minimum-overlap",), type=share, default=0.1,
           help="share of a truth object that counts toward a split or merge (default 0.1)"),
    *scorecard_options(),
    Option("components", ("--components",), type=int, choices=(4, 6, 8, 18, 26), metavar="N",
           help="the images are binary or semantic masks: score the connected components of each class value as "
                "instances (6, 18 or 26 in 3D; 4 or 8 in 2D; touching regions of different classes are different "
                "instances); both images are then read whole"),
    *ignore_options(note="; both images are then read whole"),
    Option("per_object", ("--per-object",), metavar="FILE.csv",
           help="also write one row per truth object and per unmatched prediction (ids, voxels, IoU, Dice, split, "
                "merged; hd95 and assd with --surface)"),
    *output_options(csv=True),
    *plot_option("AP (TP/(TP+FP+FN)) against the IoU threshold"),
    *engine_options(executor=True, cluster=True, cluster_only="--surface (per-object surface distances)"),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    from segscore import figures
    from segscore.commands._options import cluster_executor, write_outputs
    from segscore.io.results import flatten, with_figure, write_csv
    from segscore.objects.metrics import _score_segmentation

    if o["plot"]:
        figures.require_matplotlib()  # before the work
    single = ("--surface gathers every object's surface voxels for per-object distances in one process"
              if o["surface"] else None)
    with cluster_executor(o, single=single, warm="segscore.objects.warmup:warm") as executor:
        result = _score_segmentation(o["truth"], o["pred"], threshold=o["iou"],
                                     boundary_tolerances=tuple(o["tolerances"]),
                                     minimum_overlap=o["minimum_overlap"], tile_rows=o["tile_rows"],
                                     threads=o["threads"], executor=executor, progress=progress,
                                     count_background=o["count_background"], surface=o["surface"],
                                     spacing=o["spacing"], nsd_tolerance=o["nsd_tolerance"],
                                     per_object=bool(o["per_object"]), distance_definition=o["distance_definition"],
                                     components=o["components"], ignore_label=o["ignore_label"],
                                     ignore_mask=o["ignore_mask"])
    rows = result.pop("per_object", None)
    if o["per_object"]:
        write_csv(o["per_object"], rows or [])
    result = with_figure(result, lambda: figures.objects_ap(result))
    write_outputs(o, result, csv_rows=[flatten(result)])
    if o["plot"]:
        figures.draw_after(o["plot"], lambda: figures.objects_ap(result), "objects")
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
