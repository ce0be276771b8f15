"""``segscore demo``: score a built-in synthetic segment, offline, as `segscore auc` would."""

from __future__ import annotations

HELP = "score a built-in synthetic segment (offline), as `segscore auc` prints it"


def add_arguments(p) -> None:
    from segscore.cli._common import add_output_options, nonnegative_int

    p.add_argument("--keep", metavar="DIR", help="write the sample segment to DIR and keep it (default: a "
                                                 "temporary folder, removed afterwards)")
    p.add_argument("--bootstrap", type=nonnegative_int, default=300, metavar="N", help="bootstrap draws (default 300)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the synthetic segment and of the draws")
    add_output_options(p)


def run(args) -> int:
    import sys
    import tempfile
    from pathlib import Path

    from segscore.cli._common import emit, fail
    from segscore.ink import auc
    from segscore.ink.demo import SAMPLE_NAMES, make_sample

    if args.bootstrap and not auc.MIN_DRAWS <= args.bootstrap <= auc.MAX_DRAWS:
        return fail(args, f"--bootstrap {args.bootstrap}: use 0 (no interval) or {auc.MIN_DRAWS} to "
                          f"{auc.MAX_DRAWS:,} draws")
    if args.keep:
        keep = Path(args.keep)
        if keep.exists() and not keep.is_dir():
            return fail(args, f"{args.keep}: --keep needs a folder, and this is a file; choose another path")
        foreign = sorted(q.name for q in keep.iterdir() if q.name not in SAMPLE_NAMES) if keep.is_dir() else []
        if foreign:
            return fail(args, f"{args.keep}: the folder holds other files ({', '.join(foreign[:3])}"
                              f"{', ...' if len(foreign) > 3 else ''}); give --keep an empty or new folder")
    with tempfile.TemporaryDirectory(prefix="segscore-demo-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        paths = make_sample(folder, seed=args.seed)
        if not args.json:
            sys.stderr.write(
                f"segscore demo: a synthetic 600 x 800 segment in {folder}\n"
                f"$ segscore auc MAP.tif --control MAP_reverse.tif --labels labels/inklabels.zarr "
                f"--mask labels/supervision.zarr --bootstrap {args.bootstrap}\n")
        result = auc.score_files(paths["prediction"], paths["labels"], paths["mask"], control=paths["control"],
                                 bootstrap=args.bootstrap, seed=args.seed)
        emit(args, result, auc.format_result(result))
    return 0
