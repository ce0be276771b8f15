"""``segscore check``: prize pre-check (window cap, train/predict overlap). Exit 3 on a violation."""

from __future__ import annotations

from segscore.commands.check import add_arguments  # noqa: F401



def run(args) -> int:
    import sys

    from segscore.cli._common import show
    from segscore.commands.check import compute
    from segscore.ink import compliance

    result = compute(args)
    show(args, result, compliance.format_check(result))
    if not result["compliant"]:
        for v in result["violations"]:
            sys.stderr.write(f"segscore check: {v}\n")
        return 3
    return 0
