"""Leaderboard figure: each model's headline value beside its floors, from plain rows.

A row is a dict::

    {"model": "unet-v3",            # required: what is ranked (str)
     "target": "PHerc0332-a",       # optional: what it was scored on (str; rows group by model and target)
     "value": 0.61,                 # required: the headline value, a finite number or None (null)
     "metric": "val_f1",            # optional: the headline's name (the y label when all rows share one)
     "floors": {"all_positive": 0.28, "uniform_random": 0.27},   # optional: name -> number or None
     "note": "..."}                 # optional: why value is null

Nothing here reads a results folder: ``segscore report`` (or a notebook) builds the rows.
"""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import FLOOR_COLOURS, PREDICTION, is_number, new_figure

__all__ = ["leaderboard", "check_rows"]


def check_rows(rows) -> list[dict]:
    """The rows as a list, each checked for the shape of the module docstring (ScoreError naming
    the row and the field otherwise)."""
    if isinstance(rows, dict) or not hasattr(rows, "__iter__"):
        raise ScoreError("leaderboard rows must be a list of dicts {model, target, value, floors}")
    rows = list(rows)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ScoreError(f"leaderboard row {i} is a {type(row).__name__}, not a dict {{model, target, value, "
                             "floors}")
        if not isinstance(row.get("model"), str) or not row["model"]:
            raise ScoreError(f"leaderboard row {i} has no model (a non-empty string)")
        if "value" not in row:
            raise ScoreError(f"leaderboard row {i} ({row['model']}) has no value (a number, or None with a note)")
        if row["value"] is not None and not is_number(row["value"]):
            raise ScoreError(f"leaderboard row {i} ({row['model']}): value {row['value']!r} is not a finite number "
                             "or None")
        floors = row.get("floors") or {}
        if not isinstance(floors, dict):
            raise ScoreError(f"leaderboard row {i} ({row['model']}): floors must be a dict name -> value")
        for name, v in floors.items():
            if v is not None and not is_number(v):
                raise ScoreError(f"leaderboard row {i} ({row['model']}): floor {name} = {v!r} is not a finite "
                                 "number or None")
    return rows


def leaderboard(rows, *, title: str = ""):
    """A bar chart: per row (model, target), the headline value (``gid="value:I"``, I the row's
    index) and beside it each of its floors (``"floor:I:NAME"``), one colour per floor name
    across rows. A null value or floor gets no bar (never a bar of 0) but the word "null".
    Refuses (ScoreError) no rows, and rows whose every value is null."""
    rows = check_rows(rows)
    if not rows:
        raise ScoreError("no leaderboard rows: nothing to draw")
    if not any(is_number(r["value"]) for r in rows):
        why = next((r.get("note") for r in rows if r.get("note")), None)
        raise ScoreError("every leaderboard row's value is null" + (f" ({str(why).splitlines()[0]})" if why else "")
                         + ": an empty chart would read as a score of zero")
    floor_names = list(dict.fromkeys(n for r in rows for n in (r.get("floors") or {})))
    colours = {n: FLOOR_COLOURS[k % len(FLOOR_COLOURS)] for k, n in enumerate(floor_names)}
    per_group = 1 + len(floor_names)
    width = 0.8 / per_group
    values = [float(v) for r in rows for v in [r["value"], *(r.get("floors") or {}).values()] if is_number(v)]
    top, bottom = max(values + [0.0]), min(values + [0.0])
    span = (top - bottom) or 1.0
    fig, (ax,) = new_figure((max(6.0, 0.5 * per_group * len(rows) + 2.5), 4.4))
    for i, row in enumerate(rows):
        own = row.get("floors") or {}
        bars = [(0, PREDICTION, row["value"], f"value:{i}")]
        bars += [(1 + k, colours[n], own[n], f"floor:{i}:{n}") for k, n in enumerate(floor_names) if n in own]
        for j, colour, v, gid in bars:  # fixed slots: a floor a row lacks leaves its slot empty
            x = i - 0.4 + (j + 0.5) * width
            if is_number(v):
                ax.bar(x, v, width * 0.92, color=colour, gid=gid)
                ax.text(x, v + 0.01 * span if v >= 0 else v - 0.01 * span, f"{v:.3g}", ha="center",
                        va="bottom" if v >= 0 else "top", fontsize=7)
            else:
                ax.text(x, 0.01 * span, "null", ha="center", va="bottom", fontsize=7, rotation=90)
    from matplotlib.patches import Patch

    metrics = {r.get("metric") for r in rows}
    metric = metrics.pop() if len(metrics) == 1 else None
    handles = [Patch(facecolor=PREDICTION, label=metric or "headline value")]
    handles += [Patch(facecolor=colours[n], label=n if n in ("control", "oracle") or n.startswith(("control", "oracle"))
                      else f"floor {n}") for n in floor_names]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["model"] + (f"\n{r['target']}" if r.get("target") else "") for r in rows], fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylim(min(0.0, bottom - 0.08 * span), top + 0.12 * span)
    ax.set_ylabel(metric or "headline value")
    ax.axhline(0.0, color="#444444", lw=0.6)
    ax.set_title(title or "leaderboard: each model's headline beside its floors", fontsize=10)
    ax.grid(axis="y", alpha=0.25)
    return fig
