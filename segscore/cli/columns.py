"""``segscore columns`` (alias ``score-columns``): a grid-resolution map on a column target."""

from __future__ import annotations

from segscore.commands.columns import add_arguments  # noqa: F401



def run(args) -> int:
    from segscore.cli._common import show
    from segscore.columns import format_columns
    from segscore.commands.columns import compute

    result = compute(args)
    show(args, result, format_columns(result))
    return 0
