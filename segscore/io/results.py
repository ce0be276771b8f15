"""Writing results: JSON without NaN, CSV, and atomic file replacement.

A result written to a file either appears whole or not at all (temporary file, fsync,
rename), so an interrupted run never leaves half a JSON where a good one was.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np


def jsonable(obj):
    """``obj`` with NumPy scalars and arrays as Python values and NaN or inf as None."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


def dumps(result, indent: int | None = 2) -> str:
    """JSON text of a result dict (never NaN: undefined values are null)."""
    return json.dumps(jsonable(result), indent=indent, allow_nan=False)


def atomic_write(path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (temporary file in the same folder, rename)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path, *, fix: str):
    """The JSON document at ``path``. A missing file is an ``InputFileError`` and an unreadable
    one a ``ScoreError``, each one line naming the file and ``fix`` (what to give instead)."""
    from segscore.errors import InputFileError, ScoreError

    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file; {fix}")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise ScoreError(f"{path}: not readable JSON ({exc}); {fix}") from None


def write_json(path, result) -> None:
    atomic_write(path, dumps(result) + "\n")


def csv_text(rows) -> str:
    """Rows (dicts) as CSV: the union of their keys, in first-seen order, as the header."""
    rows = [jsonable(r) for r in rows]
    if not rows:
        return ""
    header: list[str] = []
    for r in rows:
        header.extend(k for k in r if k not in header)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return buf.getvalue()


def write_csv(path, rows) -> None:
    atomic_write(path, csv_text(rows))


def flatten(result, prefix: str = "") -> dict:
    """A nested result as one flat row (``forward.auc``, ``bootstrap.ci95.0``, ...)."""
    out = {}
    if isinstance(result, dict):
        for k, v in result.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(result, (list, tuple)):
        for i, v in enumerate(result):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = result
    return out
