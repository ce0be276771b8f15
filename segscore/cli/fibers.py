"""``segscore fibers`` (alias ``score-fibers``): a tracer's instance labels against a fiber target."""

from __future__ import annotations

from segscore.commands.fibers import FLOOR_NAMES, add_arguments  # noqa: F401



def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.fibers import compute
    from segscore.fibers.card import format_card

    card = compute(args)
    show(args, card, format_card(card))
    return 0
