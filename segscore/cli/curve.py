"""``segscore curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations


from segscore.commands.curve import add_arguments  # noqa: F401

HELP = "curvilinear masks: Dice, clDice, Betti-0, ERL beside reachable length and Kirchhoff conductance"

_LEFT = ("dice", "iou", "cldice", "betti0_error", "erl_frac", "diadem_like")
_RIGHT = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac", "perfused_of_self")


def _fmt(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def format_row(row: dict) -> str:
    from segscore.curvilinear.scoring import ALIAS_KEYS, CONDUCTANCE_SIDE_KEYS, OPTIONAL_KEYS

    lines = ["metric                 value   |  cost                      value", "-" * 68]
    for i in range(max(len(_LEFT), len(_RIGHT))):
        lk = _LEFT[i] if i < len(_LEFT) else ""
        rk = _RIGHT[i] if i < len(_RIGHT) else ""
        lcell = f"{lk:<18} {_fmt(row[lk]):>8}" if lk else " " * 27
        rcell = f"{rk:<22} {_fmt(row[rk]):>8}" if rk else ""
        lines.append(f"{lcell}   |  {rcell}".rstrip())
    pr = row.get("prune_radii")
    lines.append("")
    physical = row.get("spacing_source", "default") != "default" and any(v != 1 for v in row.get("spacing") or [])
    unit = row.get("spacing_unit") or "spacing units"
    unit = unit if isinstance(unit, str) else "/".join(map(str, unit))
    what = f"{unit} of reference skeleton" if physical else "reference-skeleton voxels"
    prune = (f"--prune-length {row['prune_length']:g}" if row.get("prune_length") is not None
             else f"--prune-px {row['prune_px']:g}")
    lines.append(f"betti0 {row['betti0_gt']} -> {row['betti0_pred']}; reachable {_fmt(row['traceable_length'])} of "
                 f"{_fmt(row['traceable_length_ref'])} {what}; {prune}"
                 + (f" = {pr:.2f} vessel radii" if pr is not None else ""))
    if row.get("spacing_source", "default") != "default":
        lines.append(f"spacing {tuple(row['spacing'])} {unit} ({row['spacing_source']}): lengths, radii, conductance "
                     f"and hd95 in that unit")
    same = [f"{k} {_fmt(row[k])}" for k in ALIAS_KEYS + CONDUCTANCE_SIDE_KEYS if k in row]
    if same:
        lines.append("; ".join(same))
    extra = [f"{k} {_fmt(row[k])}" for k in OPTIONAL_KEYS if k in row]
    if extra:
        lines.append("; ".join(extra))
    if row.get("voxel_size"):
        lines.append(f"voxel size {tuple(row['voxel_size'])} (recorded as curvicost does"
                     + ("; applied as the spacing)" if physical else "; lengths and radii are in voxels)"))
    if row.get("betti0_pred") == 0:
        lines.append("note: the prediction is empty: every cost is 0")
    for k, why in (row.get("notes") or {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands.curve import compute

    row = compute(args)
    show(args, row, format_row(row))
    return 0
