"""``segscore placement``: where prediction and label agree best (NCC over shifts), per tile too."""

from __future__ import annotations

from segscore.commands.placement import add_arguments  # noqa: F401



def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.placement import compute
    from segscore.ink import placement

    result = compute(args)
    show(args, result, placement.format_probe(result))
    return 0
