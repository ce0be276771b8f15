"""Results as a table: one ``to_frame`` for any list of result dicts (pandas, imported here only).

Beside the result contract (:mod:`segscore.io.results`): each result becomes one row of its
flattened keys (:func:`segscore.io.results.flatten`: ``forward.auc``, ``metrics.roc_auc``,
``notes.forward.auc``, ``bootstrap.ci95.0``), columns in first-seen order; a null is a missing
value (``None`` in object columns, NaN in float ones: pandas' own, never written back to JSON).
"""

from __future__ import annotations


def _pandas():
    try:
        import pandas
    except ImportError:
        from segscore.errors import ScoreError

        raise ScoreError("to_frame needs pandas, which is not installed; pip install pandas "
                         "(or segscore[dist])") from None
    return pandas


def to_frame(results, *, flat: bool = False):
    """A pandas DataFrame with one row per result dict of ``results`` (any family's, or batch
    rows), columns the flattened keys; ``flat``: the dicts are flat already."""
    from segscore.io.results import flatten, jsonable

    pd = _pandas()
    rows = [dict(r) if flat else flatten(jsonable(r)) for r in results]
    columns = list(dict.fromkeys(k for r in rows for k in r))  # first-seen order
    return pd.DataFrame.from_records(rows, columns=columns)
