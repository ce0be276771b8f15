"""``columns`` (alias ``score-columns``): a grid-resolution map on a column target."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_floor_options, nonnegative_int

    p.add_argument("prediction", help="probability map at grid resolution: .npy float in [0, 1], 8-bit PNG, TIFF "
                                      "or zarr; the full grid or a sub-extent with --origin. The pixel AUC ranks "
                                      "a float map exactly as float64 (clipped to [0, 1]), as ScrollGT's "
                                      "scikit-learn does")
    p.add_argument("target", help="column target folder holding columns.json, meta.json and valid_mask.png")
    p.add_argument("--origin", nargs=2, type=nonnegative_int, metavar=("Y", "X"), default=(0, 0),
                   help="grid coordinate of the prediction's pixel (0, 0) (default 0 0)")
    add_floor_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.columns import score_columns
    from segscore.commands._options import write_outputs

    result = score_columns(args.prediction, args.target, tuple(args.origin), floors=not args.no_floors,
                           seed=args.seed, tile_rows=args.tile_rows, threads=args.threads)
    write_outputs(args, result)
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
