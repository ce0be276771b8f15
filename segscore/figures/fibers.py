"""Fibers figure: ERL and merge-penalized ERL of a prediction against its target's floors and oracle."""

from __future__ import annotations

from segscore.errors import ScoreError
from segscore.figures._base import FLOOR_COLOURS, PREDICTION, is_number, new_figure, refuse_null

__all__ = ["fiber_erl"]

#: the two bars of every row, in order
ERL_KEYS = ("erl", "erl_merge_penalized")


def fiber_erl(card: dict):
    """Paired bars (ERL, merge-penalized ERL) for the prediction, each floor and the oracle of a
    ``segscore fibers`` card, and the class oracle's ERL as a line (``gid="class_oracle_erl"``).

    Every bar carries ``gid="ROW:KEY"`` (``"prediction:erl"``, ``"floor_connected_components:
    erl_merge_penalized"``, ``"oracle:erl"``); a null value gets no bar (never a bar of 0) but the
    word "null" at its place. Refuses (ScoreError) a card whose own ``metrics.erl`` is null (the
    note says why): a chart without the prediction's ERL would read as zero."""
    metrics = card.get("metrics") if isinstance(card, dict) else None
    if not isinstance(metrics, dict) or "erl" not in metrics:
        raise ScoreError("not a fibers card (no metrics.erl); give what score_fibers returns")
    if not is_number(metrics.get("erl")):
        refuse_null(card, "metrics.erl", "ERL against the floors")
    rows = [("prediction", str(card.get("prediction", "prediction")), metrics)]
    floors = card.get("floors") or {}
    rows += [(name, name[len("floor_"):] if name.startswith("floor_") else name, row)
             for name, row in floors.items() if isinstance(row, dict) and name.startswith("floor_")]
    oracle = card.get("oracle") if isinstance(card.get("oracle"), dict) else floors.get("oracle")  # older cards
    if isinstance(oracle, dict):
        rows.append(("oracle", "oracle", oracle))
    fig, (ax,) = new_figure((max(7.5, 1.25 * len(rows) + 4.0), 4.4))
    width = 0.38
    top = max([float(r.get(k)) for _, _, r in rows for k in ERL_KEYS if is_number(r.get(k))]
              + ([float(card["class_oracle_erl"])] if is_number(card.get("class_oracle_erl")) else []))
    for i, (row_id, _, row) in enumerate(rows):
        colour = PREDICTION if row_id == "prediction" else FLOOR_COLOURS[(i - 1) % len(FLOOR_COLOURS)]
        for j, key in enumerate(ERL_KEYS):
            x = i + (j - 0.5) * width
            v = row.get(key)
            if is_number(v):
                ax.bar(x, v, width, color=colour, alpha=1.0 if j == 0 else 0.55, hatch=None if j == 0 else "//",
                       edgecolor="white", gid=f"{row_id}:{key}")
                ax.text(x, v + 0.01 * top, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
            else:
                ax.text(x, 0.01 * top, "null", ha="center", va="bottom", fontsize=7, rotation=90)
    if is_number(card.get("class_oracle_erl")):
        ax.axhline(card["class_oracle_erl"], color="#38761d", lw=1.2, ls="--", gid="class_oracle_erl",
                   label=f"class oracle ERL {card['class_oracle_erl']:.1f}")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="#555555", label="ERL (solid)"),
               Patch(facecolor="#555555", alpha=0.55, hatch="//", edgecolor="white",
                     label="merge-penalized ERL (hatched)")]
    handles += ax.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label for _, label, _ in rows], fontsize=8, rotation=15)
    ax.set_ylim(0, 1.15 * top if top > 0 else 1.0)
    ax.set_ylabel("ERL and merge-penalized ERL (voxels)")
    title = (f"fiber target {card.get('target', '')} ({card.get('size_class', '?')}^3, tolerance "
             f"{card.get('tolerance', 0):g} vox; floors {card.get('floors_source', '?')})")
    if isinstance(floors.get("floor_connected_components"), dict):
        title += f"\nERL {'BELOW' if card.get('below_baseline') else 'not below'} the connected-components floor"
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.25)
    return fig
