"""Instance segmentations scored against truth: spacr.scorecard's API on a sparse contingency table.

``import segscore.objects`` loads numpy and this package's plain-Python parts only; numba
kernels, scipy and matplotlib load when a function needs them (no torch, no dask).
"""

from __future__ import annotations

import importlib

_WHERE = {
    "ContingencyTable": "table", "contingency_table": "table", "as_labels": "table",
    "Match": "matching", "match_objects": "matching", "iou_matrix": "matching",
    "average_precision": "matching", "DEFAULT_IOU_THRESHOLDS": "matching",
    "matching_stardist": "matching",
    "dice": "metrics", "counts_and_areas": "metrics", "splits_and_merges": "metrics",
    "boundary_f1": "metrics", "score_segmentation": "metrics", "compare_against_baseline": "metrics",
    "DEFAULT_BOUNDARY_TOLERANCES": "metrics", "DEFAULT_MINIMUM_OVERLAP": "metrics",
    "per_object_rows": "metrics", "PER_OBJECT_COLUMNS": "metrics",
    "surface_distances": "surface", "directed_distances": "surface",
    "score_classifier": "classifier", "compare_classifier_against_baseline": "classifier",
    "HoldoutField": "holdout", "HoldoutSet": "holdout", "HoldoutScore": "holdout",
    "load_holdout": "holdout", "verify_holdout": "holdout", "score_holdout": "holdout",
    "score_model_on_holdout": "holdout", "scorecard_rows": "holdout", "scorecard_csv": "holdout",
    "read_scorecard_csv": "holdout", "scorecard_is_present": "holdout", "headline": "holdout",
    "scorecard_figure": "holdout", "CHART_METRICS": "holdout", "NO_SCORECARD": "holdout",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"segscore.objects.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'segscore.objects' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
