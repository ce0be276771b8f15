"""Benchmark statistics: is model A really better than B? (challengeR's methods, exact, in Python.)

:func:`analyse` takes a long table (CSV, Parquet, columns or rows: one row per case and model, a
column per metric) and returns intervals, paired comparisons, rankings and rank stability
(:mod:`segscore.stats.analysis`); ``segscore report --table FILE`` (or a results folder with
``--case TAG``) runs it from the command line (:mod:`segscore.stats.options`).

Layering: this package sits with ``metrics`` (it may import kernels, io and metrics; no family,
batch or cli module). Imported lazily: ``import segscore.stats`` pulls numpy only.
"""

from __future__ import annotations

__all__ = ["analyse", "Analysis", "build_suite", "natural_key", "wilcoxon_greater", "sign_flip_greater", "p_adjust"]

_WHERE = {"analyse": "analysis", "Analysis": "analysis", "build_suite": "table", "natural_key": "table",
          "wilcoxon_greater": "paired", "sign_flip_greater": "paired", "p_adjust": "paired"}


def __getattr__(name):
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"segscore.stats.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'segscore.stats' has no attribute {name!r}")
