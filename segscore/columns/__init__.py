"""Column-level targets (ScrollGT ``score-columns``): text columns vs gutters, line periodicity.

    from segscore import columns
    result = columns.score_columns("pred.npy", "pherc1667_merged_columns", origin=(0, 0))

See :mod:`segscore.columns.score` for the definitions.
"""

from segscore.columns.score import (  # noqa: F401
    COLUMN_FLOORS,
    ColumnTarget,
    column_floors,
    format_columns,
    load_column_target,
    score_columns,
    score_columns_array,
)

__all__ = ["score_columns", "score_columns_array", "column_floors", "load_column_target", "format_columns",
           "ColumnTarget", "COLUMN_FLOORS"]
