"""The results of a batch: ``DIR/results.jsonl`` (append-only), ``DIR/results.csv``, fingerprints.

Each finished job appends one line holding ``id, job, family, tags, status, result, error,
inputs, version, seconds, finished``. An append is one ``write`` of the whole line to a file
opened with ``O_APPEND``, then ``fsync``, under the experiment ledger's exclusive lock
(``segscore.io.ledger``), so two batches writing one folder never interleave and a killed batch
loses only the jobs it had not finished. A torn last line (a machine that lost power mid-write)
is skipped when read, and the next append starts on a new line. The latest row of an id wins.

``results.csv`` is one flat row per id (the latest), nested keys joined with ``.``
(``tags.model``, ``result.forward.auc``), replaced atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

#: files that describe a folder's data rather than hold it (zarr stores, targets)
METADATA_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}
META_COLUMNS = ("id", "job", "family", "status", "error", "seconds", "finished", "version")


def _sha256(path, h=None):
    h = h or hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h


def fingerprint(path: str, *, sha256: bool = False) -> dict:
    """What identifies an input: a file's ``path, size, mtime``; a folder's total ``size``, newest
    ``mtime``, number of ``files`` and its ``metadata`` files' sizes; ``sha256`` of the contents
    (a folder: of every file's relative name and bytes) when asked. A URL is recorded as remote
    (its store's own fingerprint is a hook for the remote-store work); a missing path as missing."""
    from segscore.batch.jobs import is_remote

    if is_remote(path):
        return {"path": path, "remote": True}
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name (parse_job refuses one first)
        return {"path": path, "missing": True}
    if not os.path.isdir(path):
        out = {"path": path, "size": st.st_size, "mtime": st.st_mtime}
        if sha256:
            out["sha256"] = _sha256(path).hexdigest()
        return out
    total, newest, n, metadata, files = 0, st.st_mtime, 0, {}, []
    for folder, dirs, names in os.walk(path):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(folder, name)
            try:
                fst = os.stat(full)
            except OSError:
                continue
            rel = os.path.relpath(full, path)
            total += fst.st_size
            newest = max(newest, fst.st_mtime)
            n += 1
            if name in METADATA_NAMES or name.endswith(".json"):
                metadata[rel] = fst.st_size
            if sha256:
                files.append((rel, full))
    out = {"path": path, "size": total, "mtime": newest, "files": n, "metadata": metadata}
    if sha256:
        h = hashlib.sha256()
        for rel, full in files:
            h.update(rel.encode() + b"\0")
            _sha256(full, h)
        out["sha256"] = h.hexdigest()
    return out


def flat_row(row: dict, flatten_result=None) -> dict:
    """One batch row as a flat dict: the meta columns, ``tags.NAME``, ``result.KEY`` (by the
    command's registered row function, default :func:`segscore.io.results.flatten`)."""
    from segscore.io.results import flatten

    out = {k: row.get(k) for k in META_COLUMNS}
    out.update({f"tags.{k}": v for k, v in (row.get("tags") or {}).items()})
    result = row.get("result")
    if isinstance(result, dict):
        out.update({f"result.{k}": v for k, v in (flatten_result or flatten)(result).items()})
    return out


def row_function(row: dict):
    """The registered result -> flat row function of ``row``'s command (None: the default)."""
    from segscore.families import command

    name = (row.get("job") or "").split(None, 1)[0] if row.get("job") else ""
    try:
        return command(name).load("row")
    except (KeyError, ImportError, AttributeError):
        return None


class ResultsStore:
    """``DIR/results.jsonl`` and ``DIR/results.csv`` of one batch folder."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.jsonl = self.folder / "results.jsonl"
        self.csv = self.folder / "results.csv"
        self.outputs = self.folder / "outputs"

    def read(self) -> list[dict]:
        """Every complete row, in the order written (a torn or foreign line is skipped; a line
        longer than the read budget's text limit is refused, naming it, before it is read whole)."""
        from segscore.io import budget

        if not self.jsonl.exists():
            return []
        rows = []

        def constant(name):  # NaN or an infinity: a hand-edited line, not one a batch wrote
            raise ValueError(name)

        lines = budget.iter_lines(self.jsonl, fix="delete that line (segscore writes no such line) and rerun the "
                                                  "batch to rescore its job")
        for _, raw in lines:
            if not raw.strip():
                continue
            try:
                row = json.loads(raw, parse_constant=constant)
            except (ValueError, RecursionError):
                continue
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                rows.append(row)
        return rows

    def latest(self) -> dict[str, dict]:
        """The latest row of each id, in the order ids first appeared."""
        out: dict[str, dict] = {}
        for row in self.read():
            out[row["id"]] = row
        return out

    def append(self, row: dict) -> None:
        """Append ``row`` as one line, atomically (module docstring)."""
        from segscore.io.ledger import _locked  # the ledger's exclusive lock (fcntl), reused

        data = (json.dumps(row, allow_nan=False, separators=(",", ":")) + "\n").encode()
        self.folder.mkdir(parents=True, exist_ok=True)
        with _locked(self.jsonl):
            fd = os.open(self.jsonl, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size:
                    with open(self.jsonl, "rb") as fh:
                        fh.seek(size - 1)
                        if fh.read(1) != b"\n":
                            data = b"\n" + data  # a torn line before: start a new one
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)

    def write_csv(self, order=()) -> int:
        """Rewrite ``results.csv`` from the latest row of every id (the ids of ``order`` first, in
        that order; then the others as first written); returns the number of rows."""
        from segscore.io.results import atomic_write, csv_text

        latest = self.latest()
        ids = [i for i in order if i in latest] + [i for i in latest if i not in set(order)]
        rows = [flat_row(latest[i], row_function(latest[i])) for i in ids]
        atomic_write(self.csv, csv_text(rows))
        return len(rows)
