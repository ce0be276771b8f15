"""``segscore objects``: the object scorecard of one predicted label image against its truth."""

from __future__ import annotations

from segscore.commands.objects import add_arguments  # noqa: F401



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


def run(args) -> int:
    from segscore.cli._common import progress_printer, show
    from segscore.commands.objects import compute

    result = compute(args, progress=progress_printer(args, "objects"))
    show(args, result, format_result(result))
    return 0
