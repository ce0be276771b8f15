"""``segscore fibers-aggregate CARD.json ...``: mean ERL over fiber scorecards of one size class."""

from __future__ import annotations

HELP = "mean ERL and merge-penalized ERL over `segscore fibers` cards of one cube size class"


def add_arguments(p) -> None:
    from segscore.cli._common import add_output_options

    p.add_argument("cards", nargs="+", metavar="CARD.json", help="scorecards written by `segscore fibers --json-out`")
    add_output_options(p)


def run(args) -> int:
    from segscore.cli._common import emit
    from segscore.fibers.card import aggregate_fiber_scores, load_cards

    out = aggregate_fiber_scores(load_cards(args.cards), names=args.cards)
    tol = "tolerance not stated" if out["tolerance"] is None else f"tolerance {out['tolerance']:g} voxels"
    text = (f"{out['n']} card(s), size class {out['size_class']}^3, {tol}: "
            f"mean ERL {out['erl_mean']:.2f}, mean merge-penalized ERL {out['erl_merge_penalized_mean']:.2f}")
    if out.get("n_null_erl"):
        text += f"\nnote: {out['n_null_erl']} card(s) covered nothing (ERL null); counted as 0 in the means"
    emit(args, out, text)
    return 0
