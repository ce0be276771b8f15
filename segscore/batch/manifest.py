"""Manifests: the jobs of a batch as CSV, a JSON list, JSON Lines, or a grid.

- CSV: a header with ``job`` (and usually ``id``); every other column is a tag.
- JSON: a list of ``{"id", "job", "tags"?: {...}, ...}`` (other keys are tags too) or of job strings.
- JSON Lines (``.jsonl``, ``.ndjson``): one such object (or string) per line.
- grid: ``{"template": "target {pred} {target}", "grid": {"pred": "runs/*/pred.png", "target":
  ["targets/a", "targets/b"]}, "id"?: "{pred}-{target}"}``: every combination of the grid's values
  (globs expanded, in name order, relative to the manifest's folder), the values as tags, the ids
  from the part of each value that varies (``runs/m1/pred.png`` -> ``m1``).

Relative paths in a job resolve against the manifest's folder. A bad row refuses the whole
manifest before anything runs, with :class:`ManifestError` ``MANIFEST:LINE: what; fix``.
Lines starting with ``#`` (CSV, JSON Lines) are comments.
"""

from __future__ import annotations

import csv
import glob
import io
import itertools
import json
import os
import re
import shlex
from pathlib import Path

from segscore.batch.jobs import Job, JobError, check_id, parse_job
from segscore.errors import ScoreError


class ManifestError(ScoreError):
    """A manifest or one of its rows that cannot be run: ``MANIFEST:LINE: what; fix``."""


def _where(path, line) -> str:
    return f"{path}:{line}" if line else f"{path}"


def load_manifest(path) -> list[Job]:
    """The jobs of the manifest at ``path`` (format from its suffix, else from its first character)."""
    from segscore.io import budget

    path = Path(path)
    try:
        text = budget.read_text(path, fix="give a CSV, JSON, JSON Lines or grid manifest")
    except ScoreError as exc:
        raise ManifestError(str(exc)) from None
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such manifest; give a CSV, JSON, JSON Lines or grid manifest") from None
    except IsADirectoryError:
        raise ManifestError(f"{path}: is a folder; give the manifest file (CSV, JSON, JSON Lines or grid)") from None
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read ({exc.strerror}); check its permissions") from None
    base = path.resolve().parent
    suffix = path.suffix.lower()
    head = text.lstrip()[:1]
    if suffix in (".jsonl", ".ndjson"):
        items = _jsonl_items(text, path)
    elif suffix == ".json" or (suffix != ".csv" and head in "[{" and head):
        if head == "{":
            try:
                doc = json.loads(text)
            except ValueError:
                doc = None
            except RecursionError:
                raise ManifestError(f"{path}:1: JSON nested too deeply; a manifest is a list of jobs or a grid "
                                    f"object") from None
            if isinstance(doc, dict) and "template" in doc:
                items = _grid_items(doc, text, path, base)
            elif suffix == ".json":
                raise ManifestError(f"{path}:1: a JSON manifest is a list of jobs or a grid object with "
                                    f"\"template\" and \"grid\"; fix its top level")
            else:
                items = _jsonl_items(text, path)
        else:
            items = _json_list_items(text, path)
    else:
        items = _csv_items(text, path)
    return _jobs(items, path, base)


def _jobs(items, path, base) -> list[Job]:
    jobs, seen = [], {}
    for line, item in items:
        where = _where(path, line)
        try:
            job = _job(item, base)
        except JobError as exc:
            raise ManifestError(f"{where}: {exc}") from None
        if job.id in seen:
            raise ManifestError(f"{where}: id {job.id!r} is given twice (first on line {seen[job.id]}); "
                                f"give every job its own id")
        seen[job.id] = line
        job.where = where
        jobs.append(job)
    if not jobs:
        raise ManifestError(f"{path}: holds no jobs; add rows with a `job` (and an `id`)")
    return jobs


def _job(item, base) -> Job:
    if isinstance(item, str):
        return parse_job(item, base=base)
    if not isinstance(item, dict):
        raise JobError(f"a job is a command line or an object with \"job\", not {type(item).__name__}; "
                       f"write {{\"id\": ..., \"job\": \"curve P.png --gt G.png\"}}")
    if "job" not in item:
        raise JobError("the row has no job; give the command line without `segscore` in \"job\"")
    tags = dict(item.get("tags") or {}) if isinstance(item.get("tags"), dict) else {}
    if "tags" in item and not isinstance(item["tags"], dict):
        raise JobError("\"tags\" must be an object of tag name -> value")
    tags.update({k: v for k, v in item.items() if k not in ("id", "job", "tags")})
    return parse_job(item["job"], id=item.get("id"), tags=tags, base=base)


def _csv_items(text, path):
    reader = csv.reader(io.StringIO(text))
    header, items = None, []
    for row in reader:
        line = reader.line_num
        if not row or not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [h.strip() for h in row]
            if "job" not in header:
                raise ManifestError(f"{path}:{line}: the CSV header has no `job` column; start the file with "
                                    f"`id,job` (more columns are tags)")
            if len(set(header)) != len(header):
                raise ManifestError(f"{path}:{line}: the CSV header names a column twice; name each column once")
            continue
        if len(row) > len(header):
            raise ManifestError(f"{path}:{line}: {len(row)} cells for {len(header)} columns; quote a job that "
                                f"holds commas (\"auc ...\")")
        items.append((line, dict(zip(header, [c.strip() for c in row]))))
    if header is None:
        raise ManifestError(f"{path}: is empty; give a header `id,job` and one row per job")
    return items


def _json_list_items(text, path):
    """The items of a JSON list with the line each starts on (json.loads gives no positions)."""
    dec = json.JSONDecoder()
    ws = re.compile(r"\s*")
    i = ws.match(text, 0).end()
    items = []

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    if text[i:i + 1] != "[":
        raise ManifestError(f"{path}:{line_of(i)}: a JSON manifest is a list of jobs; start it with [")
    i = ws.match(text, i + 1).end()
    if text[i:i + 1] == "]":
        return items
    while True:
        try:
            item, end = dec.raw_decode(text, i)
        except RecursionError:
            raise ManifestError(f"{path}:{line_of(i)}: JSON nested too deeply; a job is a command line or an "
                                f"object with \"job\"") from None
        except ValueError as exc:
            raise ManifestError(f"{path}:{line_of(i)}: not valid JSON (at line {line_of(getattr(exc, 'pos', i))}); "
                                f"fix the row") from None
        items.append((line_of(i), item))
        i = ws.match(text, end).end()
        c = text[i:i + 1]
        if c == ",":
            i = ws.match(text, i + 1).end()
        elif c == "]":
            if text[i + 1:].strip():
                raise ManifestError(f"{path}:{line_of(i + 1)}: text after the list; remove it")
            return items
        else:
            raise ManifestError(f"{path}:{line_of(i)}: expected , or ] after a job; fix the JSON")


def _jsonl_items(text, path):
    items = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            items.append((n, json.loads(raw)))
        except RecursionError:
            raise ManifestError(f"{path}:{n}: JSON nested too deeply; write one job object per line") from None
        except ValueError:
            raise ManifestError(f"{path}:{n}: not valid JSON; write one job object per line") from None
    return items


_GLOB = re.compile(r"[*?\[]")


def _grid_items(doc, text, path, base):
    m = re.search(r'"template"\s*:', text)
    line = text.count("\n", 0, m.start()) + 1 if m else 1
    where = _where(path, line)
    template, grid = doc.get("template"), doc.get("grid")
    if not isinstance(template, str) or not template.strip():
        raise ManifestError(f"{where}: \"template\" must be a job line with {{names}} from the grid")
    if not isinstance(grid, dict) or not grid:
        raise ManifestError(f"{where}: \"grid\" must be an object of name -> a glob or a list of values")
    values = {}
    for key, v in grid.items():
        listed = v if isinstance(v, list) else [v]
        expanded = []
        for item in listed:
            if isinstance(item, str) and _GLOB.search(item):
                pattern = item if os.path.isabs(item) else os.path.join(base, item)
                found = sorted(glob.glob(pattern))
                if not found:
                    raise ManifestError(f"{where}: grid {key!r}: {item!r} matches nothing in {base}; fix the "
                                        f"pattern")
                expanded += [f if os.path.isabs(item) else os.path.relpath(f, base) for f in found]
            elif isinstance(item, (str, int, float, bool)):
                expanded.append(item)
            else:
                raise ManifestError(f"{where}: grid {key!r}: {item!r} is not a value; give strings or numbers")
        if not expanded:
            raise ManifestError(f"{where}: grid {key!r} is empty; give it at least one value")
        values[key] = expanded
    labels = {k: _labels(v) for k, v in values.items()}
    id_template = doc.get("id")
    items = []
    ids = {}
    keys = list(values)
    for combo in itertools.product(*(range(len(values[k])) for k in keys)):
        tags = {k: values[k][i] for k, i in zip(keys, combo)}
        try:
            job_text = template.format(**{k: shlex.quote(str(v)) for k, v in tags.items()})
            job_id = (id_template.format(**{k: labels[k][i] for k, i in zip(keys, combo)}) if id_template
                      else "_".join(labels[k][i] for k, i in zip(keys, combo)))
        except (KeyError, IndexError) as exc:
            raise ManifestError(f"{where}: the template names {{{exc.args[0]}}}, which the grid does not give; "
                                f"add it to \"grid\" or fix the template") from None
        except ValueError as exc:
            raise ManifestError(f"{where}: the template cannot be filled ({exc}); write names as {{name}}") from None
        n = ids.get(job_id, 0)
        ids[job_id] = n + 1
        if n:
            job_id = f"{job_id}-{n + 1}"
        try:
            check_id(job_id)
        except JobError as exc:
            raise ManifestError(f"{where}: {exc}") from None
        items.append((line, {"id": job_id, "job": job_text, "tags": tags}))
    return items


def _labels(values) -> list[str]:
    """Short, distinct labels of a grid key's values: the path parts that vary."""
    texts = [str(v) for v in values]
    parts = [t.strip("/").split("/") for t in texts]
    if len(texts) > 1 and all(isinstance(v, str) for v in values):
        while all(len(p) > 1 for p in parts) and len({p[0] for p in parts}) == 1:
            parts = [p[1:] for p in parts]
        while all(len(p) > 1 for p in parts) and len({p[-1] for p in parts}) == 1:
            parts = [p[:-1] for p in parts]
        out = ["-".join(p) for p in parts]
    else:
        out = [os.path.splitext(p[-1])[0] if isinstance(v, str) else t for p, t, v in zip(parts, texts, values)]
    return [re.sub(r"[^A-Za-z0-9.+=-]+", "-", o).strip("-") or "x" for o in out]
