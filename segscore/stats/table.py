"""The input of the benchmark statistics: a long table (one row per task, case, model) as grids.

A long table has a column naming the case, one naming the model (``by``), one per metric, and
optionally a task and a cluster column. It is read from CSV, from Parquet (``pip install
'segscore[parquet]'``: pyarrow), or taken as a mapping of columns (``{"case": [...], ...}``, what
``pandas.DataFrame.to_dict("list")`` gives), a list of row dicts, or a pandas DataFrame.

A value is missing when its cell is empty, ``NA``, ``NaN``, ``null`` or ``None`` (or absent: a model
without a row for a case another model has). Ids are ordered naturally (``case2`` before
``case10``), never in file order, so the bootstrap draws are the same whatever order a table or a
results store was written in.
"""

from __future__ import annotations

import math
import re
from itertools import repeat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError

#: the cell texts read as a missing value
MISSING_TEXT = frozenset({"", "na", "nan", "null", "none"})
_DIGITS = re.compile(r"(\d+)")


def natural_key(value) -> tuple:
    """A sort key putting ``m2`` before ``m10`` (digit runs compare as numbers, text as text)."""
    parts = _DIGITS.split(str(value))
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in parts if p != "")


def natural_sorted(values) -> list:
    """``values`` (unique) in natural order (:func:`natural_key`)."""
    return sorted(set(values), key=natural_key)


def _factorize(values: list) -> tuple:
    """``(ids, codes)``: the distinct ``values`` (str) in natural order, and each value's position
    among them (int64), without a Python loop per value."""
    ids = natural_sorted(values)
    pos = {v: k for k, v in enumerate(ids)}
    return ids, np.fromiter(map(pos.__getitem__, values), np.int64, len(values))


def _number(cell, where: str) -> float:
    if cell is None:
        return math.nan
    if isinstance(cell, (int, float, np.integer, np.floating)) and not isinstance(cell, bool):
        v = float(cell)
    else:
        text = str(cell).strip()
        if text.lower() in MISSING_TEXT:
            return math.nan
        try:
            v = float(text)
        except ValueError:
            raise ScoreError(f"{where}: {cell!r} is not a number; give numbers (an empty cell or NA for a "
                             "missing value)") from None
    if math.isinf(v):
        raise ScoreError(f"{where}: {cell!r} is infinite; give a finite number or leave the cell empty (missing)")
    return v


def _column_numbers(values, where: str) -> np.ndarray:
    """A column as float64 (NaN where missing): one conversion when every cell is a number, else
    cell by cell (:func:`_number` names the first bad cell)."""
    try:
        out = np.fromiter(map(float, values), np.float64, len(values))  # every cell a number (the common case)
    except (TypeError, ValueError):
        try:
            out = np.array([math.nan if v is None or v == "" else v for v in values], dtype=np.float64)
        except (TypeError, ValueError):
            out = None
    if out is None or np.isinf(out).any():
        out = np.array([_number(v, f"{where}, row {i + 1}") for i, v in enumerate(values)], np.float64)
    return out


def read_columns(path) -> dict:
    """The columns of a CSV or Parquet file as ``{name: list}`` (a :class:`ScoreError` naming the
    file where it cannot be read)."""
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: no such table; give a CSV or Parquet file with one row per case and model")
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ScoreError(f"{path}: reading Parquet needs pyarrow: pip install 'segscore[parquet]' (or give "
                             "a CSV)") from None
        try:
            return pq.read_table(path).to_pydict()
        except Exception as exc:  # pyarrow's errors have no common base worth naming
            raise ScoreError(f"{path}: not a readable Parquet file ({exc}); write it again or give a CSV") from None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise ScoreError(f"{path}: not a UTF-8 text table; give a CSV (or a .parquet file)") from None
    fast = _split_plain_csv(text)
    if fast is not None:
        return fast
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        raise ScoreError(f"{path}: empty table; give a CSV with a header row (case, model, metric columns)")
    if len(set(header)) != len(header):
        raise ScoreError(f"{path}: repeated column names in the header; give each column one name")
    rows = [r for r in reader if r]
    width = len(header)
    for lineno, row in enumerate(rows, start=2):
        if len(row) != width:
            raise ScoreError(f"{path}: data row {lineno - 1} has {len(row)} cells, the header {width}; fix the row")
    return {h: list(col) for h, col in zip(header, zip(*rows))} if rows else {h: [] for h in header}


def _split_plain_csv(text: str):
    """The columns of a CSV without quoting (no ``"`` anywhere, ``\\n`` or ``\\r\\n`` line ends), split
    with ``str.split`` (what ``csv.reader`` gives on such text, blank lines skipped); None where the
    text needs :mod:`csv` (quotes, a lone ``\\r``, a row of another width: the reader then names it)."""
    if '"' in text:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    lines = [line for line in text.split("\n") if line]
    if not lines:
        return None
    header = lines[0].split(",")
    if len(set(header)) != len(header):
        return None
    width = len(header)
    flat = ",".join(lines[1:]).split(",") if len(lines) > 1 else []
    if len(flat) != width * (len(lines) - 1):
        return None
    commas = np.fromiter(map(str.count, lines[1:], repeat(",")), np.int64, len(lines) - 1)
    if (commas != width - 1).any():
        return None
    return {h: flat[i::width] for i, h in enumerate(header)}


def as_columns(table) -> tuple[dict, str]:
    """``(columns, name)`` of any accepted table (module docstring); ``name`` is for messages."""
    if isinstance(table, (str, Path)):
        return read_columns(table), str(table)
    if hasattr(table, "to_dict") and hasattr(table, "columns"):  # a pandas DataFrame
        return {str(k): list(v) for k, v in table.to_dict("list").items()}, "the table"
    if isinstance(table, dict):
        return {str(k): list(v) for k, v in table.items()}, "the table"
    if isinstance(table, (list, tuple)):
        cols: dict = {}
        for i, row in enumerate(table):
            if not isinstance(row, dict):
                raise ScoreError(f"the table: row {i} is {type(row).__name__}; give dicts of column -> value")
            for k in row:
                cols.setdefault(str(k), [None] * i)
            for k in cols:
                cols[k].append(row.get(k))
        return cols, "the table"
    raise ScoreError(f"table {type(table).__name__}: give a CSV or Parquet path, a dict of columns, a list of rows "
                     "or a pandas DataFrame")


@dataclass
class Task:
    """One task as grids: ``values[metric]`` is ``(models, cases)`` float64 with NaN where missing;
    ``cases`` and ``models`` in natural order; ``cluster_of`` maps each case to its unit index
    (``units`` the unit ids in natural order; the cases themselves without clustering)."""

    name: str
    index: int
    cases: list
    models: list
    values: dict
    units: list
    unit_of_case: np.ndarray
    absent: int = 0  # (model, case) pairs with no row at all

    def unit_layout(self):
        """``(unit_start, unit_cases)``: the cases of unit ``u`` are ``unit_cases[unit_start[u]:unit_start[u+1]]``."""
        order = np.argsort(self.unit_of_case, kind="stable").astype(np.int64)
        counts = np.bincount(self.unit_of_case, minlength=len(self.units))
        start = np.zeros(len(self.units) + 1, np.int64)
        np.cumsum(counts, out=start[1:])
        return start, order


@dataclass
class Suite:
    """A benchmark suite as :class:`Task` grids, tasks in natural order (task index = position)."""

    tasks: list
    metrics: list
    source: str
    case: str
    by: str
    task_column: str | None = None
    cluster_by: str | None = None
    n_rows: int = 0
    models: list = field(default_factory=list)


def build_suite(table, *, case: str, by: str, metrics, task: str | None = None,
                cluster_by: str | None = None) -> Suite:
    """A :class:`Suite` from any accepted table; a :class:`ScoreError` naming the table and the fix
    for a missing column, a repeated (task, case, model) row, a non-numeric value, or a case whose
    cluster changes between rows."""
    cols, name = as_columns(table)
    metrics = list(metrics)
    if not metrics:
        raise ScoreError(f"{name}: no metric column given; name one or more with --metric COL[,COL]")
    for opt, col in (("--case", case), ("--by", by), ("--task", task), ("--cluster-by", cluster_by)) + \
            tuple(("--metric", m) for m in metrics):
        if col is not None and col not in cols:
            raise ScoreError(f"{name}: no column {col!r} ({opt}); columns: {', '.join(cols) or 'none'}")
    n = len(cols[case])
    if n == 0:
        raise ScoreError(f"{name}: no rows; give a table with one row per case and model")
    task_col = cols[task] if task else ["all"] * n
    cluster_col = cols[cluster_by] if cluster_by else None
    case_col = list(map(str, cols[case]))
    model_col = list(map(str, cols[by]))
    task_names, task_of = _factorize(list(map(str, task_col))) if task else (["all"], np.zeros(n, np.int64))
    all_cases, case_code = _factorize(case_col)
    all_models, model_code = _factorize(model_col)
    numbers = {met: _column_numbers(cols[met], f"{name}: column {met!r}") for met in metrics}
    tasks = []
    for ti, tname in enumerate(task_names):
        rows = np.flatnonzero(task_of == ti) if task else np.arange(n)
        # the task's ids in natural order: the global codes are in natural order already
        present_c = np.unique(case_code[rows])
        present_m = np.unique(model_code[rows])
        cases = [all_cases[i] for i in present_c]
        models = [all_models[i] for i in present_m]
        a = np.searchsorted(present_m, model_code[rows])
        b = np.searchsorted(present_c, case_code[rows])
        flat = a * len(cases) + b
        counts = np.bincount(flat, minlength=len(models) * len(cases))
        if counts.max(initial=0) > 1:
            k = int(np.flatnonzero(counts > 1)[0])
            where = f" in task {tname!r}" if task else ""
            raise ScoreError(f"{name}: case {cases[k % len(cases)]!r} of model {models[k // len(cases)]!r}{where} has "
                             "two rows; keep one row per case and model (or name the column that tells them apart "
                             "with --task)")
        seen = (counts > 0).reshape(len(models), len(cases))
        grids = {}
        for met in metrics:
            g = np.full(len(models) * len(cases), np.nan)
            g[flat] = numbers[met][rows]
            grids[met] = g.reshape(len(models), len(cases))
        if cluster_col is not None:
            cluster_of: dict = {}
            for i in rows:
                c, cl = case_col[i], str(cluster_col[i])
                if cluster_of.setdefault(c, cl) != cl:
                    raise ScoreError(f"{name}: case {c!r} is in clusters {cluster_of[c]!r} and {cl!r} "
                                     f"(--cluster-by {cluster_by}); a case belongs to one cluster")
            units = natural_sorted(cluster_of.values())
            ui = {u: k for k, u in enumerate(units)}
            unit_of = np.array([ui[cluster_of[c]] for c in cases], np.int64)
        else:
            units = list(cases)
            unit_of = np.arange(len(cases), dtype=np.int64)
        tasks.append(Task(tname, ti, cases, models, grids, units, unit_of, absent=int((~seen).sum())))
    return Suite(tasks, metrics, name, case, by, task, cluster_by, n, all_models)
