"""``segscore report RESULTS_DIR [--by model,target] [--csv FILE] [--json]``: a batch's leaderboard.

Markdown on stdout (one table per command, each headline beside its floors or control; the jobs
that did not score listed below with their error lines), ``--json`` the same as JSON,
``--csv FILE`` the same table as CSV; ``--missing null|worst`` adds each table's headline means
(:meth:`segscore.batch.report.Report.means`). Exit 0 when the report was made, also when some jobs were
refused or crashed (their count on stderr); 2 for a missing folder, a missing or damaged
``results.jsonl`` or an unknown ``--by`` column (one line on stderr naming it and the fix).
"""

from __future__ import annotations



from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import (missing_option, nonnegative_int, output_options, plot_option,  # noqa: E402
                                       positive_int, share)

#: the benchmark statistics (is A better than B?): :func:`segscore.stats.analyse`'s options, read by
#: :func:`segscore.stats.options.analyse_args`
STATS_OPTIONS = (
    Option("table", ("--table",), metavar="FILE", role="table",
           help="a long table (CSV, or Parquet with the parquet extra) with one row per case and model, instead of "
                "a results folder"),
    Option("case", ("--case",), metavar="COL", help="the case column (a table) or tag (a results folder)"),
    Option("metric", ("--metric",), metavar="COL[,COL...]",
           help="the metric column(s) (a results folder: headline columns; default its first table's headlines)"),
    Option("task", ("--task",), metavar="COL", help="the task column or tag: each task analysed on its own"),
    Option("cluster_by", ("--cluster-by",), metavar="COL",
           help="draw clusters of cases (a scroll, a patient) instead of cases"),
    Option("smaller_better", ("--smaller-better",), metavar="COL[,COL...]",
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


def leaderboard_rows(rep, of=None) -> tuple[list, str]:
    """``Report.bars`` as the rows :func:`segscore.figures.leaderboard` draws, and the chart's
    title (``COMMAND: HEADLINE``): :func:`segscore.figures.board.board_rows`, the one conversion
    (kept under this name for callers of earlier releases); a bad ``of`` names ``--plot-of``."""
    from segscore.errors import ScoreError
    from segscore.figures.board import board_rows

    try:
        return board_rows(rep, of)
    except ScoreError as exc:
        raise ScoreError(f"--plot-of {of}: {exc}") from None


def run(args) -> int:
    import sys

    from segscore.batch.report import report
    from segscore.cli._common import show, warn

    from segscore.stats import options as stats_options

    if stats_options.wanted(args):  # intervals, comparisons, rankings, stability (segscore.stats)
        return _run_stats(args, stats_options)
    if not args.results:
        from segscore.errors import ScoreError

        raise ScoreError("give the RESULTS_DIR of a `segscore batch` run (or --table FILE with --intervals etc.)")
    rep = report(args.results, by=args.by, missing=getattr(args, "missing", None))
    fig = None
    if getattr(args, "plot", None):
        from segscore import figures

        figures.require_matplotlib()
        rows, _ = leaderboard_rows(rep, getattr(args, "plot_of", None))  # a bad --plot-of: before any output
        fig = lambda: figures.leaderboard(rows)  # noqa: E731 - drawn after the table is out; titled by the rows
    if args.csv:
        rep.to_csv(args.csv)
    result = rep.to_dict()
    if args.json_out:
        from segscore.io.results import write_json

        write_json(args.json_out, result)
    if fig is not None:
        from segscore import figures

        figures.draw_after(args.plot, fig, "report")  # all null: a warning, the table stands
    show(args, result, rep.to_markdown())
    c = rep.counts
    if rep.skipped_lines:
        lines = ", ".join(map(str, rep.skipped_lines[:5])) + (", ..." if len(rep.skipped_lines) > 5 else "")
        warn(args, [f"{rep.source / 'results.jsonl'}: read past {len(rep.skipped_lines)} torn line(s) (line {lines}), "
                    "as the batch does; rerun the `segscore batch` command to rescore their jobs"])
    if rep.failed:
        warn(args, [f"{len(rep.failed)} of {c['jobs']} job{'' if c['jobs'] == 1 else 's'} did not score ({c['refused']} refused, {c['crashed']} "
                    f"crashed); listed {'in failed' if args.json else 'below the tables'} with their errors"])
    sys.stderr.flush()
    return 0


def _run_stats(args, stats_options) -> int:
    """``segscore.stats.analyse`` on ``--table`` or the results folder; the text tables, or ``--json``."""
    from segscore.cli._common import show

    rep = None
    if not getattr(args, "table", None):
        from segscore.batch.report import report
        from segscore.errors import ScoreError

        if not args.results:
            raise ScoreError("give a RESULTS_DIR or --table FILE to analyse")
        rep = report(args.results, by=None).to_dict()
    result = stats_options.analyse_args(args, rep)
    stats_options.write_outputs(args, result)
    if getattr(args, "plot", None):
        from segscore import figures
        from segscore.figures.stats import draw_for

        figures.require_matplotlib()
        figures.save(draw_for(result), args.plot)
    show(args, result, result.to_markdown())
    return 0
