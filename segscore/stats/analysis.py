"""``analyse``: intervals, paired comparisons, rankings and rank stability of a benchmark suite.

One function does the whole analysis of a long table (:mod:`segscore.stats.table`): per task and
metric, each model's statistic with its bootstrap interval (``intervals``), every ordered pair of
models compared on their common cases (``comparisons``), challengeR's rankings and their consensus
over tasks (``rankings``), and the ranks over the same bootstrap draws (``stability``). The result
is a plain dict (JSON-ready: no NaN, a null bound has a ``notes`` entry) with one key per part
asked, each holding its ``params`` (the seed among them), ``counts`` and ``rows``;
:meth:`Analysis.to_frame` and :meth:`Analysis.rows` give a part's rows as a table.

Orientation: every metric is larger-better unless named in ``smaller_better`` (or, with
``smaller_better=None``, declared smaller-better in :data:`segscore.metrics.missing.SMALLER_BETTER`).
"Better" in a comparison, a test and a rank follows it; a difference is always ``a - b`` in the
metric's own units.

Missing values (an empty cell, or no row for a case another model has): ``missing="null"`` leaves
them out (each statistic is over the cases a model has, a pair is compared on its common cases,
a case ranks only the models it has: challengeR's ``na.treat="na.rm"``), with the counts stated;
``missing="worst"`` counts each as its metric's worst value (``worst={metric: value}``: challengeR's
``na.treat=value``).
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError
from segscore.stats import paired, ranking, resampling
from segscore.stats.table import build_suite

#: the parts of an analysis, in the order they are reported
PARTS = ("intervals", "comparisons", "rankings", "stability")
#: ``--stability-method`` names as the rankings' method names
STABILITY_NAMES = {"rank-aggregate": "rank_then_aggregate", "test-rank": "test_then_rank"}


class Analysis(dict):
    """The result of :func:`analyse`: a dict (what ``--json`` prints) with table helpers."""

    def rows(self, part: str) -> list:
        """The rows of one part (``intervals``, ``comparisons``, ``rankings``, ``consensus``,
        ``stability``, ``kendall``) as flat dicts (lists joined by ``;`` for CSV)."""
        if part == "consensus":
            found = self.get("rankings", {}).get("consensus", [])
        elif part == "kendall":
            found = self.get("stability", {}).get("kendall", [])
        elif part in PARTS:
            found = self.get(part, {}).get("rows", [])
        else:
            raise ScoreError(f"no part {part!r}; parts: {', '.join(PARTS + ('consensus', 'kendall'))}")
        return [{k: (";".join(map(str, v)) if isinstance(v, list) else v) for k, v in r.items()} for r in found]

    def to_frame(self, part: str = "intervals"):
        """One part's rows as a pandas DataFrame (pandas is imported here only)."""
        import pandas as pd

        return pd.DataFrame(self.rows(part))

    def to_csv(self, path, part: str) -> None:
        """Write one part's rows as CSV (a header, then a row each)."""
        import csv

        rows = self.rows(part)
        fields: list = []
        for r in rows:
            fields += [k for k in r if k not in fields]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)

    def parts(self) -> list:
        """The parts this analysis holds, with the sub-tables (consensus, kendall) where present."""
        out = []
        for p in PARTS:
            if p in self:
                out.append(p)
                if p == "rankings" and self[p].get("consensus"):
                    out.append("consensus")
                if p == "stability":
                    out.append("kendall")
        return out

    def to_markdown(self) -> str:
        """A text summary: one Markdown table per part (numbers rounded to 4 decimals)."""
        out = []
        for part in self.parts():
            rows = self.rows(part)
            if not rows:
                continue
            cols = list(rows[0])
            out.append(f"## {part}\n")
            out.append("| " + " | ".join(cols) + " |")
            out.append("|" + "---|" * len(cols))
            for r in rows:
                out.append("| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |")
            out.append("")
        if self.get("notes"):
            out.append("notes:")
            out += [f"- {k}: {v}" for k, v in self["notes"].items()]
        return "\n".join(out)


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) >= 1e4 or (v != 0 and abs(v) < 1e-3) else f"{v:.4f}"
    return str(v)


def _num(x):
    """A float for JSON: None for NaN."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _check(*, level, resamples, seed, alpha, permutations, statistic, interval, adjust, test, missing):
    from segscore.errors import whole_number
    from segscore.metrics.missing import check_policy

    if not isinstance(level, (int, float)) or isinstance(level, bool) or not 0 < level < 1:
        raise ScoreError(f"--level {level!r}: give a confidence level between 0 and 1 (e.g. 0.95)")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ScoreError(f"--alpha {alpha!r}: give a significance level between 0 and 1 (e.g. 0.05)")
    whole_number(resamples, "--resamples", 1)
    whole_number(seed, "--seed", 0)
    whole_number(permutations, "--permutations", 1)
    for name, v, allowed in (("--statistic", statistic, resampling.STATISTICS),
                             ("--interval", interval, resampling.INTERVALS), ("--adjust", adjust, paired.ADJUST),
                             ("--test", test, paired.TESTS)):
        if v not in allowed:
            raise ScoreError(f"{name} {v!r}: give one of {', '.join(allowed)}")
    return check_policy(missing)


def analyse(table, *, case: str, by: str, metric, task: str | None = None, cluster_by: str | None = None,
            smaller_better=None, missing: str | None = "null", worst: dict | None = None,
            intervals: bool = False, statistic: str = "mean", level: float = 0.95, resamples: int = 10_000,
            seed: int = 0, interval: str = "percentile", compare: bool = False, adjust: str = "holm",
            alpha: float = 0.05, test: str = "wilcoxon", permutations: int = 9_999, rank: bool = False,
            stability: bool = False, stability_method="aggregate", stability_cases: str = "challenger") -> Analysis:
    """Intervals, paired comparisons, rankings and rank stability of a benchmark suite.

    Parameters
    ----------
    table : path, dict of columns, list of row dicts or pandas DataFrame
        The long table: one row per (task,) case and model (:mod:`segscore.stats.table`).
    case, by : str
        The columns naming the case and the model.
    metric : str or list of str
        The metric column(s); each is analysed on its own, over the same draws.
    task, cluster_by : str, optional
        A column naming the task (each task is analysed on its own, its draws from
        ``default_rng(seed + task index)``, tasks in natural order), and one naming the cluster a
        case belongs to (the bootstrap then draws clusters).
    smaller_better : list of str, optional
        Metrics where smaller is better; None: the registry's declarations
        (:func:`segscore.metrics.missing.larger_is_better`).
    missing, worst
        ``"null"`` (leave a missing value out, counted) or ``"worst"`` (count it as ``worst[metric]``;
        every metric with a missing value needs one).
    intervals, compare, rank, stability : bool
        The parts to compute (none asked: intervals).
    statistic, level, resamples, seed, interval
        The bootstrap: ``"mean"|"median"``, the confidence level, the draws, their seed, and
        ``"percentile"|"bca"``.
    adjust, alpha, test, permutations
        Comparisons: the adjustment over each task's k(k-1) ordered pairs (R's ``p.adjust``; a win is
        ``p_adjusted <= alpha``), ``"wilcoxon"`` (R's one-sided paired ``wilcox.test``, exact=FALSE) or
        ``"permutation"`` (the sign-flip test, ``permutations`` sign patterns, exact when ``2**n``
        fit).

    stability_method, stability_cases
        The rankings whose stability is bootstrapped: ``"aggregate"`` (aggregate-then-rank by
        ``statistic``, over the intervals' draws), ``"rank-aggregate"`` (rank-then-aggregate),
        ``"test-rank"`` (test-then-rank: one-sided Wilcoxon wins at alpha 0.05, unadjusted), a
        comma-separated list of them or ``"all"``; and how a case drawn k times enters a resample
        of the last two: ``"challenger"`` (k rows under one case id, as challengeR's ``bootstrap``:
        ranked together within the case, paired once) or ``"distinct"`` (k cases). Every method
        reads the same draws (:func:`segscore.stats.resampling.ranking_draws`).

    Returns
    -------
    Analysis
        A dict: ``params``, ``counts``, ``notes``, ``warnings`` and one key per part asked.
    """
    missing = _check(level=level, resamples=resamples, seed=seed, alpha=alpha, permutations=permutations,
                     statistic=statistic, interval=interval, adjust=adjust, test=test, missing=missing)
    metrics = [m for m in (metric.split(",") if isinstance(metric, str) else list(metric)) if m]
    st_methods = resampling.stability_methods(stability_method)
    if not stability and (st_methods != ["aggregate"] or stability_cases != "challenger"):
        raise ScoreError("--stability-method and --stability-cases say how --stability bootstraps the rankings; "
                         "give --stability too")
    if stability_cases not in resampling.STABILITY_CASES:
        raise ScoreError(f"--stability-cases {stability_cases!r}: give one of "
                         f"{', '.join(resampling.STABILITY_CASES)}")
    if not (intervals or compare or rank or stability):
        intervals = True
    suite = build_suite(table, case=case, by=by, metrics=metrics, task=task, cluster_by=cluster_by)
    if smaller_better is None:
        from segscore.metrics.missing import larger_is_better

        larger = {m: larger_is_better(m) for m in metrics}
    else:
        sb = [s for s in (smaller_better.split(",") if isinstance(smaller_better, str) else smaller_better) if s]
        unknown = [s for s in sb if s not in metrics]
        if unknown:
            raise ScoreError(f"--smaller-better {','.join(unknown)}: not among the metrics ({', '.join(metrics)}); "
                             "name metric columns")
        larger = {m: m not in sb for m in metrics}
    worst = dict(worst or {})
    notes: dict = {}
    imputed = {m: 0 for m in metrics}
    n_missing = {m: 0 for m in metrics}
    for t in suite.tasks:
        for m in metrics:
            miss = np.isnan(t.values[m])
            n_missing[m] += int(miss.sum())
            if missing == "worst" and miss.any():
                if m not in worst or worst[m] is None:
                    raise ScoreError(f"{suite.source}: --missing worst needs the worst value of {m!r} "
                                     f"({int(miss.sum())} missing in task {t.name!r}); give --worst {m}=VALUE")
                t.values[m] = np.where(miss, float(worst[m]), t.values[m])
                imputed[m] += int(miss.sum())
    params = {"source": suite.source, "case": case, "by": by, "metrics": metrics, "task": task,
              "cluster_by": cluster_by, "missing": missing,
              "worst": {m: worst[m] for m in metrics if m in worst} if missing == "worst" else None,
              "directions": {m: "larger" if larger[m] else "smaller" for m in metrics},
              "tasks": [t.name for t in suite.tasks], "seed": seed}
    out = Analysis(params=params,
                   counts={"rows": suite.n_rows, "tasks": len(suite.tasks), "models": len(suite.models),
                           "missing": n_missing, "imputed": imputed if missing == "worst" else None},
                   notes=notes, warnings=[])
    boot = intervals or compare or (stability and "aggregate" in st_methods)
    iv_rows, cmp_rows, rk_rows, st_rows, kd_rows = [], [], [], [], []
    task_ranks: dict = {}
    for t in suite.tasks:
        k = len(t.models)
        pairs = [(a, b) for a in range(k) for b in range(a + 1, k)] if compare else []
        cols, layout, derived = [], [], []
        for m in metrics:
            v = t.values[m]
            for i in range(k):
                cols.append(v[i])
                layout.append(("model", m, i))
            complete = ~np.isnan(v).any(axis=1)
            for a, b in pairs:
                if statistic == "mean" and complete[a] and complete[b]:
                    # every case on both sides: a draw's mean difference is the difference of the
                    # means (the same cases, the same count), read off the models' draws
                    derived.append(("pair", m, (a, b)))
                    continue
                cols.append(v[a] - v[b])  # NaN where either lacks the case: the common cases only
                layout.append(("pair", m, (a, b)))
        theta_b = est = jack = None
        if boot and cols:
            c = resampling.Columns(np.vstack(cols).T, t.unit_of_case, len(t.units))
            rng = np.random.default_rng(seed + t.index)
            theta_b = c.resample(statistic, rng, resamples)
            est = c.estimate(statistic)
            jack = c.jackknife(statistic) if interval == "bca" else None
            if derived:
                pos = {key: j for j, key in enumerate(layout)}
                extra_t, extra_e, extra_j = [], [], []
                for key in derived:
                    _, m, (a, b) = key
                    ja, jb = pos[("model", m, a)], pos[("model", m, b)]
                    extra_t.append(theta_b[:, ja] - theta_b[:, jb])
                    d = t.values[m][a] - t.values[m][b]
                    extra_e.append(math.fsum(d) / d.size)
                    if jack is not None:
                        extra_j.append(jack[:, ja] - jack[:, jb])
                    layout.append(key)
                theta_b = np.hstack([theta_b, np.array(extra_t).T])
                est = np.concatenate([est, extra_e])
                if jack is not None:
                    jack = np.hstack([jack, np.array(extra_j).T])
        bounds = {}
        if theta_b is not None and (intervals or compare):
            for j, key in enumerate(layout):
                if key[0] == "model" and not intervals:
                    continue
                lo, hi, why = resampling.interval(theta_b[:, j], est[j], None if jack is None else jack[:, j],
                                                  level=level, method=interval)
                bounds[key[1:]] = (lo, hi, why, int(np.count_nonzero(np.isnan(theta_b[:, j]))))
        for m in metrics:
            v = t.values[m]
            lb = larger[m]
            if intervals:
                for i, model in enumerate(t.models):
                    lo, hi, why, nodraw = bounds[(m, i)]
                    have = ~np.isnan(v[i])
                    row = {"task": t.name, "metric": m, "model": model, "statistic": statistic,
                           "estimate": _num(ranking.aggregate(v[i:i + 1], statistic)[0]), "low": lo, "high": hi,
                           "level": level, "interval": interval, "n_cases": int(have.sum()),
                           "n_missing": int((~have).sum()) if missing == "null" else 0,
                           "n_units": len(t.units), "draws_without_value": nodraw}
                    if why:
                        notes[f"intervals.rows[{len(iv_rows)}].low"] = why
                    iv_rows.append(row)
            p_raw = None
            if compare or rank:
                p_raw = [[None] * k for _ in range(k)]
                tests = {}
                for a in range(k):
                    for b in range(k):
                        if a == b:
                            continue
                        both = ~np.isnan(v[a]) & ~np.isnan(v[b])
                        x, y = (v[a][both], v[b][both]) if lb else (v[b][both], v[a][both])
                        w = paired.wilcoxon_greater(x, y)
                        p_raw[a][b] = w["p"]
                        tests[(a, b)] = (w, x, y, int(both.sum()))
            if compare:
                order = [(a, b) for a in range(k) for b in range(k) if a != b]
                if test == "wilcoxon":
                    pv = [tests[ab][0]["p"] for ab in order]
                    stat = [tests[ab][0]["V"] for ab in order]
                    exact = [None] * len(order)
                else:
                    res = [paired.sign_flip_greater(tests[ab][1], tests[ab][2], permutations=permutations, seed=seed)
                           for ab in order]
                    pv = [r["p"] for r in res]
                    stat = [r["statistic"] for r in res]
                    exact = [r["exact"] for r in res]
                adj = paired.p_adjust(pv, adjust)
                for n_o, (a, b) in enumerate(order):
                    w, _, _, n_common = tests[(a, b)]
                    if a < b:
                        lo, hi, why, nodraw = bounds[(m, (a, b))]
                        d_est = est[layout.index(("pair", m, (a, b)))]
                    else:
                        lo0, hi0, why, nodraw = bounds[(m, (b, a))]
                        lo, hi = (None if hi0 is None else -hi0), (None if lo0 is None else -lo0)
                        d_est = -est[layout.index(("pair", m, (b, a)))]
                    row = {"task": t.name, "metric": m, "a": t.models[a], "b": t.models[b], "n_common": n_common,
                           "difference": _num(d_est), "low": lo, "high": hi, "test": test,
                           "sided": "one-sided: a better than b", "statistic": _num(stat[n_o]),
                           "n_nonzero": w["n_nonzero"] if test == "wilcoxon" else None,
                           "exact": exact[n_o], "p": _num(pv[n_o]), "p_adjusted": _num(adj[n_o]),
                           "adjust": adjust, "win": None if adj[n_o] is None else bool(adj[n_o] <= alpha)}
                    idx = len(cmp_rows)
                    if why:
                        notes[f"comparisons.rows[{idx}].low"] = why
                    if pv[n_o] is None:
                        notes[f"comparisons.rows[{idx}].p"] = "no common case: the test is undefined"
                    cmp_rows.append(row)
            if rank:
                per_method = {}
                for meth in ranking.METHODS:
                    if meth.startswith("aggregate_"):
                        val = ranking.aggregate(v, meth.split("_")[1])
                        rk = ranking.rank_min(val, larger_better=lb)
                        extra = [None] * k
                    elif meth == "rank_then_aggregate":
                        val, rk, counts = ranking.rank_then_aggregate(v, larger_better=lb)
                        extra = [counts[i].tolist() for i in range(k)]
                    else:
                        val = ranking.wins(p_raw, 0.05).astype(float)
                        rk = ranking.rank_min(val, larger_better=True)
                        extra = [None] * k
                    per_method[meth] = rk
                    for i, model in enumerate(t.models):
                        row = {"task": t.name, "metric": m, "method": meth, "model": model, "value": _num(val[i]),
                               "rank": int(rk[i])}
                        if meth == "rank_then_aggregate":
                            row["case_rank_counts"] = extra[i]
                        rk_rows.append(row)
                task_ranks[(t.name, m)] = (t.models, per_method)
            for st_method in (st_methods if stability else ()):
                if st_method == "aggregate":
                    cols_m = [j for j, key in enumerate(layout) if key[0] == "model" and key[1] == m]
                    # a view when the models are the leading columns (one metric, no pairs): no copy
                    tb_m = theta_b[:, :k] if cols_m == list(range(k)) else theta_b[:, cols_m]
                    s = resampling.stability(tb_m, est[cols_m], larger_better=lb)
                    name = f"aggregate_{statistic}"
                else:
                    tb, hat, direction = resampling.ranking_draws(
                        st_method, v, larger_better=lb, unit_of_case=t.unit_of_case, n_units=len(t.units),
                        rng=np.random.default_rng(seed + t.index), resamples=resamples, cases=stability_cases)
                    s = resampling.stability(tb, hat, larger_better=direction)
                    del tb
                    name = STABILITY_NAMES[st_method]
                for i, model in enumerate(t.models):
                    st_rows.append({"task": t.name, "metric": m, "method": name, "model": model,
                                    "rank_full": int(s["rank_full"][i]), "share_first": float(s["share_first"][i]),
                                    "rank_counts": s["rank_counts"][i].tolist()})
                kd_rows.append({"task": t.name, "metric": m, "method": name, "draws": resamples,
                                "tau_median": s["tau_median"], "tau_q1": s["tau_q1"], "tau_q3": s["tau_q3"],
                                "n_tau_undefined": s["n_tau_undefined"]})
                if s["tau_median"] is None:
                    notes[f"stability.kendall[{len(kd_rows) - 1}].tau_median"] = \
                        "every draw's ranks (or the full-data ranks) all tie: Kendall's tau is undefined"
        del theta_b
    boot_params = {"statistic": statistic, "level": level, "resamples": resamples, "interval": interval,
                   "seed": seed, "seeds": {t.name: seed + t.index for t in suite.tasks},
                   "draws": "numpy.random.default_rng(seed + task index).integers(0, n_units, size=(resamples, "
                            "n_units)), units in natural order of their ids, the same draws for every model",
                   "units": "clusters" if cluster_by else "cases", "cluster_by": cluster_by}
    if intervals:
        out["intervals"] = {"params": boot_params,
                            "counts": {"rows": len(iv_rows), "null_bounds": sum(r["low"] is None or r["high"] is None
                                                                                for r in iv_rows)},
                            "rows": iv_rows}
    if compare:
        out["comparisons"] = {"params": {**boot_params, "test": test, "adjust": adjust, "alpha": alpha,
                                         "permutations": permutations if test == "permutation" else None,
                                         "sided": "one-sided (a better than b); p adjusted over each task's and "
                                                  "metric's k(k-1) ordered pairs",
                                         "pairs": "common cases of a and b"},
                              "counts": {"rows": len(cmp_rows), "wins": sum(bool(r["win"]) for r in cmp_rows),
                                         "null_p": sum(r["p"] is None for r in cmp_rows)},
                              "rows": cmp_rows}
    if rank:
        cons_rows = []
        if len(suite.tasks) > 1:
            for m in metrics:
                models = suite.models
                for meth in ranking.METHODS:
                    mat = []
                    for t in suite.tasks:
                        tm, per = task_ranks[(t.name, m)]
                        if tm != models:
                            mat = None
                            notes.setdefault(f"rankings.consensus.{m}", "a model is absent from a whole task: "
                                             "no consensus")
                            break
                        mat.append(per[meth])
                    if mat is None:
                        break
                    score, rk = ranking.consensus(mat)
                    for i, model in enumerate(models):
                        cons_rows.append({"metric": m, "method": meth, "model": model, "score": float(score[i]),
                                          "rank": int(rk[i])})
        out["rankings"] = {"params": {"methods": list(ranking.METHODS), "ties": "min",
                                      "test_then_rank": {"test": "wilcoxon", "alpha": 0.05, "adjust": "none",
                                                         "sided": "one-sided"},
                                      "consensus": "euclidean: mean over tasks of average-tie ranks" if
                                      len(suite.tasks) > 1 else None, "seed": seed},
                           "counts": {"rows": len(rk_rows), "consensus_rows": len(cons_rows)},
                           "rows": rk_rows, "consensus": cons_rows}
    if stability:
        names = [f"aggregate_{statistic}" if x == "aggregate" else STABILITY_NAMES[x] for x in st_methods]
        out["stability"] = {"params": {**boot_params, "ranking": names[0] if len(names) == 1 else names,
                                       "methods": names, "ties": "min",
                                       "cases": stability_cases if set(st_methods) - {"aggregate"} else None,
                                       "test_then_rank": {"test": "wilcoxon", "alpha": 0.05, "adjust": "none",
                                                          "sided": "one-sided"} if "test-rank" in st_methods
                                       else None,
                                       "kendall": "tau-b of the full-data ranking against each draw's"},
                            "counts": {"rows": len(st_rows), "draws": resamples,
                                       "tau_undefined": sum(r["n_tau_undefined"] for r in kd_rows)},
                            "rows": st_rows, "kendall": kd_rows}
    return out
