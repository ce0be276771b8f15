"""``auc``: pixel AUC of an ink map against a segment's labels (kit-auc's options)."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_engine_options, add_output_options, nonnegative_int, positive_int

    p.add_argument("prediction", help="the ink map: a 2D .tif, .npy, .png or zarr array on the 9 um surface grid. "
                                      "uint8 and uint16 are ranked as they are; any other dtype on 65,536 levels "
                                      "by kit's rule (kit defines its AUC on them; `target` and `columns` rank "
                                      "floats exactly, as ScrollGT does)")
    p.add_argument("--labels", required=True, help="the segment's inklabels.zarr (pyramid group or one 2D array)")
    p.add_argument("--mask", required=True, help="the segment's supervision.zarr, same layout as the labels")
    p.add_argument("--control", help="the reverse-depth map of the same surface, same shape as the map")
    p.add_argument("--level", default="2", help="pyramid level of the labels on the map's grid (default 2)")
    p.add_argument("--crop", nargs=4, type=nonnegative_int, metavar=("Y0", "Y1", "X0", "X1"),
                   help="the map covers only this window of the surface (ends excluded)")
    p.add_argument("--surface-shape", nargs=2, type=positive_int, metavar=("H", "W"),
                   help="the full surface's shape; required with --crop")
    p.add_argument("--keep-zero", action="store_true", help="score pixels where the map is exactly 0")
    # --inner, --bootstrap and --block-px are checked by the API, with kit's own messages
    p.add_argument("--inner", type=int, default=0, metavar="PX", help="leave out PX pixels at every edge")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="block-bootstrap draws for a 95 %% interval (0: none; at least 20; 300 is plenty)")
    p.add_argument("--block-px", type=int, default=107, help="side of a bootstrap block in pixels (1 mm)")
    p.add_argument("--compare", metavar="MAP", help="a second map of the same surface: the paired difference")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the bootstrap draws")
    add_output_options(p, csv=True)
    p.add_argument("--slug", help="attach the result as a check to the experiment SLUG in the ledger")
    p.add_argument("--name", default="label-auc", help="name of that check (default label-auc)")
    p.add_argument("--root", default="experiments", help="ledger folder (default experiments)")
    from segscore.figures import add_plot_option

    add_plot_option(p, "the bootstrap distribution of the AUC with its interval and the control's AUC (needs "
                       "--bootstrap N or --compare MAP; with --compare, the paired difference beside it)")
    add_engine_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    import sys

    from segscore.commands._options import write_outputs
    from segscore.ink import auc
    from segscore.io import ledger
    from segscore.io.results import flatten

    plot = getattr(args, "plot", None)
    if plot:  # refuse a figure that cannot be drawn before the work, not after
        from segscore import figures
        from segscore.errors import ScoreError

        if not args.bootstrap and not args.compare:
            raise ScoreError("--plot draws the bootstrap distribution of the AUC; add --bootstrap N (300 is "
                             "plenty) or --compare MAP")
        figures.require_matplotlib()
    if args.slug:  # refuse a missing experiment before the work, not after
        ledger.require_run(args.slug, args.root)
    scored = auc.score_files(
        args.prediction, args.labels, args.mask, control=args.control, level=args.level, crop=args.crop,
        surface_shape=args.surface_shape, keep_zero=args.keep_zero, inner=args.inner, bootstrap=args.bootstrap,
        block_px=args.block_px, compare=args.compare, seed=args.seed, tile_rows=args.tile_rows,
        threads=args.threads, progress=progress, return_draws=bool(plot))
    result, draws = scored if plot else (scored, None)
    write_outputs(args, result, csv_rows=[flatten(result)])
    if plot:
        figures.draw_after(plot, lambda: figures.auc_draws(result, draws), "auc")
    if args.slug:
        ledger.add_check(args.slug, args.name, ["segscore", *(sys.argv[1:] if argv is None else argv)], result,
                         root=args.root)
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
