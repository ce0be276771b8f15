"""``demo``: score a built-in synthetic segment, offline, as ``auc`` would."""

from __future__ import annotations

from segscore.commands.auc import headline  # noqa: F401 - the demo's result is an auc result


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import nonnegative_int, output_options  # noqa: E402

#: ``segscore demo``: no inputs (it writes its own sample)
INPUTS = ()
OPTIONS = (
    Option("keep", ("--keep",), metavar="DIR",
           help="write the sample segment to DIR/seg and every input the README and docs use to DIR/data, and keep "
                 "them (run the docs' examples from DIR); default: a temporary folder, removed afterwards"),
    Option("bootstrap", ("--bootstrap",), type=nonnegative_int, default=300, metavar="N",
           help="bootstrap draws (default 300)"),
    Option("seed", ("--seed",), type=nonnegative_int, default=0, help="seed of the synthetic segment and of the draws"),
    *output_options(),
)


#: what ``--keep DIR`` writes at the top of DIR (it refuses a folder holding anything else)
KEPT = frozenset({"seg", "data"})


def check(o: dict) -> None:
    """Refuse bad options before any work (ScoreError)."""
    from pathlib import Path

    from segscore.errors import ScoreError
    from segscore.ink import auc

    if o["bootstrap"] and not auc.MIN_DRAWS <= o["bootstrap"] <= auc.MAX_DRAWS:
        raise ScoreError(f"--bootstrap {o['bootstrap']}: use 0 (no interval) or {auc.MIN_DRAWS} to "
                         f"{auc.MAX_DRAWS:,} draws")
    if o["keep"]:
        keep = Path(o["keep"])
        if keep.exists() and not keep.is_dir():
            raise ScoreError(f"{o['keep']}: --keep needs a folder, and this is a file; choose another path")
        foreign = sorted(q.name for q in keep.iterdir() if q.name not in KEPT) if keep.is_dir() else []
        if foreign:
            raise ScoreError(f"{o['keep']}: the folder holds other files ({', '.join(foreign[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}); give --keep an empty or new folder")


def compute(*, progress=None, recorded=None, figure=True, on_sample=None, **o) -> dict:
    """``on_sample(folder)`` is called once the sample is written (the CLI says where it is)."""
    import tempfile
    from pathlib import Path

    from segscore.commands._options import write_outputs
    from segscore.ink import auc
    from segscore.ink.demo import make_sample

    check(o)
    with tempfile.TemporaryDirectory(prefix="segscore-demo-") as tmp:
        folder = Path(o["keep"]) if o["keep"] else Path(tmp)
        paths = make_sample(folder / "seg", seed=o["seed"])
        if o["keep"]:
            from segscore.io.samples import write_data

            write_data(folder / "data")
        if on_sample is not None:
            on_sample(folder)
        result = auc._score_files(paths["prediction"], paths["labels"], paths["mask"], control=paths["control"],
                                  bootstrap=o["bootstrap"], seed=o["seed"])
        write_outputs(o, result)
    return result
