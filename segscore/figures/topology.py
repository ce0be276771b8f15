"""Surfaces figures (``segscore surfaces --plot FILE``): the terms of one pair's leaderboard score,
and the distribution of the per-case scores of a folder."""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import PREDICTION, is_number, new_figure, refuse_null

__all__ = ["surfaces_terms", "surfaces_cases", "TERMS", "CASE_FIELDS"]

#: the bars of :func:`surfaces_terms`, left to right: the leaderboard score and its three terms,
#: then TopoScore's per-dimension F1
TERMS = ("leaderboard", "toposcore", "surface_dice", "voi_score", "topoF1_0", "topoF1_1", "topoF1_2")
#: the per-case fields :func:`surfaces_cases` draws, one panel each (all in [0, 1] but ``voi_total``)
CASE_FIELDS = ("leaderboard", "toposcore", "surface_dice", "voi_score", "voi_total")


def surfaces_terms(result: dict):
    """One pair's score: a bar per entry of :data:`TERMS` (``gid="bar:FIELD"``, height the
    result's value; a null gets no bar, the word "null" at its place), and the Betti counts of
    each dimension, matched, predicted and true (``gid="betti:dimK:matched|pred|gt"``).

    ``result`` is what ``segscore.api.surfaces(truth, pred)`` (``segscore surfaces PRED TRUTH
    --json``) returns. Refuses (ScoreError) another dict, and a result whose leaderboard is null
    (the note says why)."""
    if not isinstance(result, dict) or "leaderboard" not in result or "topology" not in result:
        raise ScoreError("not a surfaces result (no leaderboard and topology); give what segscore.api.surfaces "
                         "returns (folder mode: surfaces_cases)")
    if not is_number(result["leaderboard"]):
        refuse_null(result, "leaderboard", "the surfaces score")
    fig, (ax, bx) = new_figure((11.0, 4.2), ncols=2)
    for i, field in enumerate(TERMS):
        v = result.get(field)
        if is_number(v):
            ax.bar(i, v, color=PREDICTION if i else "#1b3d8f", gid=f"bar:{field}")
            ax.annotate(f"{v:.3f}", (i, v), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
        else:
            ax.text(i, 0.02, "null", ha="center", fontsize=8, color="#cc4125")
    ax.set_xticks(range(len(TERMS)), TERMS, rotation=30, ha="right", fontsize=8)
    ax.set(ylim=(0, 1.08), ylabel="score (1 is perfect)")
    weights = (result.get("params") or {}).get("weights")
    ax.set_title("leaderboard = " + (" + ".join(f"{w:g}·{t}" for w, t in zip(weights, TERMS[1:4]))
                                     if weights else "its three terms"), fontsize=9)
    ax.grid(axis="y", alpha=0.25)
    width = 0.27
    for k in range(3):
        d = result["topology"].get(f"dim{k}") or {}
        for j, (what, colour) in enumerate((("matched", PREDICTION), ("pred", "#8c8c8c"), ("gt", "#d08a2e"))):
            n = d.get(what)
            if is_number(n):
                bx.bar(k + (j - 1) * width, n, width, color=colour, gid=f"betti:dim{k}:{what}",
                       label=what if k == 0 else None)
    bx.set_xticks(range(3), [f"dim {k}" for k in range(3)])
    bx.set(ylabel="Betti features")
    bx.set_title("Betti matching per dimension", fontsize=9)
    bx.legend(fontsize=7, frameon=False)
    return fig


def surfaces_cases(rows, *, missing=None):
    """The per-case scores of a folder (``segscore surfaces --gt-dir ... --plot FILE``): a histogram
    per entry of :data:`CASE_FIELDS` (``gid="hist:FIELD"``) over the cases whose value is a number.

    ``rows``: the rows of ``metrics_per_case.csv`` (dicts with ``case`` and the fields; a null
    value, a case without a prediction under ``--missing null``, is left out and counted in the
    panel's title). ``missing``: the policy the rows were written under, named in the title.
    Refuses (ScoreError) rows without any leaderboard value."""
    rows = list(rows)
    if not rows or not all(isinstance(r, dict) and "leaderboard" in r for r in rows):
        raise ScoreError("not the per-case rows of a surfaces folder (no leaderboard column); give the rows of "
                         "metrics_per_case.csv")
    if not any(is_number(_number(r.get("leaderboard"))) for r in rows):
        raise ScoreError("cannot draw the surfaces cases: no case has a leaderboard score (every one is null)")
    fig, axes = new_figure((4.0 * len(CASE_FIELDS), 3.4), ncols=len(CASE_FIELDS))
    for ax, field in zip(axes, CASE_FIELDS):
        values = [_number(r.get(field)) for r in rows]
        xs = [v for v in values if is_number(v)]
        left = len(values) - len(xs)
        if xs:
            ax.hist(xs, bins=min(30, max(5, len(xs))), color=PREDICTION, gid=f"hist:{field}")
        ax.set(xlabel=field, ylabel="cases")
        ax.set_title(f"{len(xs)} case{'' if len(xs) == 1 else 's'}" + (f", {left} null" if left else ""), fontsize=9)
    if missing:
        fig.suptitle(f"per-case scores (--missing {missing})", fontsize=10)
    return fig


def _number(v):
    """A CSV cell or a value as a float (an empty cell None)."""
    if v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
