"""``target`` (alias ``score``): a prediction's card and floors on a registered ink target."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_floor_options, nonnegative_int

    p.add_argument("prediction", help="probability map over the target region: 8-bit PNG (v/255), .npy float in "
                                      "[0, 1], TIFF or zarr. A float map is ranked exactly as float64, every "
                                      "distinct value a threshold, as ScrollGT's scikit-learn ranks it (values "
                                      "within 1e-6 outside [0, 1] are clipped, as ScrollGT does); 8- and 16-bit "
                                      "maps are exact on their own 256 or 65,536 values")
    p.add_argument("target", help="target folder holding gt_ink.png, optional mask.png, and meta.json")
    p.add_argument("--origin", nargs=2, type=nonnegative_int, metavar=("Y", "X"),
                   help="level-2 coordinate of the prediction's pixel (0, 0): a larger map is cut to the "
                        "region in meta.json")
    p.add_argument("--allow-non-scoring", action="store_true",
                   help="score a target whose meta.json marks it non-scoring (historical rows)")
    p.add_argument("--allow-failing-placement", action="store_true",
                   help="score a target that fails its placement check")
    add_floor_options(p)
    from segscore.figures import add_plot_option

    add_plot_option(p, "the ROC and precision-recall curves with the floors")


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.ink import targets

    plot = getattr(args, "plot", None)
    if plot:
        from segscore import figures

        figures.require_matplotlib()  # before the work
    scored = targets.score_target(args.prediction, args.target, origin=args.origin,
                                  allow_non_scoring=args.allow_non_scoring,
                                  allow_failing_placement=args.allow_failing_placement,
                                  floors=not args.no_floors, seed=args.seed, tile_rows=args.tile_rows,
                                  threads=args.threads, return_curves=bool(plot))
    result, curves = scored if plot else (scored, None)
    write_outputs(args, result)
    if plot:
        figures.draw_after(plot, lambda: figures.target_curves(result, curves), "target")
    return result


TARGET_FLOORS = ("all_positive", "constant_0_5", "uniform_random")


def headline(result: dict) -> list:
    """Ink target (``segscore target``): the F1 at the validated threshold (``val_f1``, else
    the F1 field the result has), ``ap_prevalence_lift`` and ``roc_auc``, each beside the three
    trivial predictors' floors (``all_positive``, ``constant_0_5``, ``uniform_random``)."""
    from segscore.commands._headline import with_floors

    metrics = result.get("metrics") if isinstance(result.get("metrics"), dict) else {}
    f1 = next((k for k in ("val_f1", "f1_at_0.5", "best_f1_any_threshold") if k in metrics), "val_f1")
    cells = []
    for key in (f1, "ap_prevalence_lift", "roc_auc"):
        cells += with_floors(result, key, key, TARGET_FLOORS,
                             missing_floors="no floors in this result (scored with --no-floors)")
    return cells


def text(result: dict) -> str:
    """The result as ``segscore target`` prints it."""
    from segscore.ink import targets

    return targets.format_scorecard(result)
