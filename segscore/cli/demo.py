"""``segscore demo``: score a built-in synthetic segment, offline, as `segscore auc` would."""

from __future__ import annotations

from segscore.commands.demo import INPUTS, OPTIONS  # noqa: F401



def run(args) -> int:
    import shlex
    import sys

    from segscore.cli._common import show
    from segscore.commands import demo
    from segscore.commands._declare import from_namespace
    from segscore.ink import auc

    def said(folder):
        if args.json:
            return
        cmd = (f"segscore auc seg/MAP.tif --control seg/MAP_reverse.tif --labels seg/labels/inklabels.zarr "
               f"--mask seg/labels/supervision.zarr --bootstrap {args.bootstrap}")
        if args.keep:
            sys.stderr.write(f"segscore demo: a synthetic 600 x 800 segment, kept in {folder}/seg (the docs' inputs "
                             f"in {folder}/data); to score it again:\n"
                             f"$ cd {shlex.quote(str(folder))} && {cmd}\n")
        else:
            sys.stderr.write(f"segscore demo: a synthetic 600 x 800 segment, scored as\n$ {cmd}\n"
                             f"segscore demo: the sample is removed when the demo ends; run `segscore demo --keep DIR` "
                             f"to keep it in DIR, then re-run the command above in DIR\n")

    result = demo.compute(on_sample=said, figure=False, **from_namespace(demo, args))
    show(args, result, auc.format_result(result))
    return 0
