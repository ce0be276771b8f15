"""``segscore report RESULTS_DIR [--by model,target] [--csv FILE] [--json]``: a batch's leaderboard.

Markdown on stdout (one table per command, each headline beside its floors or control; the jobs
that did not score listed below with their error lines), ``--json`` the same as JSON,
``--csv FILE`` the same table as CSV; ``--missing null|worst`` adds each table's headline means
(:meth:`segscore.batch.report.Report.means`). Exit 0 when the report was made, also when some jobs were
refused or crashed (their count on stderr); 2 for a missing folder, a missing or damaged
``results.jsonl`` or an unknown ``--by`` column (one line on stderr naming it and the fix).
"""

from __future__ import annotations

from segscore.commands.report import INPUTS, OPTIONS, STATS_OPTIONS  # noqa: F401 - declared once there


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

    from segscore.batch.report import wants_statistics as wanted

    if wanted(vars(args)):  # intervals, comparisons, rankings, stability (segscore.stats)
        return _run_stats(args)
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


def _run_stats(args) -> int:
    """The statistics (:func:`segscore.commands.report.analyse`): the text tables, or ``--json``."""
    from segscore.cli._common import show
    from segscore.batch.report import statistics as analyse

    result = analyse(vars(args))
    show(args, result, result.to_markdown())
    return 0
