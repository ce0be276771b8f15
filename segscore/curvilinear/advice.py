"""Which metric should I report? The audit's findings read for the error types a profile found.

    from segscore.curvilinear.advice import recommend, format_recommendation
    rec = recommend(findings, prof)                 # findings: the audit's; prof: profile(...)'s
    print(format_recommendation(rec))

(``segscore.curvilinear.recommend`` is this module's :func:`recommend`.)

curvicost's "Which metric should I report?", steps 3 to 5, for these predictions:

1. the **unexplained** share comes first (the profile's mean ``residual``): the part of the
   disagreement no combination of the five operators reproduces, about which the audit says
   nothing;
2. the **error types** the profile finds are the operators whose mean share is at least
   ``min_share`` (default 10 %), largest first;
3. for each, the audit's cells against the chosen quantity (default: the audit's first cost)
   under that operator, by label: ``tracks`` (best ρ first), ``blind`` (``*``),
   ``anti-correlated`` (``!``), ``inconclusive`` (ρ shown for the record, never a verdict) and
   ``undefined`` (the cost or the metric does not move; for ``bridge`` against reachable length
   the cost cannot register the error, which says the cost is the wrong one for it);
4. ``report``: the metrics that track under every error type found that has a verdict (an error
   type whose cells are all undefined or inconclusive is named, not counted), best worst-case ρ
   first;
   ``avoid``: the metrics blind or anti-correlated under any of them, with where; and, as the spec
   says, report the cost itself as well where both masks are at hand.

``findings`` is shaped like :func:`segscore.curvilinear.findings.findings_from_cases`'s result
(``costs``, ``findings`` rows with ``cost``, ``operator``, ``metric``, ``label``, ``aligned_rho``,
``ci_lo``, ``ci_hi``, ``n``, ``n_units``, ``reason``); ``profile`` like
:func:`segscore.curvilinear.profiling.profile`'s (its ``mean``; a single row of ``predictions``
without one is read as the mean).
"""

from __future__ import annotations


from segscore.errors import ScoreError

__all__ = ["recommend", "format_recommendation", "MIN_SHARE"]

OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
MIN_SHARE = 0.10
UNEXPLAINED_FLAG = 0.30
_CELL_KEYS = ("metric", "aligned_rho", "ci_lo", "ci_hi", "n", "n_units", "reason")


def _mean_of(profile: dict) -> tuple[dict, float | None, int]:
    if not isinstance(profile, dict):
        raise ScoreError(f"profile: expected the dict profile(...) returns, got {type(profile).__name__}")
    mean = profile.get("mean")
    rows = profile.get("predictions")
    if mean is None:
        if isinstance(rows, list) and len(rows) == 1 and isinstance(rows[0], dict):
            mean = rows[0]
        elif "shares" in profile:  # one row given directly (curvicost's row shape)
            mean, rows = profile, [profile]
        else:
            raise ScoreError("profile: has no \"mean\" and no single prediction row; fix: pass the dict "
                             "profile(...) returns (or `segscore profile --json`'s output)")
    shares = mean.get("shares")
    if not isinstance(shares, dict):
        raise ScoreError("profile: its mean has no \"shares\" dict; fix: pass the dict profile(...) returns")
    n = len(rows) if isinstance(rows, list) else 1
    return shares, mean.get("residual"), n


def _cells(findings: dict) -> list:
    if not isinstance(findings, dict) or not isinstance(findings.get("findings"), list):
        raise ScoreError("findings: expected the audit's result, a dict with a \"findings\" list of cells; fix: pass "
                         "findings_from_cases(...)'s result")
    rows = findings["findings"]
    for i, f in enumerate(rows):
        if not isinstance(f, dict) or not all(k in f for k in ("cost", "operator", "metric", "label")):
            raise ScoreError(f"findings: cell {i} lacks cost, operator, metric or label; fix: pass "
                             "findings_from_cases(...)'s result")
    return rows


def _cell(f: dict) -> dict:
    out = {k: f.get(k) for k in _CELL_KEYS}
    if out["reason"] is None:
        out["reason"] = f.get("label", "")  # a row explains its own nulls: an undefined ρ is its label
    return out


def recommend(findings: dict, profile: dict, *, quantity: str | None = None, min_share: float = MIN_SHARE) -> dict:
    """Answer "which metric should I report?" for the predictions a profile describes.

    Parameters
    ----------
    findings : dict
        The audit's result (:func:`segscore.curvilinear.findings.findings_from_cases`).
    profile : dict
        :func:`segscore.curvilinear.profiling.profile`'s result for one method's predictions.
    quantity : str, optional
        The cost the metric should stand in for (default: the audit's first cost).
    min_share : float
        The smallest mean share an error type needs to count as one the method makes (0.10).

    Returns
    -------
    dict
        ``quantity``; ``unexplained`` (mean residual) and ``unexplained_flag`` (over 30 %);
        ``n_predictions``; ``error_types`` (one row per operator with share >= ``min_share``,
        largest first: ``operator``, ``share``, ``tracks``, ``blind``, ``anti_correlated``,
        ``inconclusive``, ``undefined`` (each a list of cells: metric, aligned_rho, ci_lo,
        ci_hi, n, n_units, reason) and ``reason`` (why the list is empty, or null)); ``minor``
        ({operator: share} below ``min_share``); ``report`` (metrics tracking under every error
        type found that has a verdict, best worst-case ρ first: metric, min_rho, rho {operator: ρ});
        ``report_over`` (those error types); ``avoid``
        (metric, blind_under, anti_correlated_under); ``reading`` (the answer as sentences,
        unexplained first); ``notes``.
    """
    try:
        min_share = float(min_share)
    except (TypeError, ValueError):
        raise ScoreError(f"min_share: must be a number in [0, 1], got {min_share!r}") from None
    if not (0.0 <= min_share <= 1.0):
        raise ScoreError(f"min_share: must be in [0, 1], got {min_share!r}")
    cells = _cells(findings)
    costs = list(findings.get("costs") or dict.fromkeys(f["cost"] for f in cells))
    if quantity is None:
        if not costs:
            raise ScoreError("findings: names no cost and has no cells; fix: pass an audit that scored a quantity")
        quantity = costs[0]
    elif quantity not in costs and not any(f["cost"] == quantity for f in cells):
        raise ScoreError(f"quantity: {quantity!r} is not a cost the audit scored ({', '.join(costs) or 'none'}); "
                         "fix: audit against it, or name one of those")
    shares, unexplained, n_pred = _mean_of(profile)
    notes: dict = {}
    if unexplained is None:
        notes["unexplained"] = "the profile has no residual (every prediction equals the reference)"
        notes["unexplained_flag"] = notes["unexplained"]

    found = sorted(((op, s) for op, s in shares.items() if s is not None and s >= min_share),
                   key=lambda kv: (-kv[1], OPERATORS.index(kv[0]) if kv[0] in OPERATORS else 99))
    minor = {op: s for op, s in shares.items() if s is not None and s < min_share}
    mine = [f for f in cells if f["cost"] == quantity]
    error_types = []
    for op, share in found:
        here = [f for f in mine if f["operator"] == op]
        groups = {lab: [_cell(f) for f in here if f["label"] == lab]
                  for lab in ("tracks", "blind", "anti-correlated", "inconclusive", "undefined")}
        groups["tracks"].sort(key=lambda c: -(c["aligned_rho"] if c["aligned_rho"] is not None else -9))
        reason = None
        if not here:
            reason = (f"the audit has no cell for {op} against {quantity}: the operator acted in too few cases "
                      "(see the audit's operator notes)")
        elif not groups["tracks"]:
            if len(groups["undefined"]) == len(here):
                reason = (f"every cell of {op} against {quantity} is undefined: the cost does not move under this "
                          "error type, so it is the wrong quantity for it; audit against one it can change")
            elif not (groups["blind"] or groups["anti-correlated"]):
                reason = f"no cell of {op} against {quantity} carries a verdict yet: audit more reference masks"
            else:
                reason = f"no metric tracks {quantity} under {op}"
        error_types.append({"operator": op, "share": float(share), "tracks": groups["tracks"],
                            "blind": groups["blind"], "anti_correlated": groups["anti-correlated"],
                            "inconclusive": groups["inconclusive"], "undefined": groups["undefined"],
                            "reason": reason})

    # metrics that track under every error type found; metrics to avoid
    report, avoid = [], []
    judged = [et for et in error_types if et["tracks"] or et["blind"] or et["anti_correlated"]]
    if judged:
        metrics = list(dict.fromkeys(f["metric"] for f in mine))
        for m in metrics:
            rho = {}
            for et in judged:
                hit = next((c for c in et["tracks"] if c["metric"] == m), None)
                if hit is None:
                    break
                rho[et["operator"]] = hit["aligned_rho"]
            else:
                report.append({"metric": m, "min_rho": min(rho.values()), "rho": rho})
            blind = [et["operator"] for et in error_types if any(c["metric"] == m for c in et["blind"])]
            anti = [et["operator"] for et in error_types if any(c["metric"] == m for c in et["anti_correlated"])]
            if blind or anti:
                avoid.append({"metric": m, "blind_under": blind, "anti_correlated_under": anti})
        report.sort(key=lambda r: -r["min_rho"])
    rec = {"quantity": quantity, "unexplained": unexplained,
           "unexplained_flag": None if unexplained is None else bool(unexplained > UNEXPLAINED_FLAG),
           "n_predictions": n_pred, "min_share": min_share, "error_types": error_types, "minor": minor,
           "report": report, "report_over": [et["operator"] for et in judged], "avoid": avoid, "reading": [],
           "notes": notes}
    rec["reading"] = _reading(rec, shares)
    return rec


def _rho(c: dict) -> str:
    r = c.get("aligned_rho")
    if r is None:
        return "undef"
    lo, hi = c.get("ci_lo"), c.get("ci_hi")
    ci = f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""
    return f"{r:+.2f}{ci}"


def _reading(rec: dict, shares: dict) -> list[str]:
    q = rec["quantity"]
    out = []
    u = rec["unexplained"]
    if u is None:
        out.append("Unexplained: none to speak of -- the predictions equal the reference, so there is no error "
                   "to attribute and no metric choice to make from them.")
    else:
        out.append(f"Unexplained: {100 * u:.0f}% of the disagreement is reproduced by no combination of the five "
                   "operators; the audit says nothing about that part"
                   + (" (over 30%: read the audit's columns as describing these predictions only in part; the "
                      "commonest cause is over-tracing, which only `bridge` models)." if rec["unexplained_flag"]
                      else "."))
    ets = rec["error_types"]
    if not ets:
        have = {op: s for op, s in shares.items() if s is not None}
        out.append(f"No error type reaches {100 * rec['min_share']:.0f}% of the explained part"
                   + (" (the profile has no shares)." if not have else "."))
        return out
    out.append(f"Error types these predictions make (share >= {100 * rec['min_share']:.0f}%), against {q}:")
    for et in ets:
        head = f"  {et['operator']} {100 * et['share']:.0f}%: "
        parts = []
        if et["tracks"]:
            parts.append("tracks " + ", ".join(f"{c['metric']} {_rho(c)}" for c in et["tracks"]))
        if et["blind"]:
            parts.append("blind (*) " + ", ".join(f"{c['metric']} {_rho(c)}" for c in et["blind"]))
        if et["anti_correlated"]:
            parts.append("anti-correlated (!) " + ", ".join(f"{c['metric']} {_rho(c)}" for c in et["anti_correlated"]))
        if et["inconclusive"]:
            parts.append("inconclusive (no verdict) " + ", ".join(c["metric"] for c in et["inconclusive"]))
        if et["reason"]:
            parts.append(et["reason"])
        out.append(head + "; ".join(parts))
    over = rec["report_over"]
    left = [et["operator"] for et in ets if et["operator"] not in over]
    where = ("every error type above" if not left else
             f"{', '.join(over)} ({', '.join(left)}: no verdict against {q}, see above)")
    if not over:
        out.append(f"No error type above has a verdict against {q}: the audit cannot choose a metric for these "
                   "predictions yet.")
    elif rec["report"]:
        best = rec["report"][0]
        out.append(f"Report {best['metric']}: it tracks {q} under {where}, worst ρ {best['min_rho']:+.2f}; give "
                   "its ρ per error type beside any pooled value"
                   + (f". Also tracking there: {', '.join(r['metric'] for r in rec['report'][1:])}."
                      if len(rec["report"]) > 1 else "."))
    else:
        out.append(f"No metric tracks {q} under {where}: report per error type, or audit more masks or another "
                   "quantity.")
    for a in rec["avoid"]:
        why = []
        if a["blind_under"]:
            why.append("blind under " + ", ".join(a["blind_under"]))
        if a["anti_correlated_under"]:
            why.append("anti-correlated under " + ", ".join(a["anti_correlated_under"]))
        out.append(f"Do not report {a['metric']}: {'; '.join(why)}.")
    out.append(f"If you hold both masks, report {q} itself as well: the metric is the stand-in for when only "
               "scores are published.")
    return out


def format_recommendation(rec: dict) -> str:
    """The recommendation as text: its reading, unexplained share first, then any notes."""
    lines = list(rec.get("reading") or [])
    if rec.get("minor"):
        lines.append("Below the share threshold: " + ", ".join(f"{op} {100 * s:.0f}%" for op, s in rec["minor"].items()))
    for k, why in (rec.get("notes") or {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)
