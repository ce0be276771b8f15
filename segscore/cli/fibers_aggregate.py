"""``segscore fibers-aggregate CARD.json ...``: mean ERL over fiber scorecards of one size class."""

from __future__ import annotations

from segscore.commands.fibers_aggregate import add_arguments  # noqa: F401



def format_aggregate(out: dict) -> str:
    tol = "tolerance not stated" if out["tolerance"] is None else f"tolerance {out['tolerance']:g} voxels"
    text = (f"{out['n']} card(s), size class {out['size_class']}^3, {tol}: "
            f"mean ERL {out['erl_mean']:.2f}, mean merge-penalized ERL {out['erl_merge_penalized_mean']:.2f}")
    if out.get("n_null_erl"):
        text += f"\nnote: {out['n_null_erl']} card(s) covered nothing (ERL null); counted as 0 in the means"
    return text


def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.fibers_aggregate import compute

    out = compute(args)
    show(args, out, format_aggregate(out))
    return 0
