"""Curvilinear figure: which metric tracks which cost, per error type (an audit's findings as bars)."""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import is_number, new_figure

__all__ = ["audit_bars", "LABEL_COLOURS"]

#: bar colour of each audit label (``undefined`` cells get no bar: a cross at 0)
LABEL_COLOURS = {"tracks": "#38761d", "blind": "#9e9e9e", "anti-correlated": "#cc0000", "inconclusive": "#f1c232",
                 "undefined": "#000000"}
_HATCH = ("", "//", "..", "xx", "\\\\", "++", "oo")


def _ordered(values, first):
    seen = list(dict.fromkeys(values))
    return [v for v in first if v in seen] + sorted(v for v in seen if v not in first)


def audit_bars(result: dict, *, costs=None):
    """One axes per cost (``costs``: these only, default every cost of the findings): for each
    metric a group of bars, one per operator, each the cell's sign-aligned Spearman ρ coloured by
    its label (:data:`LABEL_COLOURS`), with its 95 % cluster-bootstrap interval as a line.

    ``result`` is what ``segscore audit --json`` prints (:func:`segscore.curvilinear.auditing.audit`
    or ``audit_from_cases``). A bar's ``gid`` is ``"COST:OPERATOR:METRIC"``, its interval's
    ``"ci:COST:OPERATOR:METRIC"``; an undefined cell (ρ does not exist) is a cross at 0
    (``"undefined:COST:OPERATOR:METRIC"``), never a bar. Refuses (ScoreError) an audit without
    findings and one whose every cell is undefined."""
    from segscore.curvilinear.findings import METRIC_ORDER, OPERATORS

    findings = result.get("findings") if isinstance(result, dict) else None
    if not isinstance(findings, list):
        raise ScoreError("not an audit result (no findings); give what `segscore audit --json` prints")
    if not findings:
        why = "; ".join(f"{op}: {w}" for op, w in sorted((result.get("operator_notes") or {}).items()))
        raise ScoreError("the audit has no findings (no operator acted in 3 or more cases"
                         + (f"; {why.splitlines()[0]}" if why else "") + "): nothing to draw")
    all_costs = list(dict.fromkeys(f["cost"] for f in findings))
    if costs is not None:
        costs = [costs] if isinstance(costs, str) else list(costs)
        unknown = [c for c in costs if c not in all_costs]
        if unknown:
            raise ScoreError(f"cost {unknown[0]!r} is not in the audit's findings; choose from {', '.join(all_costs)}")
        findings = [f for f in findings if f["cost"] in costs]
    else:
        costs = all_costs
    if all(f.get("label") == "undefined" or not is_number(f.get("aligned_rho")) for f in findings):
        raise ScoreError("every cell of the audit is undefined (the cost or the metric is constant over each "
                         "cell, so no correlation exists): nothing to draw")
    metrics = _ordered([f["metric"] for f in findings], METRIC_ORDER)
    operators = _ordered([f["operator"] for f in findings], OPERATORS)
    cells = {(f["cost"], f["operator"], f["metric"]): f for f in findings}
    labels = result.get("cost_labels") or {}
    width = 0.8 / len(operators)
    fig, axes = new_figure((max(7.0, 0.75 * len(metrics) * max(1, len(operators)) / 3 + 3), 3.2 * len(costs)),
                           nrows=len(costs))
    for ax, cost in zip(axes, costs):
        for i, metric in enumerate(metrics):
            for j, op in enumerate(operators):
                f = cells.get((cost, op, metric))
                if f is None:
                    continue
                x = i - 0.4 + (j + 0.5) * width
                key = f"{cost}:{op}:{metric}"
                rho = f.get("aligned_rho")
                if f.get("label") == "undefined" or not is_number(rho):
                    ax.plot([x], [0.0], marker="x", ms=4, color="#555555", ls="none", gid=f"undefined:{key}")
                    continue
                ax.bar(x, rho, width * 0.92, color=LABEL_COLOURS.get(f["label"], "#777777"),
                       alpha=0.55 if f["label"] == "inconclusive" else 1.0, hatch=_HATCH[j % len(_HATCH)],
                       edgecolor="white", linewidth=0, gid=key)
                if is_number(f.get("ci_lo")) and is_number(f.get("ci_hi")):
                    ax.plot([x, x], [f["ci_lo"], f["ci_hi"]], color="#222222", lw=0.9, gid=f"ci:{key}")
        ax.axhline(0.0, color="#444444", lw=0.8)
        ax.set_xticks(range(len(metrics)))
        ax.set_xticklabels(metrics, fontsize=8, rotation=20)
        ax.set_xlim(-0.6, len(metrics) - 0.4)
        ax.set_ylim(-1.08, 1.08)
        ax.set_ylabel("sign-aligned Spearman ρ")
        ax.set_title(f"vs {labels.get(cost) or cost}", fontsize=10)
        ax.grid(axis="y", alpha=0.25)
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=LABEL_COLOURS[lab], alpha=0.55 if lab == "inconclusive" else 1.0, label=lab)
               for lab in ("tracks", "blind", "anti-correlated", "inconclusive")]
    handles += [Patch(facecolor="white", edgecolor="#444444", hatch=_HATCH[j % len(_HATCH)], label=op)
                for j, op in enumerate(operators)]
    axes[0].legend(handles=handles, fontsize=7, frameon=False, ncol=len(handles), loc="lower center",
                   bbox_to_anchor=(0.5, 1.1))
    n_units = result.get("n_units")
    crosses = any(f.get("label") == "undefined" or not is_number(f.get("aligned_rho")) for f in findings)
    fig.suptitle(f"audit: {result.get('n_cases', '?')} cases from {n_units if n_units is not None else '?'} "
                 f"reference mask(s)" + ("; undefined cells are crosses at 0" if crosses else ""), fontsize=10)
    return fig
