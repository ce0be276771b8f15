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
    fig, (roc_ax, pr_ax) = new_figure((11.0, 6.0), ncols=2)
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
    roc_ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="false positive rate (background called ink)",
               ylabel="true positive rate (recall)", title="ROC")
    pr_ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="recall", ylabel="precision", title="precision-recall")
    for ax in (roc_ax, pr_ax):  # below the axes: never over a curve or a chosen-threshold point
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False, ncols=2)
        ax.grid(alpha=0.25)
    title = f"{name} vs ink target {result.get('target', '')}"
    if result.get("scoring_enabled") is False:
        title += " (NON-SCORING target: a historical record)"
    fig.suptitle(title, fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# auc: the bootstrap and the paired difference


def _finish_hist(hist, xlabel: str, title: str, handles):
    """Label a bootstrap histogram, title it and put its legend beside it (off the data)."""
    hist.set_xlabel(xlabel)
    hist.set_ylabel("bootstrap draws")
    hist.set_title(title, fontsize=9)
    kw = dict(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if handles:
        hist.legend(*handles, **kw)
    else:
        hist.legend(**kw)
    return hist


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


#: the least share of the histogram's x axis the draws must span. A reference value (the control's
#: AUC, zero difference) that would squeeze them below it is not put on that axis (each bin would be
#: a pixel or two wide) but on a strip below it that shows the whole scale.
MIN_SHARE = 0.4


def _layout(finite, keep, refs) -> tuple[float, float, dict]:
    """``(lo, hi, off)``: the histogram's x range (padded) holding the draws, the values of
    ``keep`` and every reference (``{gid: value}``) that does not squeeze the draws under
    :data:`MIN_SHARE` of it; ``off``: the references left for the strip."""
    lo = min(float(finite.min()), *keep)
    hi = max(float(finite.max()), *keep)
    spread = float(finite.max() - finite.min())
    off = {}
    for gid, v in refs.items():
        if v is None:
            continue
        nlo, nhi = min(lo, v), max(hi, v)
        if lo <= v <= hi or spread >= MIN_SHARE * (nhi - nlo):
            lo, hi = nlo, nhi
        else:
            off[gid] = v
    pad = 0.06 * (hi - lo) if hi > lo else max(1e-3, 0.01 * abs(hi))
    return lo - pad, hi + pad, off


def _axes(fig, spec, finite, keep, refs):
    """``(histogram axes, strip axes or None, off)`` in column ``spec = (gridspec, column)`` of
    the figure's 2-row grid: the strip (the lower row, a fifth of the height) only when a
    reference is off the histogram's scale, else the histogram takes both rows."""
    lo, hi, off = _layout(finite, keep, refs)
    grid, col = spec
    if off:
        hist, strip = fig.add_subplot(grid[0, col]), fig.add_subplot(grid[1, col])
    else:
        hist, strip = fig.add_subplot(grid[:, col]), None
    hist.set_xlim(lo, hi)
    return hist, strip, off


def _histogram(ax, finite, colour, edge, label):
    ax.hist(finite, bins=_bins(finite.size), color=colour, edgecolor=edge, linewidth=0.4, gid="draws", label=label)


def _strip(strip, hist, finite, marks, xlabel, colour):
    """The whole scale under a histogram: the histogram's range (``gid="zoom"``), the draws' range
    (``"draws_range"``) and each mark ``(value, colour, ls, gid, text)`` as a line with its text."""
    values = [float(finite.min()), float(finite.max())] + [m[0] for m in marks]
    lo, hi = min(values), max(values)
    pad = 0.08 * (hi - lo) if hi > lo else 0.01
    h0, h1 = hist.get_xlim()
    strip.axvspan(h0, h1, color="#eeeeee", gid="zoom", label="the histogram's range")
    strip.axvspan(float(finite.min()), float(finite.max()), ymin=0.15, ymax=0.55, color=colour, gid="draws_range")
    for value, colour, ls, gid, text in marks:
        strip.axvline(value, color=colour, lw=2, ls=ls, gid=gid)
        near_right = value > lo + 0.7 * (hi - lo)
        strip.text(value, 0.62, f" {text} ", color=colour, fontsize=7, ha="right" if near_right else "left",
                   va="bottom", transform=strip.get_xaxis_transform())
    strip.set_xlim(lo - pad, hi + pad)
    strip.set_ylim(0, 1)
    strip.set_yticks([])
    strip.set_xlabel(xlabel + " (whole scale; grey: the histogram's range, bar: the draws)")


def _draw_bootstrap(fig, spec, result: dict, draws):
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
    auc = result["forward"]["auc"]
    control = result.get("control")
    c_auc = control.get("auc") if isinstance(control, dict) else None
    hist, strip, off = _axes(fig, spec, finite, [lo, hi, auc], {"control": c_auc})
    _histogram(hist, finite, "#8fb0f0", "#3d6fd0",
               f"{finite.size} draws ({boot['blocks']} blocks of {boot['block_px']} px)")
    hist.axvspan(lo, hi, color=PREDICTION, alpha=0.12, gid="ci95", label=f"95 % interval [{lo:.4f}, {hi:.4f}]")
    hist.axvline(auc, color=PREDICTION, lw=2, gid="auc", label=f"map AUC {auc:.4f}")
    title = "map AUC: block bootstrap"
    if isinstance(boot.get("compare"), dict):
        title += "\n(draws on the pixels both compared maps score)"
    handles = None
    if c_auc is not None:
        text = f"control AUC {c_auc:.4f} (gap {auc - c_auc:+.4f})"
        if "control" in off:
            _strip(strip, hist, finite, [(auc, PREDICTION, "-", "auc", f"map {auc:.4f}"),
                                         (c_auc, "#cc4125", "--", "control", f"control {c_auc:.4f}")], "AUC",
                   "#8fb0f0")
            title += f"\ncontrol AUC {c_auc:.4f} is off this scale: marked on the strip below"
            handles = hist.get_legend_handles_labels()
            (line,) = [ln for ln in strip.lines if ln.get_gid() == "control"]
            handles = (handles[0] + [line], handles[1] + [text])
        else:
            hist.axvline(c_auc, color="#cc4125", lw=2, ls="--", gid="control", label=text)
    elif isinstance(control, dict):
        title += f"\ncontrol AUC null: {result.get('notes', {}).get('control.auc', 'no reason given')}"
    return _finish_hist(hist, "AUC", title, handles)


def _draw_compare(fig, spec, result: dict, draws):
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
    diff = cmp_["difference"]
    hist, strip, off = _axes(fig, spec, finite, [lo, hi, diff], {"zero": 0.0})
    _histogram(hist, finite, "#a8d08d", "#38761d", f"{finite.size} paired draws")
    hist.axvspan(lo, hi, color="#38761d", alpha=0.12, gid="ci95", label=f"95 % interval [{lo:+.4f}, {hi:+.4f}]")
    hist.axvline(diff, color="#38761d", lw=2, gid="difference", label=f"difference {diff:+.4f}")
    share = cmp_.get("share_draws_map_not_ahead")
    title = f"map minus {other}: paired block bootstrap"
    if share is not None:
        title += f"\nmap not ahead in {100 * share:.1f} % of draws"
    handles = None
    if "zero" in off:
        _strip(strip, hist, finite, [(diff, "#38761d", "-", "difference", f"difference {diff:+.4f}"),
                                     (0.0, "#888888", ":", "zero", "no difference")], "AUC difference",
               "#a8d08d")
        title += "\nzero is off this scale: marked on the strip below"
        got = hist.get_legend_handles_labels()
        (line,) = [ln for ln in strip.lines if ln.get_gid() == "zero"]
        handles = (got[0] + [line], got[1] + ["no difference"])
    else:
        hist.axvline(0.0, color="#888888", lw=1, ls=":", gid="zero", label="no difference")
    return _finish_hist(hist, "AUC difference (map - compared map)", title, handles)


def _figure(figsize, ncols=1):
    from segscore.figures._base import require_matplotlib

    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    grid = fig.add_gridspec(2, ncols, height_ratios=(4, 1))
    return fig, [(grid, col) for col in range(ncols)]


def auc_bootstrap(result: dict, draws: dict):
    """The bootstrap distribution of a map's AUC: a histogram of the draws (``gid="draws"``), the
    95 % interval (``"ci95"``), the map's AUC (``"auc"``) and the control's (``"control"``).

    The histogram's x axis holds the draws, the interval and the map's AUC; a control whose AUC
    would squeeze the draws under :data:`MIN_SHARE` of that axis (the usual case: a control near
    0.5, a map near 0.8, draws a few hundredths wide) is drawn on a strip below it that shows the
    whole scale (``"zoom"``: the histogram's range, ``"draws_range"``, ``"auc"``, ``"control"``),
    so the distribution stays readable whatever the control's value.

    ``result`` and ``draws`` are what ``score_files(..., bootstrap=N, return_draws=True)``
    returns. Refuses (ScoreError) a result without a bootstrap, a null AUC or interval (the
    note says why) and draws that are not this result's."""
    fig, spec = _figure((8.4, 4.6))
    _draw_bootstrap(fig, spec[0], result, draws)
    return fig


def auc_compare(result: dict, draws: dict):
    """The paired-difference distribution of ``--compare``: a histogram of ``map - compared``
    over the shared draws (``gid="draws"``), its 95 % interval (``"ci95"``), the difference
    (``"difference"``) and zero (``"zero"``; on a strip below when it would squeeze the draws,
    as the control in :func:`auc_bootstrap`). Refuses a result without a comparison or with a
    null interval."""
    fig, spec = _figure((8.4, 4.6))
    _draw_compare(fig, spec[0], result, draws)
    return fig


def auc_draws(result: dict, draws: dict):
    """What ``segscore auc --plot`` draws: the bootstrap distribution, and beside it the paired
    difference when the result has a comparison (:func:`auc_bootstrap`, :func:`auc_compare`)."""
    paired = isinstance((result.get("bootstrap") or {}).get("compare"), dict) if isinstance(result, dict) else False
    fig, spec = _figure((16.0 if paired else 8.4, 4.6), ncols=2 if paired else 1)
    _draw_bootstrap(fig, spec[0], result, draws)
    if paired:
        _draw_compare(fig, spec[1], result, draws)
    return fig
