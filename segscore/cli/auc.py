"""``segscore auc``: pixel AUC of an ink map against a segment's labels (kit-auc's options)."""

from __future__ import annotations

from segscore.commands.auc import add_arguments  # noqa: F401  (main.py and the batch use the same definitions)



def run(args) -> int:
    from segscore.cli._common import progress_printer, show
    from segscore.commands.auc import compute
    from segscore.ink import auc

    result = compute(args, progress=progress_printer(args, "auc"))
    show(args, result, auc.format_result(result))
    return 0
