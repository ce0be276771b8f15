"""``auc``: pixel AUC of an ink map against a segment's labels (kit-auc's options)."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import (engine_options, nonnegative_int, output_options,  # noqa: E402
                                        plot_option, positive_int)

#: ``segscore auc PRED --labels TRUTH --mask MASK``; ``segscore.api.auc(truth, pred, mask=...)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", metavar="PRED", role="pred", arrays=True,
           help="the ink map: a 2D .tif, .npy, .png or zarr array on the 9 um surface grid. uint8 and uint16 are "
                "ranked as they are; any other dtype on 65,536 levels by kit's rule (kit defines its AUC on them; "
                "`target` and `columns` rank floats exactly, as ScrollGT does)"),
    Option("truth", ("--labels",), required=True, metavar="TRUTH", role="truth", arrays=True,
           help="the segment's ink labels: inklabels.zarr (pyramid group or one 2D array)"),
    Option("mask", ("--mask",), required=True, role="mask", arrays=True,
           help="the segment's supervision.zarr, same layout as the labels"),
    Option("control", ("--control",), arrays=True,
           help="the reverse-depth map of the same surface, same shape as the map"),
    Option("level", ("--level",), type=str, default="2",
           help="pyramid level of the labels on the map's grid (default 2)"),
    Option("crop", ("--crop",), nargs=4, type=nonnegative_int, metavar=("Y0", "Y1", "X0", "X1"),
           help="the map covers only this window of the surface (ends excluded)"),
    Option("surface_shape", ("--surface-shape",), nargs=2, type=positive_int, metavar=("H", "W"),
           help="the full surface's shape; required with --crop"),
    Option("keep_zero", ("--keep-zero",), kind="flag", help="score pixels where the map is exactly 0"),
    # --inner, --bootstrap and --block-px are checked by the family, with kit's own messages
    Option("inner", ("--inner",), type=int, default=0, metavar="PX", help="leave out PX pixels at every edge"),
    Option("bootstrap", ("--bootstrap",), type=int, default=0, metavar="N",
           help="block-bootstrap draws for a 95 %% interval (0: none; at least 20; 300 is plenty)"),
    Option("block_px", ("--block-px",), type=int, default=107, help="side of a bootstrap block in pixels (1 mm)"),
    Option("compare", ("--compare",), metavar="MAP", arrays=True,
           help="a second map of the same surface: the paired difference"),
    Option("seed", ("--seed",), type=nonnegative_int, default=0, help="seed of the bootstrap draws"),
    *output_options(csv=True),
    Option("slug", ("--slug",), help="attach the result as a check to the experiment SLUG in the ledger"),
    Option("name", ("--name",), default="label-auc", help="name of that check (default label-auc)"),
    Option("root", ("--root",), default="experiments", help="ledger folder (default experiments)"),
    *plot_option("the bootstrap distribution of the AUC with its interval and the control's AUC (needs "
                 "--bootstrap N or --compare MAP; with --compare, the paired difference beside it)"),
    *engine_options(executor=True, cluster=True),
)


def compute(*, progress=None, recorded=None, **o) -> dict:
    """The result ``--json`` prints; ``recorded``: what the ledger of ``slug`` records (default: this
    process's command line; a batch job's words, an API call described). Its ``plot()`` draws the bootstrap draws it computed."""
    import sys

    from segscore import figures
    from segscore.commands._options import cluster_executor, write_outputs
    from segscore.errors import ScoreError
    from segscore.ink import auc
    from segscore.io import ledger
    from segscore.io.results import flatten, with_figure

    if o["plot"]:  # refuse a figure that cannot be drawn before the work, not after
        if not o["bootstrap"] and not o["compare"]:
            raise ScoreError("--plot draws the bootstrap distribution of the AUC; add --bootstrap N (300 is "
                             "plenty) or --compare MAP")
        figures.require_matplotlib()
    if o["slug"]:  # refuse a missing experiment before the work, not after
        ledger.require_run(o["slug"], o["root"])
    with cluster_executor(o, warm="segscore.ink.warmup:warm") as executor:
        result, draws = auc._score_files(
            o["pred"], o["truth"], o["mask"], control=o["control"], level=o["level"], crop=o["crop"],
            surface_shape=o["surface_shape"], keep_zero=o["keep_zero"], inner=o["inner"], bootstrap=o["bootstrap"],
            block_px=o["block_px"], compare=o["compare"], seed=o["seed"], tile_rows=o["tile_rows"],
            threads=o["threads"], executor=executor, progress=progress, return_draws=True)

    def draw():
        if not o["bootstrap"] and not o["compare"]:
            raise ScoreError("auc's figure is the bootstrap distribution of the AUC; score with bootstrap=N "
                             "(300 is plenty) or compare=MAP")
        return figures.auc_draws(result, draws)

    result = with_figure(result, draw)
    write_outputs(o, result, csv_rows=[flatten(result)])
    if o["plot"]:
        figures.draw_after(o["plot"], draw, "auc")
    if o["slug"]:
        ledger.add_check(o["slug"], o["name"], ["segscore", *sys.argv[1:]] if recorded is None else list(recorded), result,
                         root=o["root"])
    return result


def headline(result: dict) -> list:
    """Ink AUC (``segscore auc``, ``demo``): the map's AUC beside its control's (the
    reverse-depth map) and their gap; the bootstrap's 95 % interval when one was drawn; the
    paired difference to a compared map and its interval with ``--compare``."""
    from segscore.commands._headline import Cell
    from segscore.commands._headline import cell

    no_control = "no --control map given" if "control" not in result else None
    cells = [cell(result, "map_auc", "forward.auc"),
             cell(result, "control_auc", "control.auc", "control", "map_auc", "control", missing=no_control)]
    f, c = cells[0].value, cells[1].value
    if isinstance(f, (int, float)) and isinstance(c, (int, float)):
        cells.append(Cell("gap", round(float(f) - float(c), 12), "derived", "map_auc", "gap"))
    else:
        cells.append(Cell("gap", None, "derived", "map_auc", "gap",
                          note=no_control or "map_auc or control_auc is null (see its note)"))
    boot = result.get("bootstrap")
    if isinstance(boot, dict):
        cells += [cell(result, "ci95_lo", "bootstrap.ci95.0", "interval", "map_auc", "ci95_lo"),
                  cell(result, "ci95_hi", "bootstrap.ci95.1", "interval", "map_auc", "ci95_hi")]
        if isinstance(boot.get("compare"), dict):
            cells += [cell(result, "compare_difference", "bootstrap.compare.difference"),
                      cell(result, "compare_ci95_lo", "bootstrap.compare.ci95.0", "interval", "compare_difference",
                           "ci95_lo"),
                      cell(result, "compare_ci95_hi", "bootstrap.compare.ci95.1", "interval", "compare_difference",
                           "ci95_hi")]
    return cells


def text(result: dict) -> str:
    """The result as ``segscore auc`` prints it."""
    from segscore.ink import auc

    return auc.format_result(result)
