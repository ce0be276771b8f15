"""Leaderboards from a batch results folder: each family's headline numbers beside its floors.

:func:`report` reads ``DIR/results.jsonl`` (the latest row of each id, as
:meth:`segscore.batch.store.ResultsStore.latest` keeps it) and returns a :class:`Report`: one
:class:`Table` per command (``target``, ``fibers``, ``auc`` ...: their headline numbers differ),
one row per scored job, and the jobs that did not score (``refused``, ``crashed``) with their
error lines, counted and never dropped::

    from segscore.batch import report
    rep = report("results", by=["model", "target"])
    print(rep.to_markdown())
    rep.to_csv("leaderboard.csv")
    rep.bars("target")          # a leaderboard chart's data: each model's headline and its floors

Layout. A table's first columns are its row keys: the ``by`` tag columns in the order given
(default: every tag column present, in first-seen order; ``id`` where the jobs carry no tags).
Rows are sorted by them in natural order (``m2`` before ``m10``; a job without the tag last), so
rows of one model (with ``by=["model", "target"]``) stand together. Where the
``by`` tags do not tell a table's rows apart (``by=["model"]`` and two targets per model), the
remaining tags follow them, then the ``id`` if still needed: rows are never merged or averaged.
Then each headline column, followed by the floors, controls, oracle and interval it is read
beside, named ``HEADLINE [FLOOR]`` (``val_f1 [all_positive]``, ``erl [oracle]``).

What a command's headline is comes from the registry only (``segscore.families.headline``):
a function ``result dict -> list of Cell``, ``headline`` in the command's compute module
(``segscore/commands/NAME.py``), else the result's top-level numbers. A null value is printed as ``—`` and its reason (the
result's ``notes`` entry for the cell's dotted path) is listed under the table and carried in
each row's ``notes``; a blank cell is a column that job's result does not have (no bootstrap
asked, another command's column in the CSV).

This module imports only the standard library at import time. ``segscore.batch`` exports the
function :func:`report` under the module's own name, so ``import segscore.batch.report as m``
gives the function: reach the module with ``from segscore.batch.report import Report, Cell`` or
``importlib.import_module("segscore.batch.report")``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from segscore.commands._headline import Cell, value_at  # noqa: F401 - Cell: a headline's cell, defined beside the headlines
from segscore.errors import InputFileError, ScoreError

#: what a cell is: a headline number, or what a headline is read beside
ROLES = ("headline", "floor", "control", "oracle", "interval", "derived", "setting")
#: the roles a leaderboard chart draws beside its headline bar
REFERENCE_ROLES = ("floor", "control", "oracle")
STATUSES = ("scored", "refused", "crashed")
NULL = "—"
_FIX = "give the --out folder of a `segscore batch` run"


class ReportError(ScoreError):
    """A results folder, a row or a ``by`` column the report cannot use (one line, the fix)."""


@dataclass
class Column:
    """A table column: its name, role and the headline it sits beside (see :class:`Cell`)."""

    name: str
    role: str = "headline"
    of: str | None = None
    ref: str | None = None


@dataclass
class Table:
    """The leaderboard of one command: ``keys`` (the row-key columns), ``columns`` (the
    numbers), ``rows`` (one dict per scored job: ``id, command, family, tags, key`` (its key
    columns' values), ``values`` ({column: value}), ``notes`` ({column: why it is null}),
    ``remarks`` (what the job's result says about the whole row: a non-scoring target))."""

    command: str
    family: str | None
    keys: list
    columns: list
    rows: list = field(default_factory=list)

    def headlines(self) -> list:
        return [c.name for c in self.columns if c.role == "headline"]

    def to_dict(self) -> dict:
        return {"command": self.command, "family": self.family, "keys": list(self.keys),
                "columns": [{"name": c.name, "role": c.role, "of": c.of, "ref": c.ref} for c in self.columns],
                "rows": [dict(r) for r in self.rows]}


class Report:
    """A leaderboard: ``tables`` (one :class:`Table` per command, in the registry's order),
    ``rows`` (every scored job's row, table by table), ``failed`` (each refused or crashed
    job: ``id, command, family, tags, status, error``), ``by`` (the row-key tags), ``counts``."""

    def __init__(self, tables, failed, *, by, source=None, total=None, skipped_lines=(), missing=None):
        self.missing = missing  # the --missing policy of the means (None: no means asked)
        self.skipped_lines = list(skipped_lines)  # line numbers of torn lines read past (as the store does)
        self.tables = list(tables)
        self.failed = list(failed)
        self.by = list(by)
        self.source = source
        self.total = sum(len(t.rows) for t in self.tables) + len(self.failed) if total is None else total

    @property
    def rows(self) -> list:
        return [r for t in self.tables for r in t.rows]

    @property
    def counts(self) -> dict:
        out = {"jobs": self.total, "scored": len(self.rows)}
        out.update({s: sum(f["status"] == s for f in self.failed) for s in STATUSES[1:]})
        return out

    def table(self, command: str) -> Table:
        for t in self.tables:
            if t.command == command:
                return t
        raise KeyError(f"no {command!r} table; tables: {', '.join(t.command for t in self.tables) or 'none'}")

    # ------------------------------------------------------------------ outputs

    def to_dict(self) -> dict:
        """The report as plain JSON-able data (what ``segscore report --json`` prints)."""
        out = {"source": None if self.source is None else str(self.source), "by": list(self.by),
               "counts": self.counts, "tables": [t.to_dict() for t in self.tables],
               "failed": [dict(f) for f in self.failed]}
        if self.missing is not None:
            out["missing"] = self.missing
            out["means"] = self.means()
        return out

    def means(self) -> list:
        """Each table's headline means under both ``--missing`` policies (:mod:`segscore.metrics.missing`),
        one dict per (table, group, column): ``command``, ``group_by`` (the table's first key
        column, e.g. the model over its targets; None where the rows are keyed by id: the whole table),
        ``group``, ``column``, ``n`` (rows), ``n_null`` (rows left out under ``null``),
        ``n_imputed`` (rows whose value changes under ``worst``; a per-object mean is each row's own,
        imputed per row, where ``holdout`` pools every object of its fields), ``null`` and ``worst`` (the two
        means; None when nothing is left), ``mean`` (the one of :attr:`missing`) and
        ``not_imputable`` (why a miss stays null under ``worst``: a metric with no worst value)."""
        from segscore.metrics.missing import mean

        out = []
        for t in self.tables:
            if not t.rows or "worst" not in t.rows[0]:
                continue
            group_by = t.keys[0] if t.keys and t.keys[0] != "id" else None
            groups: dict = {}
            for r in t.rows:
                groups.setdefault(r["key"][0] if group_by else None, []).append(r)
            for g, rows in groups.items():
                for name in t.headlines():
                    have = [r for r in rows if name in r["values"]]
                    if not have:
                        continue
                    nulls = [r["values"][name] for r in have]
                    worsts = [r["worst"].get(name) for r in have]
                    m = {"null": mean(nulls), "worst": mean(worsts)}
                    out.append({"command": t.command, "group_by": group_by, "group": g, "column": name,
                                "n": len(have), "n_null": sum(v is None for v in nulls),
                                "n_imputed": sum(bool(r["imputed"].get(name)) for r in have),
                                "null": m["null"], "worst": m["worst"], "mean": m[self.missing or "null"],
                                "not_imputable": sorted({r["not_imputable"][name] for r in have
                                                         if name in r["not_imputable"]})})
        return out

    def _means_markdown(self, command: str) -> list:
        """The means section of one table: side by side under both policies where any case was left out."""
        means = [m for m in self.means() if m["command"] == command]
        if not means:
            return []
        both = any(m["n_null"] or m["n_imputed"] for m in means)
        by = means[0]["group_by"]
        head = ([by] if by else []) + ["column", "n", "left out (null)", "imputed (worst)"]
        head += ["mean (null)", "mean (worst)"] if both else ["mean"]
        lines = ["", f"means{' by ' + by if by else ''} (--missing {self.missing}"
                     + ("; null: a null left out and counted; worst: a miss counted as the metric's worst value)"
                        if both else ": no case left out)"), "",
                 "| " + " | ".join(head) + " |", "|" + "|".join("---" if i < (2 if by else 1) else "---:"
                                                               for i in range(len(head))) + "|"]
        why = []
        for m in means:
            cells = ([_md(_key_text(m["group"]))] if by else []) + [_md(m["column"]), str(m["n"]), str(m["n_null"]),
                                                                   str(m["n_imputed"])]
            cells += [_text(m["null"]), _text(m["worst"])] if both else [_text(m["mean"])]
            lines.append("| " + " | ".join(cells) + " |")
            why += [f"- {w}" for w in m["not_imputable"] if f"- {w}" not in why]
        if why:
            lines += ["", "not imputed under worst (left out):", *why]
        return lines

    def to_markdown(self) -> str:
        """A markdown section per command, its null values' reasons under it, then the jobs
        that did not score with their error lines."""
        c = self.counts
        lines = [f"# segscore report{'' if self.source is None else ': ' + str(self.source)}", "",
                 f"{c['jobs']} job{'' if c['jobs'] == 1 else 's'}: {c['scored']} scored, {c['refused']} refused, {c['crashed']} crashed", ""]
        for t in self.tables:
            lines.append(f"## {t.command} ({t.family or 'unregistered'}): {len(t.rows)} "
                         f"{'job' if len(t.rows) == 1 else 'jobs'}")
            lines.append("")
            names = list(t.keys) + [col.name for col in t.columns]
            lines.append("| " + " | ".join(_md(n) for n in names) + " |")
            lines.append("|" + "|".join("---" for _ in t.keys) + ("|" if t.keys else "")
                         + "|".join("---:" for _ in t.columns) + "|")
            notes = []
            for r in t.rows:
                cells = [_md(_key_text(v)) for v in r["key"]]
                cells += [_md(_text(r["values"][col.name])) if col.name in r["values"] else "" for col in t.columns]
                lines.append("| " + " | ".join(cells) + " |")
                notes += [f"- {_label(r)}: {name} is null: {why}" for name, why in r["notes"].items()]
                notes += [f"- {_label(r)}: {why}" for why in r.get("remarks") or ()]
            if notes:
                lines += ["", "notes (" + NULL + " is null):", *notes]
            if self.missing is not None:
                lines += self._means_markdown(t.command)
            lines.append("")
        if self.failed:
            lines.append(f"## not scored: {len(self.failed)} of {self.total} jobs "
                         f"({c['refused']} refused, {c['crashed']} crashed)")
            lines.append("")
            for f in self.failed:
                tags = ", ".join(f"{k}={v}" for k, v in (f.get("tags") or {}).items())
                lines.append(f"- {f['id']} ({f['command'] or '?'}, {f['status']}{'; ' + tags if tags else ''}): "
                             f"{f['error'] or 'no error recorded'}")
            lines.append("")
        return "\n".join(lines).rstrip("\n") + "\n"

    def csv_rows(self) -> list:
        """The table as flat rows, one per job (the scored ones table by table, then the others):
        ``command, family``, the key tags, ``id, status, error``, every column, ``notes``
        (``column: reason; ...``). A null is an empty field whose reason is in ``notes``."""
        tags = list(self.by)
        for r in self.rows + self.failed:
            tags += [k for k in (r.get("tags") or {}) if k not in tags]
        reserved = {"command", "family", "id", "status", "error", "notes"}
        reserved |= {c.name for t in self.tables for c in t.columns}
        out = []
        for r in self.rows + self.failed:
            row = {"command": r["command"], "family": r["family"]}
            row.update({(f"tags.{k}" if k in reserved else k): (r.get("tags") or {}).get(k) for k in tags})
            row.update(id=r["id"], status=r.get("status", "scored"), error=r.get("error"))
            for t in self.tables:
                row.update({c.name: None for c in t.columns if c.name not in row})
            row.update(r.get("values") or {})
            row["notes"] = "; ".join([f"{k}: {v}" for k, v in (r.get("notes") or {}).items()]
                                     + list(r.get("remarks") or ())) or None
            out.append(row)
        return out

    def to_csv(self, path=None) -> str:
        """The CSV text of :meth:`csv_rows`; written to ``path`` atomically when given."""
        from segscore.io.results import atomic_write, csv_text

        text = csv_text(self.csv_rows())
        if path is not None:
            atomic_write(path, text)
        return text

    def to_json(self) -> str:
        from segscore.io.results import dumps

        return dumps(self.to_dict())

    # ------------------------------------------------------------------ the chart's data

    def bars(self, command: str | None = None, headline: str | None = None) -> list:
        """What a leaderboard bar chart draws: per row of ``command``'s table (default: the first
        table), the ``headline`` column's value (default: the table's first headline) and its
        ``references`` (floors, controls, oracle: ``{ref: value}``), with the row's ``label``
        (its key values joined by `` / ``), ``id`` and ``tags``."""
        if not self.tables:
            return []
        t = self.table(command) if command is not None else self.tables[0]
        heads = t.headlines()
        name = headline if headline is not None else (heads[0] if heads else None)
        if name not in heads:
            raise KeyError(f"no headline {name!r} in the {t.command} table; headlines: {', '.join(heads)}")
        refs = [c for c in t.columns if c.of == name and c.role in REFERENCE_ROLES]
        return [{"label": _label(r), "id": r["id"], "tags": dict(r["tags"]), "command": t.command, "headline": name,
                 "value": r["values"].get(name),
                 "references": {c.ref or c.name: r["values"].get(c.name) for c in refs},
                 "roles": {c.ref or c.name: c.role for c in refs}} for r in t.rows]

    def __repr__(self) -> str:
        c = self.counts
        return (f"Report({c['jobs']} job{'' if c['jobs'] == 1 else 's'}: {c['scored']} scored in {len(self.tables)} tables, {c['refused']} "
                f"refused, {c['crashed']} crashed)")


# ---------------------------------------------------------------------------------------------
# reading a results folder


def read_rows(source) -> tuple[list, Path | None, list]:
    """The latest row of each id from ``source`` (a results folder, its ``results.jsonl``, a
    :class:`~segscore.batch.runner.BatchResult` or a list of rows) and the file read (or None).
    and the numbers of the lines read past (torn: not JSON, as a killed batch can leave one; the
    results store reads past them too). A missing folder or file, or a line that is JSON but no
    batch row (an edited file), is a :class:`ReportError` naming it."""
    if hasattr(source, "rows") and not isinstance(source, (str, os.PathLike)):
        source = source.rows
    if not isinstance(source, (str, os.PathLike)):
        rows = list(source)
        for i, row in enumerate(rows):
            why = _not_a_row(row)
            if why:
                raise ReportError(f"row {i}: {why}; give rows of `segscore.batch.run` or results.jsonl")
            bad = _non_finite_path(row)
            if bad:
                raise ReportError(f"row {i}: {bad} is not a finite number; give rows of `segscore.batch.run` or "
                                  f"results.jsonl")
        return list({r["id"]: r for r in rows}.values()), None, []
    path = Path(source)
    jsonl = path if path.is_file() else path / "results.jsonl"
    if not path.exists():
        raise InputFileError(f"{path}: no such results folder; {_FIX}")
    if not jsonl.is_file():
        raise InputFileError(f"{jsonl}: no results.jsonl in this folder; {_FIX}, or run `segscore batch MANIFEST "
                             f"--out {path}` first")
    from segscore.io import budget

    latest: dict = {}
    torn = []
    try:
        for number, raw in budget.iter_lines(jsonl, fix="delete that line (segscore writes no such line) and rerun "
                                                        "the `segscore batch` command to rescore its job"):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw, parse_constant=_non_finite_constant, parse_float=_finite_float)
            except _NonFiniteValue as exc:
                raise ReportError(f"{jsonl}: line {number} holds {exc}, not a finite number (a hand-edited "
                                  f"line?); delete that line and rerun the `segscore batch` command to rescore "
                                  f"its job") from None
            except RecursionError:
                raise ReportError(f"{jsonl}: line {number} is damaged: JSON nested too deeply; delete that line "
                                  f"and rerun the `segscore batch` command to rescore its job") from None
            except ValueError:  # a line a killed batch left half written: the store reads past it too
                torn.append(number)
                continue
            why = _not_a_row(row)
            if why:
                raise ReportError(f"{jsonl}: line {number} is damaged: {why}; delete that line and rerun the "
                                  f"`segscore batch` command to rescore its job")
            latest[row["id"]] = row
    except OSError as exc:
        raise InputFileError(f"{jsonl}: cannot be read ({(exc.strerror or type(exc).__name__).lower()}); check its "
                             f"permissions") from None
    if not latest:
        raise ReportError(f"{jsonl}: holds no finished jobs; run `segscore batch MANIFEST --out {path}` first")
    return list(latest.values()), jsonl, torn


class _NonFiniteValue(ValueError):
    """A results line holds NaN, an infinity, or a number too large for a float (``1e400``)."""


def _non_finite_constant(name):
    raise _NonFiniteValue(name)


def _finite_float(token):
    value = float(token)
    if value in (float("inf"), float("-inf")):
        raise _NonFiniteValue(token)
    return value


def _non_finite_path(obj, prefix=""):
    """The dotted path of the first NaN or infinity in ``obj`` (rows given in memory), or None."""
    if isinstance(obj, float):
        return None if obj == obj and obj not in (float("inf"), float("-inf")) else (prefix or "(the row)")
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return None
    for k, v in items:
        found = _non_finite_path(v, f"{prefix}.{k}" if prefix else str(k))
        if found:
            return found
    return None


def _not_a_row(row) -> str | None:
    if not isinstance(row, dict):
        return f"a {type(row).__name__}, not a batch row"
    if not isinstance(row.get("id"), str):
        return "no id"
    if row.get("status") not in STATUSES:
        return f"status {row.get('status')!r} is not one of {', '.join(STATUSES)}"
    if row.get("tags") is not None and not isinstance(row["tags"], dict):
        return "tags is not an object"
    return None


def command_of(row: dict):
    """The registered command (``segscore.families.Command``) that scored ``row``, or None:
    the job's first word, a family name for a job given as arrays (``objects(<array>...)``),
    else the row's family."""
    import re

    from segscore.families import FAMILIES, command

    text = row.get("job") if isinstance(row.get("job"), str) else ""
    name = re.split(r"[\s(]", text.strip(), maxsplit=1)[0] if text.strip() else ""
    try:
        return command(name)
    except KeyError:
        pass
    for fam in (name, row.get("family")):
        if fam in FAMILIES:
            return command(FAMILIES[fam].commands[0])
    return None


# ---------------------------------------------------------------------------------------------
# the report


def report(source, *, by=None, missing=None) -> Report:
    """The leaderboard of a batch: ``source`` a results folder (``segscore batch --out DIR``),
    its ``results.jsonl``, a ``BatchResult`` or a list of batch rows; ``by`` the tag columns
    that key the rows (a list, or one comma-separated string; default: every tag column present).
    ``missing`` (``"null"`` or ``"worst"``; default None: no means): add each table's headline
    means (:meth:`Report.means`) under that policy, beside the other one's where a case was left
    out (:mod:`segscore.metrics.missing`). Refuses (:class:`ReportError`, a ``ScoreError``) a
    missing folder, a damaged line, a ``by`` column no row carries and another ``missing``.
    Layout: the module docstring."""
    if missing is not None:
        from segscore.metrics.missing import check_policy

        try:
            missing = check_policy(missing)
        except ScoreError as exc:
            raise ReportError(str(exc)) from None
    rows, jsonl, skipped_lines = read_rows(source)
    tags_seen: list = []
    for r in rows:
        tags_seen += [k for k in (r.get("tags") or {}) if k not in tags_seen]
    if isinstance(by, str):
        by = [b.strip() for b in by.split(",")]
    by = [b for b in (tags_seen if by is None else by) if b]
    unknown = [b for b in by if b not in tags_seen]
    if unknown:
        where = jsonl if jsonl is not None else "the rows"
        raise ReportError(f"--by {','.join(unknown)}: no such tag column in {where}; tag columns: "
                          f"{', '.join(tags_seen) or 'none (the manifest gave no tags)'}")
    tables: dict = {}
    failed = []
    for r in rows:
        cmd = command_of(r)
        name = cmd.name if cmd is not None else (str(r.get("job") or "").split() or ["?"])[0]
        family = cmd.family if cmd is not None else r.get("family")
        tags = dict(r.get("tags") or {})
        result = r.get("result")
        if r["status"] == "scored" and not isinstance(result, dict):
            r = dict(r, status="crashed", error="a scored row without a result dict; rerun the job with --force")
        if r["status"] != "scored":
            failed.append({"id": r["id"], "command": name, "family": family, "tags": tags, "status": r["status"],
                           "error": _first_line(r.get("error"))})
            continue
        cells = _headline_cells(cmd, result)
        values, notes = {}, {}
        result_notes = result.get("notes") if isinstance(result.get("notes"), dict) else {}
        for c in cells:
            values[c.name] = c.value
            if c.value is None:
                notes[c.name] = c.note or _note(result_notes, c.path) or "null (the result gives no reason)"
        t = tables.get(name)
        if t is None:
            t = tables[name] = Table(name, family, [], [])
        for c in cells:
            if c.name not in {col.name for col in t.columns}:
                _insert_column(t.columns, Column(c.name, c.role, c.of, c.ref))
        row = {"id": r["id"], "command": name, "family": family, "tags": tags, "key": [],
               "values": values, "notes": notes, "remarks": _row_notes(result)}
        if missing is not None:
            row["worst"], row["imputed"], row["not_imputable"] = _worst_cells(cells, result)
        t.rows.append(row)
    from segscore.families import COMMANDS

    rank = {name: i for i, name in enumerate(COMMANDS)}
    ordered = sorted(tables.values(), key=lambda t: rank.get(t.command, len(rank)))  # stable: others as seen
    for t in ordered:
        _key_table(t, by)
    return Report(ordered, failed, by=by, source=None if jsonl is None else jsonl.parent, total=len(rows),
                  skipped_lines=skipped_lines, missing=missing)


def _worst_cells(cells, result: dict) -> tuple:
    """A row's headline values under ``--missing worst``: ``({column: value}, {column: number of
    cases or objects imputed}, {column: why a miss stays null})``. A null whose case is a miss
    (one side empty) counts as the metric's worst value; a per-object mean counts its unmatched
    objects at the worst value; both empty, and any other null, stay null (left out)."""
    from segscore.metrics.missing import PER_OBJECT, is_miss, per_object_worst, worst_number

    values, imputed, why_not = {}, {}, {}
    for c in cells:
        if c.role != "headline":
            continue
        container = result
        if c.path and c.path.endswith("." + c.name):
            found, present = value_at(result, c.path[:-len(c.name) - 1])
            container = found if present and isinstance(found, dict) else result
        value, n, why = c.value, 0, None
        if c.name in PER_OBJECT and isinstance(container, dict) and "true_positives" in container:
            value, n, why = per_object_worst(c.name, container, result)
        elif c.value is None and (is_miss(container) or (container is not result and is_miss(result))):
            value, why = worst_number(c.name, result)
            n = int(value is not None)
        values[c.name] = value
        if n:
            imputed[c.name] = n
        if why:
            why_not[c.name] = why
    return values, imputed, why_not


def _insert_column(columns: list, col: Column) -> None:
    """Append ``col``; a floor or interval of a headline goes after that headline's others."""
    if col.of is not None:
        idx = [i for i, c in enumerate(columns) if c.name == col.of or c.of == col.of]
        if idx:
            columns.insert(idx[-1] + 1, col)
            return
    columns.append(col)


def _key_table(t: Table, by: list) -> None:
    """Choose ``t``'s key columns (``by``; then the other tags and the id where needed to tell
    rows apart), fill each row's ``key`` and sort the rows by it."""
    keys = list(by) if by else []
    rest = []
    for r in t.rows:
        rest += [k for k in r["tags"] if k not in keys and k not in rest]

    def unique(names):
        seen = [tuple(_key_text(r["tags"].get(k)) if k != "id" else r["id"] for k in names) for r in t.rows]
        return len(set(seen)) == len(seen)

    if not keys or not unique(keys):
        for k in rest:
            keys.append(k)
            if unique(keys):
                break
        if not keys or not unique(keys):
            keys.append("id")
    t.keys = keys
    for r in t.rows:
        r["key"] = [r["id"] if k == "id" else r["tags"].get(k) for k in keys]
    t.rows.sort(key=lambda r: [_natural(v) for v in r["key"]])


def _natural(value) -> tuple:
    """A sort key: text with its digit runs as numbers (``m2`` before ``m10``); None last."""
    import re

    if value is None:
        return (1, ())
    parts = re.split(r"(\d+)", str(value))
    return (0, tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in parts))


def _headline_cells(cmd, result: dict) -> list:
    from segscore.families import headline

    fn = headline(cmd)
    cells = list(fn(result))
    names = [c.name for c in cells]
    if len(set(names)) != len(names):  # a bug in a headline function, not bad input
        raise RuntimeError(f"headline of {cmd.name if cmd else '?'} names a column twice: {names}")
    return cells


def _note(notes: dict, path: str | None) -> str | None:
    """The reason for ``path`` in a result's ``notes``, or for the nearest part holding it."""
    while path:
        if path in notes:
            return str(notes[path])
        path = path.rpartition(".")[0]
    return None


def _row_notes(result: dict) -> list:
    out = []
    if result.get("scoring_enabled") is False:
        out.append("the target is marked non-scoring: a historical record, not a bar to beat")
    if result.get("overrides"):
        out.append("scored with " + ", ".join(f"--{o.replace('_', '-')}" for o in result["overrides"]))
    return out


def _first_line(text) -> str | None:
    return None if text is None else (str(text).strip().splitlines() or [""])[0]


def _label(r: dict) -> str:
    return " / ".join(_key_text(v) for v in r["key"]) or r["id"]


def _key_text(v) -> str:
    return "" if v is None else str(v)


def _text(v) -> str:
    """A cell as text: floats to 4 decimals (1 from 1,000 on), ``—`` for null."""
    if v is None:
        return NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) >= 1000 else f"{v:.4f}"
    return str(v)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def statistics(o: dict):
    """The statistics part of ``segscore report`` (``o``: the option values of
    ``segscore.commands.report.OPTIONS``, checked): :func:`segscore.stats.analyse`
    on ``table`` or on the results folder's rows, its files (``csv``, ``json_out``, ``plot``) written.
    Returns the :class:`segscore.stats.analysis.Analysis` (a dict: ``intervals``, ``comparisons``,
    ``rankings``, ``stability``, ``params``, ``counts``, ``notes``; ``to_frame(part)``)."""
    from types import SimpleNamespace

    from segscore.errors import ScoreError
    from segscore.stats import options as stats_options

    args = SimpleNamespace(**o)
    rep = None
    if not o.get("table"):
        if not o.get("results"):
            raise ScoreError("give a RESULTS_DIR or --table FILE to analyse")
        rep = report(o["results"], by=None).to_dict()
    if o.get("plot"):
        from segscore import figures

        figures.require_matplotlib()  # before the work
    result = stats_options.analyse_args(args, rep)
    stats_options.write_outputs(args, result)
    if o.get("plot"):
        from segscore import figures
        from segscore.figures.stats import draw_for

        figures.save(draw_for(result), o["plot"])
    return result


def wants_statistics(o: dict) -> bool:
    """Whether the values ask for the statistics (a table, or any of their parts)."""
    from segscore.stats.options import PART_FLAGS

    return bool(o.get("table")) or any(o.get(f) for f in PART_FLAGS)
