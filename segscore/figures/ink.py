"""Ink figures: a target's ROC and precision-recall curves with its floors; an AUC's bootstrap
distribution with its interval and the control; the paired difference of ``--compare``.

The curve points and the draws are not in the result dict (they would swamp the JSON): ask the
API for them, ``score_target(..., return_curves=True)`` and ``score_files(..., return_draws=True)``
(:mod:`segscore.ink.targets`, :mod:`segscore.ink.auc`), and pass them beside the result.
Every artist a test or a caller may look for carries a ``gid`` (``"prediction"``,
``"floor:uniform_random"``, ``"point:prediction"``, ``"auc"``, ``"ci95"``, ``"control"``, ...).
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError
from segscore.figures._base import FLOOR_COLOURS, PREDICTION, is_number, new_figure, refuse_null

__all__ = ["target_curves", "auc_bootstrap", "auc_compare", "auc_draws"]

#: how far the curves' ROC area may sit from the result's roc_auc before they are refused as another result's
_SAME = 1e-9


def _area(x, y) -> float:
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def _operating_point(card: dict):
    """``(fpr, tpr, precision, recall)`` at the card's chosen threshold, or None."""
    keys = ("recall", "precision", "pred_positive_rate", "n_pixels", "n_ink_pixels")
    if not all(is_number(card.get(k)) for k in keys):
        return None
    n, pos = card["n_pixels"], card["n_ink_pixels"]
    neg = n - pos
    if neg <= 0 or pos <= 0:
        return None
    tp = card["recall"] * pos
    fp = card["pred_positive_rate"] * n - tp
    return max(0.0, fp / neg), card["recall"], card["precision"], card["recall"]


def _fmt(v, spec=".4f"):
    return format(v, spec) if is_number(v) else "null"


def target_curves(result: dict, curves: dict):
    """ROC and precision-recall curves of an ink target's prediction beside its floors.

    ``result`` and ``curves`` are what ``score_target(..., return_curves=True)`` returns. The left
    axes draw the ROC curve (``gid="prediction"``), each floor's curve (``"floor:NAME"``) and the
    chance diagonal (``"chance"``); the right axes the precision-recall curves (step-wise, as AP
    sums them) and the prevalence (``"prevalence"``: the AP of a map that knows nothing). The
    prediction's and each floor's chosen-threshold point (``"point:prediction"``,
    ``"point:NAME"``) come from the result's cards. Refuses (ScoreError) a result whose
    ``metrics.roc_auc`` is null (a mask with one class), and curves that are not this result's.
    """
    metrics = result.get("metrics") if isinstance(result, dict) else None
    if not isinstance(metrics, dict) or "roc_auc" not in metrics:
        raise ScoreError("not an ink target result (no metrics.roc_auc); give what score_target returns")
    what = "the ROC and precision-recall curves"
    if metrics["roc_auc"] is None:
        refuse_null(result, "metrics.roc_auc", what)
    points = (curves or {}).get("prediction") if isinstance(curves, dict) else None
    if points is None:
        raise ScoreError("no curve points to draw; score with score_target(..., return_curves=True) and pass the "
                         "curves it returns beside the result")
    area = _area(points["fpr"], points["tpr"])
    if abs(area - metrics["roc_auc"]) > _SAME:
        raise ScoreError(f"the curve points are not this result's (their ROC area {area:.6f} differs from "
                         f"metrics.roc_auc {metrics['roc_auc']:.6f}); pass the curves returned with this result")
    floors = result.get("floors") or {}
    floor_points = (curves.get("floors") or {})
    fig, (roc_ax, pr_ax) = new_figure((11.0, 4.8), ncols=2)
    name = result.get("prediction", "prediction")

    roc_ax.plot([0, 1], [0, 1], color="#bbbbbb", lw=1, ls=":", label="chance (ROC-AUC 0.5)", gid="chance")
    prevalence = metrics.get("positive_rate")
    if is_number(prevalence):
        pr_ax.axhline(prevalence, color="#bbbbbb", lw=1, ls=":", gid="prevalence",
                      label=f"prevalence {prevalence:.4f} (AP of a map that knows nothing)")
    for i, (fname, card) in enumerate(floors.items()):
        colour = FLOOR_COLOURS[i % len(FLOOR_COLOURS)]
        pts = floor_points.get(fname)
        if pts is not None:
            roc_ax.plot(pts["fpr"], pts["tpr"], color=colour, lw=1.2, ls="--", gid=f"floor:{fname}",
                        label=f"floor {fname} (ROC-AUC {_fmt(card.get('roc_auc'))})")
            pr_ax.plot(pts["recall"], pts["precision"], color=colour, lw=1.2, ls="--", drawstyle="steps-post",
                       gid=f"floor:{fname}", label=f"floor {fname} (AP {_fmt(card.get('average_precision'))})")
        op = _operating_point(card)
        if op is not None:
            roc_ax.plot([op[0]], [op[1]], marker="s", ms=6, color=colour, ls="none", gid=f"point:{fname}")
            pr_ax.plot([op[3]], [op[2]], marker="s", ms=6, color=colour, ls="none", gid=f"point:{fname}")
    roc_ax.plot(points["fpr"], points["tpr"], color=PREDICTION, lw=2, gid="prediction",
                label=f"{name} (ROC-AUC {metrics['roc_auc']:.4f})")
    pr_ax.plot(points["recall"], points["precision"], color=PREDICTION, lw=2, drawstyle="steps-post",
               gid="prediction", label=f"{name} (AP {_fmt(metrics.get('average_precision'))}, lift "
                                       f"{_fmt(metrics.get('ap_prevalence_lift'), '.2f')})")
    op = _operating_point(metrics)
    if op is not None:
        at = f"val_f1 {_fmt(metrics.get('val_f1'))} at p >= {_fmt(metrics.get('best_threshold'), '.2f')}"
        roc_ax.plot([op[0]], [op[1]], marker="o", ms=7, color=PREDICTION, ls="none", gid="point:prediction",
                    label=at)
        pr_ax.plot([op[3]], [op[2]], marker="o", ms=7, color=PREDICTION, ls="none", gid="point:prediction",
                   label=at)
    roc_ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="false positive rate (background called ink)",
               ylabel="true positive rate (recall)", title="ROC")
    pr_ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="recall", ylabel="precision", title="precision-recall")
    for ax in (roc_ax, pr_ax):
        ax.legend(fontsize=7, loc="lower right" if ax is roc_ax else "upper right", frameon=False)
        ax.grid(alpha=0.25)
    title = f"{name} vs ink target {result.get('target', '')}"
    if result.get("scoring_enabled") is False:
        title += " (NON-SCORING target: a historical record)"
    fig.suptitle(title, fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# auc: the bootstrap and the paired difference


def _finite(a) -> np.ndarray:
    a = np.asarray(a, np.float64).ravel()
    return a[np.isfinite(a)]


def _bins(n: int) -> int:
    return int(min(60, max(10, n // 8)))


def _check_draws(result: dict, draws, key: str) -> np.ndarray:
    boot = result.get("bootstrap")
    if not isinstance(draws, dict) or draws.get(key) is None:
        raise ScoreError("no bootstrap draws to draw; score with score_files(..., return_draws=True) and pass the "
                         "draws it returns beside the result")
    values = np.asarray(draws[key], np.float64).ravel()
    if values.size != boot.get("draws"):
        raise ScoreError(f"the draws are not this result's ({values.size} draws, the result's bootstrap has "
                         f"{boot.get('draws')}); pass the draws returned with this result")
    return values


def _check_interval(values, ci, path):
    finite = _finite(values)  # the rule of segscore.ink.bootstrap.interval, without loading its kernels
    if finite.size == 0:
        raise ScoreError(f"the draws are not this result's (none is finite, but {path} is {ci}); pass the draws "
                         "returned with this result")
    lo, hi = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
    if abs(round(lo, 4) - ci[0]) > 1e-9 or abs(round(hi, 4) - ci[1]) > 1e-9:
        raise ScoreError(f"the draws are not this result's (their 95 % interval [{lo:.4f}, {hi:.4f}] differs from "
                         f"{path} {ci}); pass the draws returned with this result")


def _need_bootstrap(result: dict):
    if not isinstance(result, dict) or "forward" not in result:
        raise ScoreError("not an auc result (no forward); give what score_files returns")
    boot = result.get("bootstrap")
    if not isinstance(boot, dict):
        raise ScoreError("the result has no bootstrap, so there is no distribution to draw; score with "
                         "--bootstrap N (bootstrap=N; 300 is plenty) or --compare MAP")
    return boot


def _draw_bootstrap(ax, result: dict, draws) -> None:
    boot = _need_bootstrap(result)
    what = "the bootstrap distribution of the AUC"
    if result["forward"].get("auc") is None:
        refuse_null(result, "forward.auc", what)
    if boot.get("ci95", [None])[0] is None:
        refuse_null(result, "bootstrap.ci95", what)
    values = _check_draws(result, draws, "map")
    _check_interval(values, boot["ci95"], "bootstrap.ci95")
    finite = _finite(values)
    lo, hi = boot["ci95"]
    ax.hist(finite, bins=_bins(finite.size), color="#c9d7f8", edgecolor="white", gid="draws",
            label=f"{finite.size} draws ({boot['blocks']} blocks of {boot['block_px']} px)")
    ax.axvspan(lo, hi, color=PREDICTION, alpha=0.12, gid="ci95", label=f"95 % interval [{lo:.4f}, {hi:.4f}]")
    auc = result["forward"]["auc"]
    ax.axvline(auc, color=PREDICTION, lw=2, gid="auc", label=f"map AUC {auc:.4f}")
    control = result.get("control")
    title = "map AUC: block bootstrap"
    if isinstance(boot.get("compare"), dict):
        title += "\n(draws on the pixels both compared maps score)"
    if isinstance(control, dict):
        if control.get("auc") is not None:
            ax.axvline(control["auc"], color="#cc4125", lw=2, ls="--", gid="control",
                       label=f"control AUC {control['auc']:.4f} (gap {auc - control['auc']:+.4f})")
        else:
            title += f"\ncontrol AUC null: {result.get('notes', {}).get('control.auc', 'no reason given')}"
    ax.set_xlabel("AUC")
    ax.set_ylabel("draws")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="best")


def _draw_compare(ax, result: dict, draws) -> None:
    boot = _need_bootstrap(result)
    cmp_ = boot.get("compare")
    if not isinstance(cmp_, dict):
        raise ScoreError("the result has no paired comparison, so there is no difference to draw; score with "
                         "--compare MAP (compare=MAP)")
    what = "the paired-difference distribution"
    if cmp_.get("ci95", [None])[0] is None:
        refuse_null(result, "bootstrap.compare.ci95", what)
    values = _check_draws(result, draws, "difference")
    _check_interval(values, cmp_["ci95"], "bootstrap.compare.ci95")
    finite = _finite(values)
    lo, hi = cmp_["ci95"]
    import os

    other = (result.get("files") or {}).get("compare")
    other = os.path.basename(str(other)) if other else "the compared map"
    ax.hist(finite, bins=_bins(finite.size), color="#d9ead3", edgecolor="white", gid="draws",
            label=f"{finite.size} paired draws")
    ax.axvspan(lo, hi, color="#38761d", alpha=0.12, gid="ci95", label=f"95 % interval [{lo:+.4f}, {hi:+.4f}]")
    ax.axvline(0.0, color="#888888", lw=1, ls=":", gid="zero", label="no difference")
    ax.axvline(cmp_["difference"], color="#38761d", lw=2, gid="difference",
               label=f"difference {cmp_['difference']:+.4f}")
    share = cmp_.get("share_draws_map_not_ahead")
    title = f"map minus {other}: paired block bootstrap"
    if share is not None:
        title += f"\nmap not ahead in {100 * share:.1f} % of draws"
    ax.set_xlabel("AUC difference (map - compared map)")
    ax.set_ylabel("draws")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="best")


def auc_bootstrap(result: dict, draws: dict):
    """The bootstrap distribution of a map's AUC: a histogram of the draws (``gid="draws"``), the
    95 % interval (``"ci95"``), the map's AUC (``"auc"``) and the control's (``"control"``).

    ``result`` and ``draws`` are what ``score_files(..., bootstrap=N, return_draws=True)``
    returns. Refuses (ScoreError) a result without a bootstrap, a null AUC or interval (the
    note says why) and draws that are not this result's."""
    fig, (ax,) = new_figure((6.4, 4.2))
    _draw_bootstrap(ax, result, draws)
    return fig


def auc_compare(result: dict, draws: dict):
    """The paired-difference distribution of ``--compare``: a histogram of ``map - compared``
    over the shared draws (``gid="draws"``), its 95 % interval (``"ci95"``), the difference
    (``"difference"``) and zero (``"zero"``). Refuses a result without a comparison or with a
    null interval."""
    fig, (ax,) = new_figure((6.4, 4.2))
    _draw_compare(ax, result, draws)
    return fig


def auc_draws(result: dict, draws: dict):
    """What ``segscore auc --plot`` draws: the bootstrap distribution, and beside it the paired
    difference when the result has a comparison (:func:`auc_bootstrap`, :func:`auc_compare`)."""
    paired = isinstance((result.get("bootstrap") or {}).get("compare"), dict) if isinstance(result, dict) else False
    fig, axes = new_figure((12.0 if paired else 6.4, 4.2), ncols=2 if paired else 1)
    _draw_bootstrap(axes[0], result, draws)
    if paired:
        _draw_compare(axes[1], result, draws)
    return fig
