"""Objects figure: AP (the segmentation AP, TP / (TP + FP + FN)) against the IoU threshold."""

from __future__ import annotations

import re

from segscore.errors import ScoreError
from segscore.figures._base import PREDICTION, is_number, new_figure, refuse_null

__all__ = ["objects_ap", "ap_sweep"]

_AP = re.compile(r"^ap_(\d+(?:\.\d+)?)$")


def ap_sweep(result: dict) -> list[tuple[float, str]]:
    """``[(threshold, key)]`` of the result's AP sweep (``ap_0.5`` ... ``ap_0.9``), by threshold."""
    found = []
    for key in result:
        m = _AP.match(str(key))
        if m:
            found.append((float(m.group(1)), key))
    return sorted(found)


def objects_ap(result: dict, *, title: str = ""):
    """AP = TP / (TP + FP + FN) at each IoU threshold of the result's sweep (``gid="ap"``: one
    point per threshold, x the threshold, y the result's ``ap_{t}``), its mean over the sweep
    (``"ap_mean"``), and the match IoU of precision, recall and F1 (``"match_iou"``).

    ``result`` is what ``score_segmentation`` (``segscore objects --json``) returns. This "AP" is
    not the area under a precision-recall curve. Refuses (ScoreError) a result without an AP
    sweep, and one whose APs are all null (neither image has an object: the note says so)."""
    sweep = ap_sweep(result) if isinstance(result, dict) else []
    if not sweep:
        raise ScoreError("not an objects result (no ap_0.5 ... ap_0.9 sweep); give what score_segmentation returns")
    points = [(t, result[k]) for t, k in sweep if is_number(result[k])]
    if not points:
        refuse_null(result, sweep[0][1], "AP against the IoU threshold")
    fig, (ax,) = new_figure((8.4, 4.2))
    xs, ys = zip(*points)
    ax.plot(xs, ys, marker="o", color=PREDICTION, lw=2, gid="ap", label="AP = TP / (TP + FP + FN)")
    for x, y in points:
        ax.annotate(f"{y:.3f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    if is_number(result.get("ap_mean")):
        ax.axhline(result["ap_mean"], color="#888888", lw=1, ls="--", gid="ap_mean",
                   label=f"mean over the sweep {result['ap_mean']:.4f}")
    if is_number(result.get("match_iou")):
        f1 = result.get("f1")
        ax.axvline(result["match_iou"], color="#cc4125", lw=1, ls=":", gid="match_iou",
                   label=f"match IoU {result['match_iou']:g}" + (f" (F1 {f1:.4f})" if is_number(f1) else ""))
    missing = [f"{t:g}" for t, k in sweep if not is_number(result[k])]
    ax.set(xlabel="IoU threshold", ylabel="AP (TP / (TP + FP + FN))", ylim=(0, 1.05))
    head = title or (f"AP against the IoU threshold: {result.get('n_truth', '?')} truth, "
                     f"{result.get('n_pred', '?')} predicted objects")
    if missing:
        head += f"; null at IoU {', '.join(missing)}"
    ax.set_title(head, fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the points
    ax.grid(alpha=0.25)
    return fig
