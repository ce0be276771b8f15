"""Leaderboard figure: each model's headline value beside its floors, control or oracle.

:func:`leaderboard` takes what :mod:`segscore.batch.report` gives as it is: a ``Report``
(``leaderboard(report(folder))``, its first table's first headline, or ``of="target:roc_auc"``),
or the rows of ``Report.bars(...)``; and plain rows a notebook builds. :func:`board_rows` is the one
conversion (``segscore report --plot`` uses it too). A plain row is a dict::

    {"model": "unet-v3",            # required: what is ranked (str)
     "target": "PHerc0332-a",       # optional: what it was scored on (str; rows group by model and target)
     "value": 0.61,                 # required: the headline value, a finite number or None (null)
     "metric": "val_f1",            # optional: the headline's name (the y label when all rows share one)
     "floors": {"all_positive": 0.28, "uniform_random": 0.27},   # optional: name -> number or None
     "roles": {"all_positive": "floor"},   # optional: name -> floor | control | oracle (default floor)
     "note": "..."}                 # optional: why value is null

A row of ``Report.bars`` (``{"label", "command", "headline", "value", "references", "roles", ...}``)
becomes ``{"model": label, "metric": headline, "value": value, "floors": references, "roles": roles}``.
Nothing here reads a results folder (this package sits below the batch): the Report is duck-typed.
"""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import FLOOR_COLOURS, PREDICTION, is_number, new_figure

__all__ = ["leaderboard", "check_rows", "board_rows", "from_bars"]

#: the kinds of reference a bar may stand beside, as the batch report names them (its REFERENCE_ROLES)
ROLES = ("floor", "control", "oracle")


def _is_bar(row) -> bool:
    return isinstance(row, dict) and "model" not in row and "label" in row and "references" in row


def from_bars(bars) -> list[dict]:
    """The rows of ``Report.bars(...)`` as leaderboard rows (plain rows pass through unchanged)."""
    out = []
    for row in bars:
        if _is_bar(row):
            refs = row.get("references") or {}
            out.append({"model": row["label"], "metric": row.get("headline"), "value": row.get("value"),
                        "floors": dict(refs), "roles": dict(row.get("roles") or {}),
                        **({"command": row["command"]} if row.get("command") else {})})
        else:
            out.append(row)
    return out


def board_rows(source, of=None) -> tuple[list, str]:
    """``(rows, title)``: what :func:`leaderboard` draws from ``source`` - a ``Report`` (anything
    with a ``bars(command, headline)`` method; ``of`` = ``"COMMAND[:HEADLINE]"`` picks the table and
    headline, default the first table's first headline), the rows of ``Report.bars``, or plain rows.
    The title is ``"COMMAND: HEADLINE"`` when the rows say it, else empty. An unknown command or
    headline is a ScoreError naming the choices."""
    if callable(getattr(source, "bars", None)) and not isinstance(source, (dict, list, tuple)):
        command, _, headline = (of or "").partition(":")
        try:
            source = source.bars(command or None, headline or None)
        except KeyError as exc:
            raise ScoreError(str(exc.args[0]) if exc.args else f"no table {command!r} in the report") from None
    elif of:
        raise ScoreError("of= picks a table of a Report; these are rows already (pass the Report itself)")
    if isinstance(source, dict) or not hasattr(source, "__iter__"):
        raise ScoreError("leaderboard rows must be a list of dicts {model, target, value, floors}, the rows of "
                         "Report.bars(...) or a Report")
    rows = from_bars(list(source))
    heads = {(r.get("command"), r.get("metric")) for r in rows if isinstance(r, dict)}
    title = ""
    if len(heads) == 1:
        command, metric = heads.pop()
        title = f"{command}: {metric}" if command and metric else ""
    return rows, title


def check_rows(rows) -> list[dict]:
    """The rows as a list, each checked for the shape of the module docstring (ScoreError naming
    the row and the field otherwise)."""
    if isinstance(rows, dict) or not hasattr(rows, "__iter__"):
        raise ScoreError("leaderboard rows must be a list of dicts {model, target, value, floors}")
    rows = from_bars(rows)
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
        roles = row.get("roles") or {}
        bad = {n: r for n, r in roles.items() if r not in ROLES} if isinstance(roles, dict) else {"": roles}
        if bad:
            raise ScoreError(f"leaderboard row {i} ({row['model']}): roles must map a reference to one of "
                             f"{', '.join(ROLES)}, not {bad!r}")
    return rows


def _role(rows, name) -> str:
    for r in rows:
        role = (r.get("roles") or {}).get(name)
        if role:
            return role
    return "control" if name.startswith("control") else "oracle" if name.startswith("oracle") else "floor"


def _reference_label(name, role) -> str:
    if role == "floor":
        return f"floor {name}"
    return name if name == role else f"{role} {name}"


def _beside(roles) -> str:
    words = {"floor": "floors", "control": "control", "oracle": "oracle"}
    names = [words[k] for k in ROLES if k in roles]
    if not names:
        return ""
    return " beside its " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])


def leaderboard(rows, *, title: str = "", of: str | None = None, metric: str | None = None):
    """A bar chart: per row (model, target), the headline value (``gid="value:I"``, I the row's
    index) and beside it each of its references - floors, control, oracle - (``"floor:I:NAME"``),
    one colour per reference name across rows. A null value or reference gets no bar (never a bar
    of 0) but the word "null".

    ``rows``: a ``Report`` (``of="COMMAND[:HEADLINE]"`` picks the table), the rows of
    ``Report.bars(...)``, or plain rows (:func:`board_rows`). The y axis is labelled with the
    metric (``metric=``, else the rows' shared ``metric``/headline); the default title says what
    is drawn. Refuses (ScoreError) no rows, and rows whose every value is null."""
    rows, board_title = board_rows(rows, of)
    rows = check_rows(rows)
    if not rows:
        raise ScoreError("no leaderboard rows: nothing to draw")
    if not any(is_number(r["value"]) for r in rows):
        why = next((r.get("note") for r in rows if r.get("note")), None)
        raise ScoreError("every leaderboard row's value is null" + (f" ({str(why).splitlines()[0]})" if why else "")
                         + ": an empty chart would read as a score of zero")
    floor_names = list(dict.fromkeys(n for r in rows for n in (r.get("floors") or {})))
    roles = {n: _role(rows, n) for n in floor_names}
    colours = {n: FLOOR_COLOURS[k % len(FLOOR_COLOURS)] for k, n in enumerate(floor_names)}
    per_group = 1 + len(floor_names)
    width = 0.8 / per_group
    values = [float(v) for r in rows for v in [r["value"], *(r.get("floors") or {}).values()] if is_number(v)]
    top, bottom = max(values + [0.0]), min(values + [0.0])
    span = (top - bottom) or 1.0
    fig, (ax,) = new_figure((max(6.0, 0.5 * per_group * len(rows) + 3.5), 4.4))
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

    if metric is None:
        metrics = list(dict.fromkeys(r.get("metric") for r in rows if r.get("metric")))
        metric = metrics[0] if len(metrics) == 1 else (" / ".join(metrics) if metrics else None)
    handles = [Patch(facecolor=PREDICTION, label=f"model's {metric}" if metric else "model's value")]
    handles += [Patch(facecolor=colours[n], label=_reference_label(n, roles[n])) for n in floor_names]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["model"] + (f"\n{r['target']}" if r.get("target") else "") for r in rows], fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylim(min(0.0, bottom - 0.08 * span), top + 0.12 * span)
    ax.set_ylabel(metric or "value (the rows name no metric; pass metric=)")
    ax.axhline(0.0, color="#444444", lw=0.6)
    if not title:
        what = board_title or (metric or "value")
        title = f"{what} per model" + _beside(set(roles.values()))
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.25)
    return fig
