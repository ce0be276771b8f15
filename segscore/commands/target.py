"""``target`` (alias ``score``): a prediction's card and floors on a registered ink target."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import floor_options, nonnegative_int, plot_option  # noqa: E402

#: ``segscore target PRED TRUTH``; ``segscore.api.target(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", metavar="PRED", role="pred", arrays=True,
           help="probability map over the target region: 8-bit PNG (v/255), .npy float in [0, 1], TIFF or zarr. A "
                "float map is ranked exactly as float64, every distinct value a threshold, as ScrollGT's "
                "scikit-learn ranks it (values within 1e-6 outside [0, 1] are clipped, as ScrollGT does); 8- and "
                "16-bit maps are exact on their own 256 or 65,536 values"),
    Option("truth", metavar="TRUTH", role="truth",
           help="the ink target folder holding gt_ink.png, optional mask.png, and meta.json"),
    Option("origin", ("--origin",), nargs=2, type=nonnegative_int, metavar=("Y", "X"),
           help="level-2 coordinate of the prediction's pixel (0, 0): a larger map is cut to the region in "
                "meta.json"),
    Option("allow_non_scoring", ("--allow-non-scoring",), kind="flag",
           help="score a target whose meta.json marks it non-scoring (historical rows)"),
    Option("allow_failing_placement", ("--allow-failing-placement",), kind="flag",
           help="score a target that fails its placement check"),
    *floor_options(executor=True),
    *plot_option("the ROC and precision-recall curves with the floors"),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The card ``--json`` prints; with ``figure`` its ``plot()`` draws the curves it computed."""
    from segscore import figures
    from segscore.commands._options import write_outputs
    from segscore.ink import targets
    from segscore.io.results import with_figure

    keep = figure or bool(o["plot"])
    if o["plot"]:
        figures.require_matplotlib()  # before the work
    scored = targets._score_target(o["pred"], o["truth"], origin=o["origin"],
                                   allow_non_scoring=o["allow_non_scoring"],
                                   allow_failing_placement=o["allow_failing_placement"],
                                   floors=not o["no_floors"], seed=o["seed"], tile_rows=o["tile_rows"],
                                   threads=o["threads"], executor=o["executor"], return_curves=keep)
    result, curves = scored if keep else (scored, None)
    if keep:
        result = with_figure(result, lambda: figures.target_curves(result, curves))
    write_outputs(o, result)
    if o["plot"]:
        figures.draw_after(o["plot"], lambda: figures.target_curves(result, curves), "target")
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
