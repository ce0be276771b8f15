"""The audit's ladders (curvicost 0.3.1's default and study ladders), its costs and their
labels, and the checks of a ladder given by hand (:func:`resolve_ladder`)."""

from __future__ import annotations

import math
import numbers

from segscore.errors import ScoreError, whole_number

OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
COUNTING = ("break", "bridge", "truncate")
#: curvicost 0.3.1's DEFAULT_SEVERITIES (its shortened ladder)
DEFAULT_SEVERITIES = {
    "break": (0.02, 0.05, 0.10, 0.20, 0.50),
    "bridge": (0.02, 0.05, 0.10, 0.20, 0.50),
    "truncate": (0.02, 0.05, 0.10, 0.20, 0.50),
    "radius": (0.70, 0.85, 1.15, 1.30),
    "boundary": (0.005, 0.02, 0.05, 0.10, 0.20),
}
#: curvicost 0.3.1's STUDY_SEVERITIES (the paper's ladder)
STUDY_SEVERITIES = {
    "break": (0.01, 0.02, 0.05, 0.10, 0.20, 0.35, 0.50),
    "bridge": (0.01, 0.02, 0.05, 0.10, 0.20, 0.35, 0.50),
    "truncate": (0.01, 0.02, 0.05, 0.10, 0.20, 0.35, 0.50),
    "radius": (0.50, 0.70, 0.85, 1.15, 1.30),
    "boundary": (0.002, 0.005, 0.01, 0.02, 0.05, 0.10, 0.20),
}
DEFAULT_SEEDS = 1
STUDY_SEEDS = 3
DEFAULT_N_BOOT = 1000
STUDY_N_BOOT = 2000
COSTS = ("traceable_frac", "conductance_twosided")
GRAPH_COSTS = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac")
BUILTIN_COSTS = GRAPH_COSTS + ("density_kept",)
#: curvicost's headings of the quantities
COST_LABELS = {
    "traceable_frac": "traceable length (reachable reference skeleton)",
    "conductance_twosided": "conductance (Kirchhoff, two-sided: excess is loss)",
    "conductance_frac": "conductance (Kirchhoff, raw fraction retained)",
    "traceable_single_frac": "traceable length (single pinned source)",
    "density_kept": "vessel density kept (foreground fraction; 1 - |d_pred/d_ref - 1|)",
}
ERL_METRICS = ("erl_star", "node_recall")
#: each operator's severity range: (low, high, low excluded)
SEVERITY_RANGE = {"break": (0.0, 1.0), "bridge": (0.0, 1.0), "truncate": (0.0, 1.0), "radius": (0.0, 3.0),
                  "boundary": (0.0, 1.0)}
from segscore.curvilinear.costfns import SIDED  # noqa: F401  (one definition)
MIN_UNITS = 10
MIN_CASES = 12


# ------------------------------------------------------------------------------------------
# seeds and ladders
# ------------------------------------------------------------------------------------------

def _levels(values, operator, what):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ScoreError(f"{what}: expected a list of numbers, got {values!r}")
    out = []
    lo, hi = SEVERITY_RANGE[operator]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ScoreError(f"{what}: {v!r} is not a finite number")
        v = float(v)
        if not (lo < v <= hi):
            raise ScoreError(f"{what}: {v:g} is outside ({lo:g}, {hi:g}]"
                             + ("; a radius scale factor" if operator == "radius" else "; a fraction"))
        if v in out:
            raise ScoreError(f"{what}: {v:g} is given twice; give each level once (a repeated level "
                             "repeats the same damaged copy)")
        out.append(v)
    return tuple(out)


def resolve_ladder(ladder="default", *, severities=None, radius_scales=None, boundary_fracs=None, seeds=None,
                   n_boot=None) -> dict:
    """The ladder an audit runs: ``{"name", "severities": {operator: levels}, "seeds", "n_boot"}``.

    ``ladder`` is ``"default"`` or ``"study"``; ``severities`` replaces the break, bridge and
    truncate rungs (a list), or any operator's (a dict ``{operator: levels}``, empty to skip it);
    ``radius_scales`` and ``boundary_fracs`` replace those two; ``seeds`` is a count (``range(N)``)
    or a list of seed numbers; ``n_boot`` the bootstrap resamples."""
    if ladder not in ("default", "study"):
        raise ScoreError(f"ladder {ladder!r}: use 'default' or 'study'")
    base = STUDY_SEVERITIES if ladder == "study" else DEFAULT_SEVERITIES
    sev = {op: tuple(v) for op, v in base.items()}
    custom = False
    if severities is not None:
        custom = True
        if isinstance(severities, dict):
            for op, v in severities.items():
                if op not in OPERATORS:
                    raise ScoreError(f"severities: {op!r} is not one of {', '.join(OPERATORS)}")
                sev[op] = _levels(v, op, f"severities[{op!r}]")
        else:
            for op in COUNTING:
                sev[op] = _levels(severities, op, "severities")
    if radius_scales is not None:
        custom = True
        sev["radius"] = _levels(radius_scales, "radius", "radius_scales")
    if boundary_fracs is not None:
        custom = True
        sev["boundary"] = _levels(boundary_fracs, "boundary", "boundary_fracs")
    if seeds is None:
        seed_list = tuple(range(STUDY_SEEDS if ladder == "study" else DEFAULT_SEEDS))
    elif isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ScoreError(f"seeds {seeds!r}: must be a whole number >= 1")
        seed_list = tuple(range(int(seeds)))
        custom = True
    else:
        try:
            seed_list = tuple(seeds)
        except TypeError:
            raise ScoreError(f"seeds {seeds!r}: give a count or a list of seed numbers") from None
        if not seed_list or any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0
                                for s in seed_list) or len(set(seed_list)) != len(seed_list):
            raise ScoreError(f"seeds {list(seed_list)!r}: give distinct whole numbers >= 0")
        seed_list = tuple(int(s) for s in seed_list)
        custom = True
    if n_boot is None:
        n_boot = STUDY_N_BOOT if ladder == "study" else DEFAULT_N_BOOT
    else:
        n_boot = whole_number(n_boot, "n_boot", 1)
        custom = True
    if not any(sev.values()):
        raise ScoreError("severities: every operator's ladder is empty; give at least one level")
    return {"name": ladder + (" (modified)" if custom else ""), "severities": sev, "seeds": seed_list,
            "n_boot": n_boot}



def _plan(ladder):
    """Every case spec of one reference, in the case table's order: (operator, severity, seed)."""
    out = []
    for op in OPERATORS:
        for s in ladder["severities"].get(op, ()):
            for seed in (ladder["seeds"] if op != "radius" else ladder["seeds"][:1]):
                out.append((op, float(s), int(seed)))
    return out
