"""``demo``: score a built-in synthetic segment, offline, as ``auc`` would."""

from __future__ import annotations

from segscore.commands.auc import headline  # noqa: F401 - the demo's result is an auc result


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, nonnegative_int

    p.add_argument("--keep", metavar="DIR", help="write the sample segment to DIR/seg and every input the README "
                                                 "and docs use to DIR/data, and keep them (run the docs' examples "
                                                 "from DIR); default: a temporary folder, removed afterwards")
    p.add_argument("--bootstrap", type=nonnegative_int, default=300, metavar="N", help="bootstrap draws (default 300)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the synthetic segment and of the draws")
    add_output_options(p)


#: what ``--keep DIR`` writes at the top of DIR (it refuses a folder holding anything else)
KEPT = frozenset({"seg", "data"})


def check(args) -> None:
    """Refuse bad options before any work (ScoreError)."""
    from pathlib import Path

    from segscore.errors import ScoreError
    from segscore.ink import auc

    if args.bootstrap and not auc.MIN_DRAWS <= args.bootstrap <= auc.MAX_DRAWS:
        raise ScoreError(f"--bootstrap {args.bootstrap}: use 0 (no interval) or {auc.MIN_DRAWS} to "
                         f"{auc.MAX_DRAWS:,} draws")
    if args.keep:
        keep = Path(args.keep)
        if keep.exists() and not keep.is_dir():
            raise ScoreError(f"{args.keep}: --keep needs a folder, and this is a file; choose another path")
        foreign = sorted(q.name for q in keep.iterdir() if q.name not in KEPT) if keep.is_dir() else []
        if foreign:
            raise ScoreError(f"{args.keep}: the folder holds other files ({', '.join(foreign[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}); give --keep an empty or new folder")


def compute(args, *, progress=None, argv=None, on_sample=None) -> dict:
    """``on_sample(folder)`` is called once the sample is written (the CLI says where it is)."""
    import tempfile
    from pathlib import Path

    from segscore.commands._options import write_outputs
    from segscore.ink import auc
    from segscore.ink.demo import make_sample

    check(args)
    with tempfile.TemporaryDirectory(prefix="segscore-demo-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        paths = make_sample(folder / "seg", seed=args.seed)
        if args.keep:
            from segscore.io.samples import write_data

            write_data(folder / "data")
        if on_sample is not None:
            on_sample(folder)
        result = auc.score_files(paths["prediction"], paths["labels"], paths["mask"], control=paths["control"],
                                 bootstrap=args.bootstrap, seed=args.seed)
        write_outputs(args, result)
    return result
