"""``columns`` (alias ``score-columns``): a grid-resolution map on a column target."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import floor_options, nonnegative_int  # noqa: E402

#: ``segscore columns PRED TRUTH``; ``segscore.api.columns(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", metavar="PRED", role="pred", arrays=True,
           help="probability map at grid resolution: .npy float in [0, 1], 8-bit PNG, TIFF or zarr; the full grid "
                "or a sub-extent with --origin. The pixel AUC ranks a float map exactly as float64 (clipped to "
                "[0, 1]), as ScrollGT's scikit-learn does"),
    Option("truth", metavar="TRUTH", role="truth",
           help="the column target folder holding columns.json, meta.json and valid_mask.png"),
    Option("origin", ("--origin",), nargs=2, type=nonnegative_int, metavar=("Y", "X"), default=(0, 0),
           help="grid coordinate of the prediction's pixel (0, 0) (default 0 0)"),
    *floor_options(executor=True),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    from segscore.columns.score import _score_columns
    from segscore.commands._options import write_outputs

    result = _score_columns(o["pred"], o["truth"], tuple(o["origin"]), floors=not o["no_floors"],
                            seed=o["seed"], tile_rows=o["tile_rows"], threads=o["threads"], executor=o["executor"])
    write_outputs(o, result)
    return result


COLUMNS_FLOORS = ("constant_0_5", "papyrus_mask", "uniform_random")


def headline(result: dict) -> list:
    """Column target (``segscore columns``): column-vs-gutter AUC (per column and per pixel) and
    the mean line-period peak, each beside the target's floors."""
    from segscore.commands._headline import with_floors

    floors = tuple(result["floors"]) if isinstance(result.get("floors"), dict) and result["floors"] \
        else COLUMNS_FLOORS
    cells = []
    for key in ("col_gutter_auc", "col_gutter_pixel_auc", "line_period_peak_mean"):
        cells += with_floors(result, key, key, floors,
                             missing_floors="no floors in this result (scored with --no-floors)")
    return cells


def text(result: dict) -> str:
    """The result as ``segscore columns`` prints it."""
    from segscore.columns import format_columns

    return format_columns(result)
