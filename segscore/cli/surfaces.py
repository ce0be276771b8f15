"""``segscore surfaces PRED GT``: the Vesuvius surface-detection score (topometrics' leaderboard)."""

from __future__ import annotations

from segscore.commands.surfaces import add_arguments  # noqa: F401

HELP = "3D surfaces: TopoScore (Betti matching), surface Dice and VOI, and the Vesuvius leaderboard score"


def _fmt(v) -> str:
    return "null" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


def format_result(r: dict) -> str:
    if "summary" in r:  # folder mode
        lines = [f"{r['cases']} cases; per case: {r['per_case_csv']}", "field          mean     median   std      iqr"]
        for f, s in r["summary"].items():
            if s is None:
                lines.append(f"{f:<13}  null")
                continue
            lines.append(f"{f:<13}  {s['mean']:.4f}   {s['median']:.4f}   {s['std']:.4f}   {s['iqr']:.4f}")
        vt = r["summary"].get("voi_total") or {}
        if "var_lower_5" in vt:
            lines.append(f"voi_total 5% VaR/CVaR: lower {vt['var_lower_5']:.4f}/{vt['cvar_lower_5']:.4f}, "
                         f"upper {vt['var_upper_5']:.4f}/{vt['cvar_upper_5']:.4f}")
        return "\n".join(lines)
    lines = [f"leaderboard   {_fmt(r['leaderboard'])}",
             f"toposcore     {_fmt(r['toposcore'])}   (topoF1 {_fmt(r['topoF1_0'])} {_fmt(r['topoF1_1'])} "
             f"{_fmt(r['topoF1_2'])}; {r['tiles']} tiles)",
             f"surface_dice  {_fmt(r['surface_dice'])}   (tolerance {r['params']['tolerance']:g})",
             f"voi_score     {_fmt(r['voi_score'])}   (total {_fmt(r['voi_total'])} = split {_fmt(r['voi_split'])} "
             f"+ merge {_fmt(r['voi_merge'])})",
             "", "dim  matched  pred  gt"]
    for k in range(3):
        d = r["topology"][f"dim{k}"]
        lines.append(f"{k:>3}  {d['matched']:>7}  {d['pred']:>4}  {d['gt']:>3}")
    for k, why in r["notes"].items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    from segscore.cli._common import show, warn
    from segscore.commands.surfaces import compute, warnings

    result = compute(args)
    warn(args, warnings(result))
    show(args, result, format_result(result))
    return 0
