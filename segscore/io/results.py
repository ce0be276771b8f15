"""Writing results: JSON without NaN, CSV, and atomic file replacement.

A result written to a file either appears whole or not at all (temporary file, fsync,
rename), so an interrupted run never leaves half a JSON where a good one was.

The result contract every family follows (README, "Results: nulls and notes"):

- a metric the input makes impossible (no ink in the mask, an empty prediction, no reference
  source, a 0/0 ratio) is ``None`` (JSON ``null``), and the result's top-level ``notes``, a dict
  that is always present (possibly empty), maps the metric's dotted path (``forward.auc``,
  ``metrics.average_precision``, ``floors.uniform_random.roc_auc``, ``per_column.3.line_period_peak``,
  ``erl_frac``; list items by their index, as :func:`flatten` names them) to a one-line reason;
- a result made of rows (a held-out set's ``per_field`` scorecards, its metric ``rows``) carries
  the reason in each row's ``reason`` instead;
- a field that is None because an input was not given (``files.control``, ``crop``,
  ``voxel_size``) has no note;
- what the run did that a user should know but that nulls nothing (a file's anisotropic spacing
  applied, zarr chunks absent and read as the fill value, dangling skeleton edges dropped) is a
  one-line string in the result's top-level ``warnings`` list, which every command's result
  carries (possibly empty; :func:`with_warnings`); the CLI prints each on stderr;
- no value is ever NaN or +-inf: :func:`jsonable` (so :func:`dumps`, :func:`write_json` and the
  CSV writers) raises :class:`NonFiniteError` naming the field. That is a bug in the metric that
  produced it, not bad input, so it is not a ``ScoreError`` and the CLI exits 1 on it.

A family builds its parts with their own relative ``notes`` and lifts them into the result
with :func:`lift_notes`.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import secrets
from pathlib import Path

import numpy as np

from segscore.errors import ScoreError


class NonFiniteError(ValueError):
    """A NaN or an infinity reached the result writer. A metric must return None with a note
    instead (module docstring), so this is a bug, deliberately not a ``ScoreError``: the CLI
    exits 1 and shows the traceback rather than printing a silent null."""


class _NonFinite(Exception):
    """A non-finite value met by :func:`_plain`; ``keys`` gathers its path on the way out."""

    def __init__(self, value):
        super().__init__(value)
        self.value, self.keys = value, []


def _plain(obj):
    # the common types first, and the path of a bad value built only when there is one (on the
    # way out of the recursion): a large per-object table is walked in one cheap pass
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is float:
        if math.isfinite(obj):
            return obj
        raise _NonFinite(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            try:
                out[str(k)] = _plain(v)
            except _NonFinite as e:
                e.keys.append(k)
                raise
        return out
    if isinstance(obj, (list, tuple)):
        out = []
        for i, v in enumerate(obj):
            try:
                out.append(_plain(v))
            except _NonFinite as e:
                e.keys.append(i)
                raise
        return out
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _plain(float(obj))
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


def jsonable(obj):
    """``obj`` with NumPy scalars and arrays as Python values, ready for ``json.dumps``.

    Raises :class:`NonFiniteError` (naming the dotted path) for a NaN or an infinity: an
    undefined value is None with a note, never NaN, and is never mapped to None here.
    """
    try:
        return _plain(obj)
    except _NonFinite as e:
        path = ".".join(str(k) for k in reversed(e.keys))
        raise NonFiniteError(f"result field {path or '(the value)'} is {e.value!r}: a metric must be a finite "
                             f"number or None with a note in the result's notes (a bug, please report it)") from None


def lift_notes(result: dict) -> dict:
    """``result`` (copied, not changed) with the ``notes`` dicts of its nested parts moved into
    its top-level ``notes`` under their dotted paths: ``{"forward": {"auc": None, "notes":
    {"auc": why}}}`` becomes ``{"forward": {"auc": None}, "notes": {"forward.auc": why}}``.
    Entries already in the top-level ``notes`` stay first; ``notes`` is always present."""
    lifted: dict = {}

    def walk(obj, prefix):
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if k == "notes" and isinstance(v, dict):
                    lifted.update({f"{prefix}{n}": why for n, why in v.items()})
                else:
                    out[k] = walk(v, f"{prefix}{k}.")
            return out
        if isinstance(obj, (list, tuple)):
            return type(obj)(walk(v, f"{prefix}{i}.") for i, v in enumerate(obj))
        return obj

    out = {k: walk(v, f"{k}.") for k, v in result.items() if k not in ("notes", "warnings")}
    out["notes"] = {**(result.get("notes") or {}), **lifted}
    if "warnings" in result:
        out["warnings"] = list(result["warnings"])
    return out


def with_warnings(result: dict, *more) -> dict:
    """``result`` (changed in place, and returned) with its top-level ``warnings`` list present,
    ``more`` (iterables of one-line strings) appended, each line once, in order."""
    seen = list(result.get("warnings") or [])
    for lines in more:
        for line in lines or ():
            if line not in seen:
                seen.append(line)
    result["warnings"] = seen
    return result


def dumps(result, indent: int | None = 2) -> str:
    """JSON text of a result dict. Raises :class:`NonFiniteError` for a NaN or an infinity
    anywhere in it (module docstring: undefined values are null with a note, by the metric)."""
    return json.dumps(jsonable(result), indent=indent, allow_nan=False)


def atomic_write(path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (temporary file in the same folder, rename)."""
    write_atomically(path, lambda fh: fh.write(text))


def write_atomically(path, write, *, binary: bool = False) -> Path:
    """Replace ``path`` by what ``write(fh)`` writes, in one step: a temporary file
    ``.NAME.XXXX.tmp`` in the same folder (the pattern a killed writer's leftovers are found by),
    fsync, rename. The file gets the umask's permissions, as any file the user writes (not
    mkstemp's 0600, which would outlive the rename). Returns the path.

    A path that cannot be written (a folder that cannot be made, a read-only or virtual file
    system, no space left, a folder where the file belongs) is refused in one line naming
    ``path`` as it was given, never the hidden temporary file, and why (:class:`OutputFileError`)."""
    from segscore.io.paths import one_line, special_kind

    given = os.fspath(path)
    kind = special_kind(given)
    if kind is not None:  # the rename would replace the pipe or device itself
        raise ScoreError(f"{one_line(given)}: is {kind}; segscore writes its outputs to regular files only: "
                         f"choose another path")
    path = Path(given)
    folder = path.parent if str(path.parent) else Path(".")
    step = "folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        step = "create"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        for _ in range(100):
            tmp = os.fspath(folder / f".{path.name}.{secrets.token_hex(6)}.tmp")
            try:
                fd = os.open(tmp, flags, 0o666)
                break
            except FileExistsError:  # pragma: no cover - 48 random bits
                continue
        else:  # pragma: no cover
            raise FileExistsError(errno.EEXIST, "no free temporary name")
    except OSError as exc:
        raise OutputFileError(given, step, exc) from None
    step = "write"
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        step = "replace"
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise OutputFileError(given, step, exc) from None
        raise
    return path


class OutputFileError(ScoreError):
    """An output file that cannot be written: one line naming the path as the user gave it, what
    failed and why (the system's reason), and the fix."""

    def __init__(self, path: str, step: str, exc: OSError):
        from segscore.io.paths import one_line

        self.path = path
        folder = one_line(os.path.dirname(path) or ".")
        why = (exc.strerror or type(exc).__name__).lower() if isinstance(exc, OSError) else str(exc)
        if isinstance(exc, IsADirectoryError) or os.path.isdir(path):
            said = "is a folder; give a file name for the output"
        elif isinstance(exc, NotADirectoryError) or (step == "folder" and isinstance(exc, FileExistsError)):
            said = f"a part of {folder} is a file, not a folder; choose another path"
        else:
            said = {"folder": f"cannot make its folder {folder}", "create": f"cannot create a file in {folder}",
                    "write": "cannot be written", "replace": "cannot be replaced"}[step]
            said = f"{said} ({why}); choose a path in a folder you can write to"
        super().__init__(f"{one_line(path)}: {said}")


def read_json(path, *, fix: str):
    """The JSON document at ``path``. A missing file is an ``InputFileError`` and an unreadable
    one a ``ScoreError``, each one line naming the file and ``fix`` (what to give instead). The
    file is read with the read budget's size limit (:func:`segscore.io.budget.read_text`: a
    device or a huge file is refused, not read whole); NaN, infinities and absurd nesting are
    refused as invalid JSON."""
    from segscore.errors import InputFileError
    from segscore.io import budget
    from segscore.io.paths import check_readable

    check_readable(path)
    if not os.path.exists(path):
        raise InputFileError(f"{path}: no such file; {fix}")
    try:
        text = budget.read_text(path, fix=fix)
    except IsADirectoryError:
        raise ScoreError(f"{path}: is a folder, not a JSON file; {fix}") from None
    except OSError as exc:
        raise ScoreError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__}); {fix}") from None
    return budget.parse_json(text, path, fix=fix)


def write_json(path, result) -> None:
    """Write ``result`` as JSON to ``path`` atomically. The result contract (module docstring):
    undefined metrics are null with a reason in the top-level ``notes`` (by dotted path; in a
    row's ``reason`` for results made of rows), fields of inputs not given are null without one,
    and a NaN or an infinity raises :class:`NonFiniteError` before anything is written."""
    atomic_write(path, dumps(result) + "\n")


_PLAIN_VALUES = frozenset({str, int, bool, type(None)})


def _plain_row(row: dict) -> dict:
    """:func:`jsonable` of one CSV row, without the walk when every key is a str and every value
    a str, int, bool, None or finite float already (a per-object table's rows)."""
    for k, v in row.items():
        if type(k) is not str or not (type(v) in _PLAIN_VALUES or type(v) is float and v - v == 0.0):
            return jsonable(row)  # v - v is 0.0 for a finite float, NaN for an infinity or a NaN
    return row


def csv_text(rows) -> str:
    """Rows (dicts) as CSV: the union of their keys, in first-seen order, as the header; a
    missing or None value is an empty field."""
    rows = [_plain_row(r) for r in rows]
    if not rows:
        return ""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    keys = tuple(rows[0])
    if all(tuple(r) == keys for r in rows):  # one key order (a per-object table): the values as they
        writer.writerow(keys)  # are, csv writing None as the empty field
        writer.writerows(r.values() for r in rows)
        return buf.getvalue()
    header: dict = {}
    for r in rows:
        header.update(dict.fromkeys(r))
    header = list(header)
    writer.writerow(header)
    writer.writerows([["" if (v := r.get(k)) is None else v for k in header] for r in rows])
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


# ------------------------------------------------------------------ the result dict in notebooks

#: how many scalar fields ``repr(result)`` shows before "..."
REPR_FIELDS = 8


def _shown(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if v is None:
        return "null"
    text = str(v)
    return text if len(text) <= 60 else text[:57] + "..."


class Result(dict):
    """A family's result: a plain ``dict`` (equal to one, JSON-serializable, picklable; every
    key the JSON has) that shows itself briefly. ``repr`` names the scalar top-level fields
    (the first :data:`REPR_FIELDS`) and counts the nested parts and notes; in Jupyter
    ``_repr_html_`` renders every field, flattened (``forward.auc``), as a table with its
    note beside it. ``dict(result)`` or ``json.loads(dumps(result))`` give the plain dict."""

    __slots__ = ("_draw",)

    def plot(self):
        """The command's figure of this result (a matplotlib Figure, never shown; the figure
        ``--plot FILE`` saves), for a result of :mod:`segscore.api`; a :class:`ScoreError` says
        why when the command draws none or the result cannot fill it (its headline null)."""
        from segscore.errors import ScoreError

        draw = getattr(self, "_draw", None)
        if draw is None:
            raise ScoreError("this result carries no figure: score through segscore.api (segscore.api.objects(truth, "
                             "pred) ...) to get one")
        return draw()

    def to_frame(self, table: str | None = None):
        """The result as a pandas DataFrame: one row of every field, flattened as the CSV is
        (``forward.auc``, ``bootstrap.ci95.0``), ``notes`` and ``warnings`` left out (they are the result's own
        fields); or, with ``table``, one row per item of that list-of-dicts field (``rows``,
        ``findings``, ``cards`` ...)."""
        import pandas as pd

        from segscore.errors import ScoreError

        if table is not None:
            rows = self.get(table)
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                tables = [k for k, v in self.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
                raise ScoreError(f"{table!r} is not a list of rows in this result; tables: {', '.join(tables) or 'none'}")
            return pd.DataFrame([flatten(r) for r in rows])
        body = {k: v for k, v in self.items() if k not in ("notes", "warnings")}
        return pd.DataFrame([flatten(body)])

    def __repr__(self) -> str:
        scalars = [(k, v) for k, v in self.items()
                   if k != "notes" and (v is None or isinstance(v, (bool, int, float, str)))]
        nested = [k for k, v in self.items() if k != "notes" and isinstance(v, (dict, list, tuple))]
        parts = [f"{k}={_shown(v)}" for k, v in scalars[:REPR_FIELDS]]
        if len(scalars) > REPR_FIELDS:
            parts.append(f"... {len(scalars) - REPR_FIELDS} more")
        if nested:
            parts.append("parts: " + ", ".join(nested[:6]) + (", ..." if len(nested) > 6 else ""))
        notes = self.get("notes") or {}
        parts.append(f"{len(notes)} note{'' if len(notes) == 1 else 's'}")
        return "Result(" + "; ".join(parts) + ")"

    def _repr_html_(self) -> str:
        from html import escape

        notes = self.get("notes") if isinstance(self.get("notes"), dict) else {}
        body = {k: v for k, v in self.items() if k != "notes"}
        rows = []
        fields = flatten(body)
        for key, value in fields.items():
            why = notes.get(key, "")
            rows.append(f"<tr><td><code>{escape(key)}</code></td><td>{escape(_shown(value))}</td>"
                        f"<td>{escape(str(why))}</td></tr>")
        for key, why in notes.items():  # notes on parts that are not single fields
            if key not in fields:
                rows.append(f"<tr><td><code>{escape(key)}</code></td><td></td><td>{escape(str(why))}</td></tr>")
        return ("<table><thead><tr><th>field</th><th>value</th><th>note</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")

    def __reduce__(self):
        return (Result, (dict(self),))


def with_figure(result: dict, draw) -> Result:
    """``result`` as a :class:`Result` whose ``plot()`` calls ``draw()`` (no argument, returns a
    matplotlib Figure)."""
    out = result if isinstance(result, Result) else Result(result)
    out._draw = draw
    return out


def as_result(fn):
    """Decorator for a family's public scoring function: its dict comes back as a :class:`Result`
    (anything else, a dataclass say, unchanged), with a ``warnings`` line for each zarr array it
    read whose absent chunks were read as the fill value (:func:`segscore.io.sources.collecting`),
    in its ``warnings`` list (present in every result, ``[]`` when nothing is to be said). A
    ``(result, extra)`` pair gets them in its result."""
    import functools

    from segscore.io.sources import collecting, read_warnings

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with collecting() as opened:
            out = fn(*args, **kwargs)
        target = out[0] if isinstance(out, tuple) and out and isinstance(out[0], dict) else out
        if isinstance(target, dict):  # the contract: a warnings list in every result, [] when none
            with_warnings(target, read_warnings(opened))
        return Result(out) if isinstance(out, dict) and not isinstance(out, Result) else out

    return wrapper
