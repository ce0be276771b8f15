"""``segscore target`` (alias ``score``): a prediction's card and floors on a registered ink target."""

from __future__ import annotations

from segscore.commands.target import add_arguments  # noqa: F401



def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.target import compute
    from segscore.ink import targets

    result = compute(args)
    show(args, result, targets.format_scorecard(result))
    return 0
