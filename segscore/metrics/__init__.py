"""Statistics shared by the families.

:mod:`segscore.metrics.ranking`: threshold counts, exact Mann-Whitney AUC, average precision,
F-beta sweeps and ROC / PR curve points of a binary score, from two class histograms on ordered
levels (or from raw, optionally weighted, scores). Importing it loads numpy only.
"""
