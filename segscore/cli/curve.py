"""``segscore curve``: overlap/topology metrics beside functional costs (curvicost's ``score``)."""

from __future__ import annotations

import sys

from segscore.commands.curve import INPUTS, OPTIONS  # noqa: F401
from segscore.commands._options import value_text as _fmt


#: the text report's two columns, in curvicost 0.3.1's order (its ``_report``): a metric that is
#: null is left out of the left column (curvicost leaves out its NaN ones; the notes below say why),
#: a cost that is absent (conductance_refradii_twosided without --reference-radii) out of the right
_LEFT = ("dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "betti_matching", "erl_star",
         "merged_frac", "erl_split", "node_recall", "apls", "junction_f1", "hd95")
_RIGHT = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac", "conductance_excess",
          "conductance_deficit", "conductance_refradii_twosided", "perfused_of_self")


def format_row(row: dict) -> str:
    from segscore.curvilinear.scoring import NO_ERL_NOTE

    left = [k for k in _LEFT if row.get(k) is not None]
    right = [k for k in _RIGHT if k in row]
    lines = ["metric                 value   |  cost                      value", "-" * 68]
    for i in range(max(len(left), len(right))):
        lk = left[i] if i < len(left) else ""
        rk = right[i] if i < len(right) else ""
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
    if row.get("conductance_refradii_frac") is not None:
        lines.append(f"conductance_refradii_frac {_fmt(row['conductance_refradii_frac'])} (the prediction's radii read "
                     "from the reference)")
    if row.get("voxel_size"):
        applied = physical and [float(v) for v in row["voxel_size"]] == [float(v) for v in row["spacing"]]
        lines.append(f"voxel size {tuple(row['voxel_size'])} (recorded as curvicost does"
                     + ("; applied as the spacing)" if applied else
                        f"; not applied: lengths and radii are in {'the spacing' if physical else 'voxels'})"))
    if row.get("betti0_pred") == 0:
        lines.append("note: the prediction is empty: every cost is 0")
    notes = row.get("notes") or {}
    skipped = [k for k, why in notes.items() if why == NO_ERL_NOTE]
    if skipped:
        lines.append(f"note: {', '.join(skipped)} not computed: --no-erl")
    for k, why in notes.items():
        if why != NO_ERL_NOTE:
            lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands import curve
    from segscore.commands._declare import from_namespace

    row = curve.compute(figure=False, **from_namespace(curve, args))
    if getattr(args, "quiet", False):  # curvicost's --quiet: nothing on stdout or stderr but what was asked for
        from segscore.io.results import dumps, write_json

        if getattr(args, "json_path", None):
            write_json(args.json_path, row)
        if args.json:
            sys.stdout.write(dumps(row) + "\n")
        return 0
    show(args, row, format_row(row), module=curve)
    return 0
