"""``segscore audit``: which metric tracks which functional cost, per error type, on your own
reference masks (curvicost 0.3.1's ``audit``); ``--cases FILE`` recomputes the findings of an
earlier audit from its cases without scoring. The arguments and the compute part are
:mod:`segscore.commands.audit`'s; this module prints the report."""

from __future__ import annotations

import sys

from segscore.commands.audit import HELP_DESCRIPTION, INPUTS, OPTIONS  # noqa: F401

_OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
_METRIC_ORDER = ("dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "betti_matching",
                 "erl_star", "node_recall", "apls", "junction_f1", "hd95")
_MARK = {"blind": "*", "anti-correlated": "!", "inconclusive": "?", "tracks": " "}


# ------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------

def _f(v, fmt):
    return "--" if v is None else format(v, fmt)


def format_report(result: dict) -> str:
    """The blindness report, laid out as curvicost 0.3.1 prints it: the quantities, a grid per
    quantity (metrics down, operators across, a 'redraw' column), every cell in full, the scale
    line, the operators' notes, the labels with their counts, the redraw floor."""
    L: list[str] = []
    findings = result["findings"]
    metrics = [m for m in _METRIC_ORDER if any(f["metric"] == m for f in findings)]
    metrics += sorted({f["metric"] for f in findings} - set(metrics))
    operators = list(_OPERATORS) + sorted({f["operator"] for f in findings} - set(_OPERATORS))
    labels = result.get("cost_labels") or {}
    label_of = lambda c: labels.get(c) or c  # noqa: E731
    floor = result.get("redraw_floor")
    fv = (floor or {}).get("values") or {}
    src = result.get("source")
    L.append("")
    L.append(f"{result['n_cases']} cases from {result['n_units']} reference mask(s)"
             + (f" (findings recomputed from {src}; nothing scored)" if src else ""))
    costs = list(dict.fromkeys([f["cost"] for f in findings] or result.get("costs") or []))
    if costs:
        L.append("scored against:")
        L.extend(f"  {c:<22} {label_of(c)}" for c in costs)
    if not result["has_ci"]:
        L.append("⚠  fewer than 3 reference masks: correlations are reported WITHOUT confidence\n"
                 "   intervals, and blindness cannot be judged. Treat these as indicative only.")

    cells = {(f["cost"], f["operator"], f["metric"]): f for f in findings}

    def fl(key):
        v = fv.get(key)
        return f"{v['median']:.3f}" if v and v.get("n") and v.get("median") is not None else "--"

    for cost in costs:
        L.append("")
        L.append(f"  vs {label_of(cost)}")
        L.append("  " + "metric".ljust(16) + "".join(o.rjust(11) for o in operators) + ("     redraw" if floor else ""))
        for m in metrics:
            line = ""
            for op in operators:
                f = cells.get((cost, op, m))
                if f is None:
                    line += "         --"
                elif f["label"] == "undefined":
                    line += "      undef"
                elif f["label"] == "inconclusive":
                    line += f"{'(' + format(f['aligned_rho'], '+.2f') + ')':>10}?"
                else:
                    line += f"{f['aligned_rho']:>+10.2f}{_MARK[f['label']]}"
            if floor:
                line += fl(m).rjust(11)
            L.append("  " + m.ljust(16) + line)
        if floor:
            v = fv.get(cost)
            rng = (f"{v['median']:.3f} [min {v['min']:.3f}, max {v['max']:.3f}]"
                   if v and v.get("n") and v.get("median") is not None else "undefined")
            n = floor.get("n_units")
            L.append(f"  redraw floor of {cost}: {rng} over {n if n is not None else '?'} mask(s)")

    L.append("")
    L.append("  every cell: sign-aligned Spearman ρ, 95% cluster-bootstrap interval, acting cases / acting units, label")
    for cost in costs:
        L.append("")
        L.append(f"  vs {label_of(cost)}")
        L.append("  " + "operator".ljust(10) + "metric".ljust(16) + "ρ".rjust(7) + "  [   lo,    hi]" + "  cases"
                 + "  units" + "  label")
        for op in operators:
            for m in metrics:
                f = cells.get((cost, op, m))
                if f is None:
                    continue
                if f["label"] == "undefined":
                    num, ci = "  undef", "  [    --,    --]"
                else:
                    num = f"{f['aligned_rho']:>+7.3f}"
                    ci = ("  [" + _f(f["ci_lo"], "+.2f").rjust(6) + ", " + _f(f["ci_hi"], "+.2f").rjust(6) + "]")
                lab = f["label"]
                if f["label"] == "inconclusive" and f.get("reason"):
                    lab += f" ({f['reason'].split(';')[0]})"
                elif f["label"] == "undefined" and f.get("cost_constant"):
                    lab += " (cost constant)"
                L.append("  " + op.ljust(10) + m.ljust(16) + num + ci + f"{f['n']:>7}{f['n_units']:>7}  {lab}")

    sc = result.get("scale")
    if sc and isinstance(sc.get("median_radius"), (int, float)):
        pr = sc.get("prune_in_radii")
        L.append("")
        pp = sc.get("prune_px")
        pp = format(pp, "g") if isinstance(pp, (int, float)) else "?"
        L.append(f"  scale: median vessel radius {sc['median_radius']:.1f} px; --prune-px {pp} = "
                 + (f"{pr:.1f} vessel radii." if isinstance(pr, (int, float)) else "? vessel radii."))
        if isinstance(pr, (int, float)) and not (1.0 <= pr <= 4.0):
            L.append("  ⚠  that is far from the ~2 radii this tool was calibrated on. Spur pruning is an\n"
                     "     ABSOLUTE pixel length, so results are not comparable across datasets sampled at\n"
                     "     different resolutions unless you match this ratio.")
    for op, why in sorted((result.get("operator_notes") or {}).items()):
        L.append("")
        L.append(f"⚠  {op}: {why}")
    if not findings:
        L.append("")
        L.append("No correlations could be computed. See above.")
    else:
        count = lambda lab: sum(1 for f in findings if f["label"] == lab)  # noqa: E731
        mu, mc = result.get("min_units", 10), result.get("min_cases", 12)
        L.append("")
        L.append(f"  labels ({len(findings)} cells; definitions as in the paper's Methods):")
        L.append(f"  undef  undefined — the cost or the metric is constant across the cell, so ρ does not exist   "
                 f"({count('undefined')})")
        L.append(f"  (ρ)?   inconclusive — the operator acted in fewer than {mu} units or fewer than {mc} cases; ρ is "
                 f"shown\n         for the record but is NOT a validated correlation and is never read as blind or "
                 f"anti-correlated   ({count('inconclusive')})")
        L.append(f"  *      blind — the interval includes zero: the metric cannot see that error type on this data   "
                 f"({count('blind')})")
        L.append(f"  !      anti-correlated — ρ is negative and the interval excludes zero: the metric moves the "
                 f"WRONG WAY   ({count('anti-correlated')})")
        L.append(f"         tracks — ρ is positive and the interval excludes zero   ({count('tracks')})")
        if floor:
            L.append("")
            L.append("  redraw floor: each reference is drawn a second time from its own skeleton and radii and\n"
                     "  scored against the original (median [min, max] over masks; the 'redraw' column is each\n"
                     "  metric's median; ideal 1, betti0_error and hd95 0). A value far from ideal means that\n"
                     "  quantity or metric cannot compare two independently drawn masks at that level. The\n"
                     "  correlations compare copies of one drawing and are not affected.")
        anti = [f for f in findings if f["label"] == "anti-correlated"]
        if anti:
            worst = min(anti, key=lambda f: f["aligned_rho"])
            L.append(f"    worst: {worst['metric']} vs {label_of(worst['cost'])} on {worst['operator']} "
                     f"(ρ {worst['aligned_rho']:+.2f}). When the metric moves the wrong way on an\n    error type, "
                     "check first whether the cost is the right one for that error type.")
    other = {k: v for k, v in (result.get("notes") or {}).items()
             if not k.startswith(("cases.", "redraw_floor.cases."))}
    if other:
        L.append("")
        L.extend(f"note: {k} is null: {why}" for k, why in other.items())
    n_case_notes = len(result.get("notes") or {}) - len(other)
    if n_case_notes:
        L.append(f"note: {n_case_notes} case value(s) are null; the JSON's notes say why, by case")
    return "\n".join(L)


def _progress(args):
    import time

    if args.quiet or args.json or not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def show(done, total):
        el = time.perf_counter() - t0
        left = f", ~{el / done * (total - done):.0f} s left" if done else ""
        sys.stderr.write(f"\raudit: {done}/{total} cases, {el:.0f} s elapsed{left}   ")
        if done == total:
            sys.stderr.write("\r" + " " * 72 + "\r")
        sys.stderr.flush()

    return show


def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands import audit
    from segscore.commands._declare import from_namespace

    result = audit.compute(progress=_progress(args), figure=False, **from_namespace(audit, args))
    text = None
    if not args.json:
        text = format_report(result)
        if result.get("recommendation") is not None:
            from segscore.curvilinear.advice import format_recommendation

            lifted = {k[len("recommendation."):]: why for k, why in (result.get("notes") or {}).items()
                      if k.startswith("recommendation.")}  # its notes, which the result carries at the top
            text += ("\n\nWhich metric should I report? (for the profiled predictions)\n"
                     + format_recommendation({**result["recommendation"], "notes": lifted}))
    show(args, result, text, module=audit)
    return 0
