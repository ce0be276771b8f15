"""Figures of results (the ``plot`` extra: ``pip install 'segscore[plot]'``).

Each function takes a family's result (and, where the result dict does not hold them, the arrays
the API returns on request) and returns a :class:`matplotlib.figure.Figure`; it never shows it
and never touches pyplot's global state. matplotlib is imported inside the functions, so
``import segscore.figures`` is free. An empty chart is refused with a one-line
:class:`segscore.errors.ScoreError` (a null metric says so, with its note).

============================  =====================================================================
:func:`target_curves`         ink target: ROC and precision-recall curves with the floors
                              (``score_target(..., return_curves=True)`` gives ``(result, curves)``)
:func:`auc_bootstrap`         auc: the bootstrap distribution of the AUC, its 95 % interval, the
                              control's AUC (``score_files(..., return_draws=True)``)
:func:`auc_compare`           auc: the paired-difference distribution of ``--compare``
:func:`auc_draws`             both of the above side by side (what ``segscore auc --plot`` draws)
:func:`objects_ap`            objects: AP (TP / (TP + FP + FN)) against the IoU threshold
:func:`fiber_erl`             fibers: ERL and merge-penalized ERL against the floors and the oracle
:func:`audit_bars`            curvilinear audit: per metric, ρ per operator with its interval,
                              coloured by label
:func:`leaderboard`           a headline value per model beside its floors, control or oracle: takes
                              ``report(folder)`` (``of="target:roc_auc"``), its ``.bars(...)`` or
                              plain rows (:mod:`segscore.figures.board` documents the row shape)
:func:`surfaces_terms`        surfaces: the leaderboard score, its terms and the Betti counts per
                              dimension of one pair
:func:`surfaces_cases`        surfaces folder mode: histograms of the per-case scores
============================  =====================================================================

:func:`save` writes a figure atomically, PNG or SVG by the suffix. On the command line,
``--plot FILE.png|svg`` on ``auc``, ``target``, ``objects``, ``fibers``, ``audit``, ``surfaces``
and ``report`` draws the figure to FILE after the result is written; the JSON and text output do
not change.

Layering: this package sits above the families (it may import them) and below the CLI and the
batch; no family imports it.
"""

from __future__ import annotations

import importlib

#: where each public name lives: a submodule is imported when one of its names is first used, so
#: ``import segscore.figures._base`` (what every command's ``--plot`` option needs) loads no other
#: figure module
_WHERE = {
    **dict.fromkeys(("FORMATS", "draw_after", "format_of", "plot_file", "require_matplotlib", "save"), "_base"),
    **dict.fromkeys(("board_rows", "check_rows", "leaderboard"), "board"),
    "audit_bars": "curvilinear",
    "fiber_erl": "fibers",
    **dict.fromkeys(("auc_bootstrap", "auc_compare", "auc_draws", "target_curves"), "ink"),
    "objects_ap": "objects",
    **dict.fromkeys(("surfaces_cases", "surfaces_terms"), "topology"),
}


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"segscore.figures.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'segscore.figures' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = ["target_curves", "auc_bootstrap", "auc_compare", "auc_draws", "objects_ap", "fiber_erl", "audit_bars",
           "leaderboard", "surfaces_terms", "surfaces_cases", "board_rows", "check_rows", "save", "format_of", "plot_file",
           "require_matplotlib", "FORMATS"]
