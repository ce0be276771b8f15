"""``report``'s options, declared once (:mod:`segscore.commands._declare`): the leaderboard of a
batch results folder and the benchmark statistics of :mod:`segscore.stats` (intervals, paired
comparisons, rankings, stability). ``segscore report`` (:mod:`segscore.cli.report`) builds its parser
from them and ``segscore.api.report`` its signature."""

from __future__ import annotations

from segscore.commands._declare import Option
from segscore.commands._options import (missing_option, nonnegative_int, output_options, plot_option,
                                       positive_int, share)

def column_names(value):
    """A comma-separated list of column names (the command line), or a list of names (Python)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


column_names.takes_lists = True

#: ``segscore report``'s input: a results folder (optional with ``--table``)
INPUTS = ("results",)

#: the benchmark statistics (is A better than B?): :func:`segscore.stats.analyse`'s options, read by
#: :func:`segscore.stats.options.analyse_args`
STATS_OPTIONS = (
    Option("table", ("--table",), metavar="FILE", role="table",
           help="a long table (CSV, or Parquet with the parquet extra) with one row per case and model, instead of "
                "a results folder"),
    Option("case", ("--case",), metavar="COL", help="the case column (a table) or tag (a results folder)"),
    Option("metric", ("--metric",), type=column_names, metavar="COL[,COL...]",
           help="the metric column(s) (a results folder: headline columns; default its first table's headlines)"),
    Option("task", ("--task",), metavar="COL", help="the task column or tag: each task analysed on its own"),
    Option("cluster_by", ("--cluster-by",), metavar="COL",
           help="draw clusters of cases (a scroll, a patient) instead of cases"),
    Option("smaller_better", ("--smaller-better",), type=column_names, metavar="COL[,COL...]",
           help="metrics where smaller is better (a results folder: added to the registry's)"),
    Option("worst", ("--worst",), metavar="COL=VALUE", kind="append",
           help="the worst value of a metric, counted for a missing value under --missing worst (needed for a "
                "table; repeat per metric)"),
    Option("intervals", ("--intervals",), kind="flag", help="each model's statistic with its bootstrap interval"),
    Option("statistic", ("--statistic",), choices=("mean", "median"), default="mean",
           help="the statistic (default mean)"),
    Option("level", ("--level",), type=share, default=0.95, help="the interval's confidence level (default 0.95)"),
    Option("resamples", ("--resamples",), type=positive_int, default=10_000, metavar="N",
           help="bootstrap draws (default 10,000)"),
    Option("seed", ("--seed",), type=nonnegative_int, default=0,
           help="the draws' seed: default_rng(seed + task index) (default 0)"),
    Option("interval", ("--interval",), choices=("percentile", "bca"), default="percentile",
           help="the bootstrap interval (default percentile)"),
    Option("compare", ("--compare",), kind="flag",
           help="every ordered pair of models on their common cases: the difference with its paired interval and a "
                "one-sided test"),
    Option("adjust", ("--adjust",), choices=("holm", "bonferroni", "bh", "none"), default="holm",
           help="the adjustment over each task's k(k-1) pairs (default holm)"),
    Option("alpha", ("--alpha",), type=share, default=0.05, help="a win is p_adjusted <= alpha (default 0.05)"),
    Option("test", ("--test",), choices=("wilcoxon", "permutation"), default="wilcoxon",
           help="wilcoxon: R's paired wilcox.test (exact=FALSE); permutation: the sign-flip test"),
    Option("permutations", ("--permutations",), type=positive_int, default=9_999, metavar="N",
           help="sign patterns of --test permutation (exact when 2**n fit; default 9,999)"),
    Option("rank", ("--rank",), kind="flag", help="challengeR's rankings (and their consensus over tasks)"),
    Option("stability", ("--stability",), kind="flag",
           help="rank distributions over the bootstrap draws, the share ranked first, Kendall's tau"),
    Option("stability_method", ("--stability-method",), type=column_names, default="aggregate",
           metavar="aggregate|rank-aggregate|test-rank|all",
           help="the ranking(s) --stability bootstraps: aggregate-then-rank (--statistic), rank-then-aggregate, "
                "test-then-rank (Wilcoxon wins, alpha 0.05), comma-separated, or all (default aggregate)"),
    Option("stability_cases", ("--stability-cases",), choices=("challenger", "distinct"), default="challenger",
           help="a case drawn k times in a resample of rank-aggregate or test-rank: challenger (k rows under one "
                "case id, ranked together and paired once, as challengeR's bootstrap) or distinct (k cases) "
                "(default challenger)"),
)

#: the report's arguments (a command module declares its options here; nothing else lists them)
OPTIONS = (
    Option("results", metavar="RESULTS_DIR", role="results", nargs="?",
           help="the --out folder of `segscore batch` (its results.jsonl; the latest row of each id); optional "
                "with --table"),
    Option("by", ("--by",), metavar="TAG[,TAG...]",
           help="tag columns keying the rows, in this order (default: every tag column present); rows with equal "
                "keys are told apart by the other tags, then the id"),
    *missing_option("each table's headline means (one per value of its first key column, e.g. per model over its "
                    "targets) under this policy, beside the other's when a case was left out"),
    *output_options(csv=True),
    *plot_option("a leaderboard chart: each row's headline beside its floors or control (--plot-of picks it)"),
    Option("plot_of", ("--plot-of",), metavar="COMMAND[:HEADLINE]",
           help="the table and headline --plot draws (default: the first table's first headline), e.g. "
                "target:roc_auc"),
    *STATS_OPTIONS,
)

