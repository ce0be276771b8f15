"""``fibers`` (alias ``score-fibers``): a tracer's instance labels against a fiber target."""

from __future__ import annotations

FLOOR_NAMES = ("single_instance", "voxel_instances", "connected_components", "random_instances", "oracle")


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options

    p.add_argument("paths", nargs="+", metavar="[LABELS] TARGET",
                   help="LABELS: integer instance ids shaped like the cube (.npy, .tif or zarr; 0 = background); "
                        "TARGET: a fiber target folder (skeleton.npz, mask.npz, meta.json)")
    p.add_argument("--floor", choices=FLOOR_NAMES, help="score this floor as the prediction (no LABELS needed)")
    p.add_argument("--recompute-floors", action="store_true",
                   help="recompute every floor and the oracle from the target instead of reading meta.json")
    add_output_options(p)
    from segscore.figures import add_plot_option

    add_plot_option(p, "ERL and merge-penalized ERL against the floors and the oracle")


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.errors import ScoreError
    from segscore.fibers.card import score_fibers

    if len(args.paths) > 2:
        raise ScoreError(f"expected [LABELS] TARGET, got {len(args.paths)} paths")
    if len(args.paths) == 2 and args.floor:
        raise ScoreError("give LABELS or --floor, not both")
    if len(args.paths) == 1 and not args.floor:
        raise ScoreError(f"no LABELS given for target {args.paths[0]}; give your instance labels before the "
                         f"target, or score a floor: segscore fibers --floor connected_components {args.paths[0]}")
    target = args.paths[-1]
    labels = args.paths[0] if len(args.paths) == 2 else None
    plot = getattr(args, "plot", None)
    if plot:
        from segscore import figures

        figures.require_matplotlib()  # before the work
    card = score_fibers(target, labels, floor=args.floor, recompute_floors=args.recompute_floors)
    write_outputs(args, card)
    if plot:
        figures.draw_after(plot, lambda: figures.fiber_erl(card), "fibers")
    return card


def headline(result: dict) -> list:
    """Fibers (``segscore fibers``): ERL and merge-penalized ERL, each beside the
    connected-components floor and the oracle (the card's top-level ``oracle`` row; a card
    written before it moved there keeps it at ``floors.oracle``)."""
    from segscore.commands._headline import cell

    cells = []
    old = not isinstance(result.get("oracle"), dict) and isinstance((result.get("floors") or {}).get("oracle"), dict)
    where = "floors.oracle" if old else "oracle"
    for key in ("erl", "erl_merge_penalized"):
        cells += [cell(result, key, f"metrics.{key}"),
                  cell(result, f"{key} [connected_components]", f"floors.floor_connected_components.{key}", "floor",
                       key, "connected_components", missing="the target has no connected-components floor"),
                  cell(result, f"{key} [oracle]", f"{where}.{key}", "oracle", key, "oracle",
                       missing="the target has no oracle row")]
    return cells


def text(result: dict) -> str:
    """The result as ``segscore fibers`` prints it."""
    from segscore.fibers.card import format_card

    return format_card(result)
