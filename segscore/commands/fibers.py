"""``fibers`` (alias ``score-fibers``): a tracer's instance labels against a fiber target."""

from __future__ import annotations

FLOOR_NAMES = ("single_instance", "voxel_instances", "connected_components", "random_instances", "oracle")


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import cluster_options, output_options, plot_option  # noqa: E402

#: why ``fibers`` refuses ``--processes``/``--scheduler``
SINGLE = "fibers builds the target's skeleton table and the prediction's labels whole, in one process"

#: ``segscore fibers [PRED] TRUTH``; ``segscore.api.fibers(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("paths", nargs="+", metavar="[PRED] TRUTH", where="cli",
           help="PRED: integer instance ids shaped like the cube (.npy, .tif or zarr; 0 = background); TRUTH: a "
                "fiber target folder (skeleton.npz, mask.npz, meta.json)"),
    Option("truth", where="api", role="truth", help="the fiber target folder (skeleton.npz, mask.npz, meta.json)"),
    Option("pred", where="api", role="pred", arrays=True,
           help="the instance labels (a file or a 3D integer array; 0 = background), or None with floor="),
    Option("floor", ("--floor",), choices=FLOOR_NAMES, help="score this floor as the prediction (no PRED needed)"),
    Option("recompute_floors", ("--recompute-floors",), kind="flag",
           help="recompute every floor and the oracle from the target instead of reading meta.json"),
    *output_options(),
    *plot_option("ERL and merge-penalized ERL against the floors and the oracle"),
    *cluster_options(single=SINGLE),
)


def from_words(values: dict, namespace) -> dict:
    """The command line's ``[PRED] TRUTH`` (``paths``) as ``truth`` and ``pred``."""
    from segscore.errors import ScoreError

    paths = getattr(namespace, "paths", None) or []
    if len(paths) > 2:
        raise ScoreError(f"expected [LABELS] TARGET, got {len(paths)} paths")
    if paths:
        values["truth"], values["pred"] = paths[-1], (paths[0] if len(paths) == 2 else None)
    return values


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    from segscore import figures
    from segscore.commands._options import refuse_cluster, write_outputs
    from segscore.errors import ScoreError
    from segscore.fibers.card import _score_fibers
    from segscore.io.results import with_figure

    if o["truth"] is None:
        raise ScoreError("no fiber target given; give [PRED] TRUTH (the target folder last)")
    if o["pred"] is not None and o["floor"]:
        raise ScoreError("give LABELS or --floor, not both")
    if o["pred"] is None and not o["floor"]:
        raise ScoreError(f"no LABELS given for target {o['truth']}; give your instance labels before the "
                         f"target, or score a floor: segscore fibers --floor connected_components {o['truth']}")
    refuse_cluster(o, SINGLE)  # before anything is read
    if o["plot"]:
        figures.require_matplotlib()  # before the work
    card = _score_fibers(o["truth"], o["pred"], floor=o["floor"], recompute_floors=o["recompute_floors"])
    card = with_figure(card, lambda: figures.fiber_erl(card))
    write_outputs(o, card)
    if o["plot"]:
        figures.draw_after(o["plot"], lambda: figures.fiber_erl(card), "fibers")
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
