"""``segscore fibers-target NML_DIR MASK --out TARGET_DIR``: a fiber target from WEBKNOSSOS traces."""

from __future__ import annotations

from segscore.commands.fibers_target import add_arguments  # noqa: F401



def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.fibers_target import compute
    from segscore.fibers.build import format_summary

    result = compute(args)
    show(args, result, format_summary(result))
    return 0
