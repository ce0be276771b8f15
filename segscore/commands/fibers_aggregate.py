"""``fibers-aggregate CARD.json ...``: mean ERL over fiber scorecards of one size class."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import output_options  # noqa: E402

#: ``segscore fibers-aggregate CARD.json ...``; ``segscore.api.fibers_aggregate(cards)``
INPUTS = ("cards",)
OPTIONS = (
    Option("cards", nargs="+", metavar="CARD.json", role="cards",
           help="scorecards written by `segscore fibers --json-out` (paths)"),
    *output_options(),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.fibers.card import aggregate_fiber_scores, load_cards

    out = aggregate_fiber_scores(load_cards(o["cards"]), names=o["cards"])
    write_outputs(o, out)
    return out


def headline(result: dict) -> list:
    """``segscore fibers-aggregate``: the mean ERLs over the cards, their number and size class."""
    from segscore.commands._headline import cell

    return [cell(result, "erl_mean", "erl_mean"), cell(result, "erl_merge_penalized_mean", "erl_merge_penalized_mean"),
            cell(result, "n", "n", "setting"), cell(result, "size_class", "size_class", "setting")]


def text(out: dict) -> str:
    """The result as ``segscore fibers-aggregate`` prints it."""
    tol = "tolerance not stated" if out["tolerance"] is None else f"tolerance {out['tolerance']:g} voxels"
    line = (f"{out['n']} card(s), size class {out['size_class']}^3, {tol}: "
            f"mean ERL {out['erl_mean']:.2f}, mean merge-penalized ERL {out['erl_merge_penalized_mean']:.2f}")
    if out.get("n_null_erl"):
        line += f"\nnote: {out['n_null_erl']} card(s) covered nothing (ERL null); counted as 0 in the means"
    return line
