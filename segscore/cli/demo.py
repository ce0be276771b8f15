"""``segscore demo``: score a built-in synthetic segment, offline, as `segscore auc` would."""

from __future__ import annotations

from segscore.commands.demo import add_arguments  # noqa: F401



def run(args) -> int:
    import sys

    from segscore.cli._common import show
    from segscore.commands.demo import compute
    from segscore.ink import auc

    def said(folder):
        if not args.json:
            sys.stderr.write(
                f"segscore demo: a synthetic 600 x 800 segment in {folder}\n"
                f"$ segscore auc MAP.tif --control MAP_reverse.tif --labels labels/inklabels.zarr "
                f"--mask labels/supervision.zarr --bootstrap {args.bootstrap}\n")

    result = compute(args, on_sample=said)
    show(args, result, auc.format_result(result))
    return 0
