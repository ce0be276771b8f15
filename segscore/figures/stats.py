"""Figures of a benchmark analysis (:func:`segscore.stats.analyse`), challengeR's three views.

- :func:`interval_plot`: per model, its statistic with the bootstrap interval (best first), and the
  floors (the mean over the cases of each floor the results folder has for the metric) as lines;
- :func:`significance_map`: the pairs, row ``a`` column ``b`` filled where ``a`` is significantly
  better than ``b`` (the adjusted one-sided p at most alpha), models in the ranking's order;
- :func:`blob_plot`: each model's rank distribution over the bootstrap draws, a disc per (model,
  rank) whose area is the share of draws, the full-data rank marked.

Each takes the analysis dict and the ``metric`` / ``task`` to draw (default the first), and returns a
:class:`matplotlib.figure.Figure` (never shown). The ``*_data`` functions give what is drawn as
plain data, so that tests (and notebooks) read the numbers behind each figure.
"""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import new_figure

__all__ = ["interval_plot", "significance_map", "blob_plot", "interval_data", "significance_data", "blob_data",
           "draw_for"]


def _pick(result, part, metric, task):
    sec = result.get(part)
    if not sec or not sec.get("rows"):
        flag = {"comparisons": "compare"}.get(part, part)
        raise ScoreError(f"cannot draw: the analysis has no {part} (ask for them: --{flag})")
    rows = sec["rows"]
    metric = metric or rows[0]["metric"]
    task = task or rows[0]["task"]
    picked = [r for r in rows if r["metric"] == metric and r["task"] == task]
    if not picked:
        raise ScoreError(f"cannot draw: no {part} rows for metric {metric!r} in task {task!r}")
    return picked, metric, task


def interval_data(result, metric=None, task=None) -> dict:
    """``{"metric", "task", "models", "estimate", "low", "high", "floors"}``, best model first (the
    metric's direction); a None bound stays None (drawn without its bar)."""
    rows, metric, task = _pick(result, "intervals", metric, task)
    larger = result["params"]["directions"][metric] == "larger"
    rows = sorted(rows, key=lambda r: (r["estimate"] is None, -(r["estimate"] or 0) if larger else (r["estimate"] or 0)))
    floors = ((result.get("intervals") or {}).get("floors") or {}).get(metric) or {}
    return {"metric": metric, "task": task, "models": [r["model"] for r in rows],
            "estimate": [r["estimate"] for r in rows], "low": [r["low"] for r in rows],
            "high": [r["high"] for r in rows], "floors": dict(floors)}


def interval_plot(result, metric=None, task=None):
    """Each model's statistic and interval (:func:`interval_data`), floors as dashed lines."""
    d = interval_data(result, metric, task)
    fig, (ax,) = new_figure((6.4, 0.35 * len(d["models"]) + 1.6))
    y = list(range(len(d["models"])))[::-1]
    for yi, est, lo, hi in zip(y, d["estimate"], d["low"], d["high"]):
        if est is None:
            continue
        ax.plot([est], [yi], "o", color="C0", zorder=3)
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [yi, yi], "-", color="C0", lw=2, solid_capstyle="butt", label="_interval")
    for k, (name, value) in enumerate(sorted(d["floors"].items())):
        if value is not None:
            ax.axvline(value, ls="--", color=f"C{k + 1}", label=f"{name} (floor)")
    ax.set_yticks(y, d["models"])
    stat = result.get("intervals", {}).get("params", {})
    ax.set_xlabel(f"{d['metric']}: {stat.get('statistic', '')} with {stat.get('level', '')} "
                  f"{stat.get('interval', '')} interval")
    if d["task"] != "all":
        ax.set_title(f"task {d['task']}")
    if d["floors"]:
        ax.legend(loc="best", fontsize="small")
    return fig


def significance_data(result, metric=None, task=None) -> dict:
    """``{"models" (best first by mean difference wins), "significant": k x k 0/1 (row better than
    column), "adjust", "alpha"}``."""
    rows, metric, task = _pick(result, "comparisons", metric, task)
    models = []
    for r in rows:
        for m in (r["a"], r["b"]):
            if m not in models:
                models.append(m)
    wins = {m: sum(bool(r["win"]) for r in rows if r["a"] == m) for m in models}
    models.sort(key=lambda m: -wins[m])
    pos = {m: i for i, m in enumerate(models)}
    sig = [[0] * len(models) for _ in models]
    for r in rows:
        sig[pos[r["a"]]][pos[r["b"]]] = int(bool(r["win"]))
    p = result["comparisons"]["params"]
    return {"metric": metric, "task": task, "models": models, "significant": sig, "adjust": p["adjust"],
            "alpha": p["alpha"]}


def significance_map(result, metric=None, task=None):
    """challengeR's significance map of :func:`significance_data`: a filled cell is a win of the row."""
    import numpy as np

    d = significance_data(result, metric, task)
    k = len(d["models"])
    fig, (ax,) = new_figure((0.4 * k + 2.4, 0.4 * k + 1.8))
    ax.imshow(np.array(d["significant"], float), cmap="Greys", vmin=0, vmax=1.6)
    ax.set_xticks(range(k), d["models"], rotation=90)
    ax.set_yticks(range(k), d["models"])
    ax.set_xlabel("b")
    ax.set_ylabel("a (filled: a significantly better than b)")
    ax.set_title(f"{d['metric']}: one-sided tests, {d['adjust']} adjusted, alpha {d['alpha']}", fontsize="small")
    return fig


def blob_data(result, metric=None, task=None, method=None) -> dict:
    """``{"models" (by full-data rank), "ranks": 1..k, "share": k x k (model, rank: share of draws),
    "rank_full", "method"}``; ``method``: the ranking bootstrapped (a ``--stability-method``'s
    rows' ``method``, e.g. ``"test_then_rank"``; default the first the analysis holds)."""
    rows, metric, task = _pick(result, "stability", metric, task)
    methods = [r.get("method") for r in rows]
    method = method or methods[0]
    if method not in methods:
        raise ScoreError(f"cannot draw: no stability rows of ranking {method!r} (it has "
                         f"{', '.join(dict.fromkeys(str(m) for m in methods))})")
    rows = sorted((r for r in rows if r.get("method") == method), key=lambda r: r["rank_full"])
    draws = result["stability"]["counts"]["draws"]
    return {"metric": metric, "task": task, "method": method, "models": [r["model"] for r in rows],
            "ranks": list(range(1, len(rows) + 1)), "share": [[c / draws for c in r["rank_counts"]] for r in rows],
            "rank_full": [r["rank_full"] for r in rows]}


def blob_plot(result, metric=None, task=None, method=None):
    """The blob plot of :func:`blob_data`: disc area proportional to the share of draws; a cross at
    the full-data rank."""
    d = blob_data(result, metric, task, method)
    k = len(d["models"])
    fig, (ax,) = new_figure((0.45 * k + 2.2, 0.45 * k + 1.6))
    xs, ys, ss = [], [], []
    for i, shares in enumerate(d["share"]):
        for r, s in zip(d["ranks"], shares):
            if s > 0:
                xs.append(i)
                ys.append(r)
                ss.append(s)
    ax.scatter(xs, ys, s=[600 * s for s in ss], color="C0", alpha=0.7)
    ax.scatter(range(k), d["rank_full"], marker="x", color="k", zorder=3)
    ax.set_xticks(range(k), d["models"], rotation=90)
    ax.set_ylabel("rank over the bootstrap draws")
    ax.set_ylim(k + 0.7, 0.3)
    ax.set_title(f"{d['metric']}: rank distributions ({d['method']})", fontsize="small")
    return fig


def draw_for(result):
    """The first figure the analysis can fill: intervals, else the significance map, else the blobs."""
    if result.get("intervals"):
        return interval_plot(result)
    if result.get("comparisons"):
        return significance_map(result)
    if result.get("stability"):
        return blob_plot(result)
    raise ScoreError("cannot draw: the analysis has no intervals, comparisons or stability")
