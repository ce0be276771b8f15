"""``segscore report RESULTS_DIR [--by model,target] [--csv FILE] [--json]``: a batch's leaderboard.

Markdown on stdout (one table per command, each headline beside its floors or control; the jobs
that did not score listed below with their error lines), ``--json`` the same as JSON,
``--csv FILE`` the same table as CSV; ``--missing null|worst`` adds each table's headline means
(:meth:`segscore.batch.report.Report.means`). Exit 0 when the report was made, also when some jobs were
refused or crashed (their count on stderr); 2 for a missing folder, a missing or damaged
``results.jsonl`` or an unknown ``--by`` column (one line on stderr naming it and the fix).
"""

from __future__ import annotations



def add_arguments(p) -> None:
    from segscore.commands._options import add_missing_option, add_output_options

    p.add_argument("results", metavar="RESULTS_DIR", nargs="?",
                   help="the --out folder of `segscore batch` (its results.jsonl; the latest row of each id); "
                        "optional with --table")
    p.add_argument("--by", metavar="TAG[,TAG...]",
                   help="tag columns keying the rows, in this order (default: every tag column present); rows "
                        "with equal keys are told apart by the other tags, then the id")
    add_missing_option(p, "each table's headline means (one per value of its first key column, e.g. per model "
                          "over its targets) under this policy, beside the other's when a case was left out")
    add_output_options(p, csv=True)
    from segscore.figures import add_plot_option

    add_plot_option(p, "a leaderboard chart: each row's headline beside its floors or control (--plot-of picks it)")
    p.add_argument("--plot-of", metavar="COMMAND[:HEADLINE]",
                   help="the table and headline --plot draws (default: the first table's first headline), "
                        "e.g. target:roc_auc")
    from segscore.stats.options import add_arguments as add_stats_arguments

    add_stats_arguments(p)


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
        warn(args, [f"{len(rep.failed)} of {c['jobs']} jobs did not score ({c['refused']} refused, {c['crashed']} "
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
