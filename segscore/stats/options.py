"""The command-line face of :func:`segscore.stats.analyse`: option declarations and their reading.

``segscore report`` declares the options (``segscore.cli.report.STATS_OPTIONS``) and, when :func:`wanted` says a
statistics option was given, :func:`analyse_args` (with the results folder's report as a dict
where no ``--table`` is given) then :func:`write_outputs`. Nothing here prints; the report
command shows the result.

From a results folder (``segscore batch`` output), each scored job is a row: the model is the
first ``--by`` tag (default ``model``), the case the ``--case TAG`` tag, the task ``--task TAG``
(optional), the metrics the ``--metric`` headline columns (default: the headlines of the first
table); directions come from the registry (:data:`segscore.metrics.missing.SMALLER_BETTER`, plus
``--smaller-better``), and ``--missing worst`` takes each metric's declared worst number.
"""

from __future__ import annotations

from segscore.errors import ScoreError

#: the flags that ask for an analysis (any one of them)
PART_FLAGS = ("intervals", "compare", "rank", "stability")


def wanted(args) -> bool:
    """Whether the command line asked for an analysis."""
    return bool(getattr(args, "table", None)) or any(getattr(args, f, False) for f in PART_FLAGS)


def _split(text):
    return [s.strip() for s in text.split(",") if s.strip()] if text else []


def _worst(items) -> dict:
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ScoreError(f"--worst {item!r}: give COL=VALUE with a number, e.g. --worst dice=0") from None
    return out


def store_rows(report: dict, *, case: str, by: str, task: str | None, metrics: list) -> tuple[list, list, dict]:
    """``(rows, metrics, floors)``: a results folder's report (``Report.to_dict()``) as long-table
    rows (``case``, ``by``, ``task`` tags and the metric values; a null value is missing), and each
    metric's floors (``{metric: {floor: mean over the cases}}``, the floor columns read beside it)."""
    tables = report.get("tables", [])
    if not metrics:
        if not tables:
            raise ScoreError(f"{report.get('source')}: no scored job to analyse; run `segscore batch` first")
        metrics = [c["name"] for c in tables[0]["columns"] if c["role"] == "headline"]
    rows = []
    floor_values: dict = {}
    for t in tables:
        have = [m for m in metrics if any(c["name"] == m for c in t["columns"])]
        if not have:
            continue
        floor_cols = [(c["of"], c["name"], c.get("ref") or c["name"]) for c in t["columns"]
                      if c["role"] == "floor" and c.get("of") in have]
        for r in t["rows"]:
            tags = r.get("tags") or {}
            for tag, opt in ((case, "--case"), (by, "--by"), (task, "--task")):
                if tag is not None and tag not in tags:
                    raise ScoreError(f"{report.get('source')}: job {r.get('id')} has no tag {tag!r} ({opt}); tag "
                                     "every job (segscore batch --tag) or name another tag")
            row = {"__case": tags[case], "__model": tags[by]}
            if task:
                row["__task"] = tags[task]
            for m in metrics:
                row[m] = r["values"].get(m) if m in have else None
            for m, col, name in floor_cols:
                v = r["values"].get(col)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    floor_values.setdefault(m, {}).setdefault(name, {})[str(tags[case])] = float(v)
            rows.append(row)
    if not rows:
        raise ScoreError(f"{report.get('source')}: no job has the metric(s) {', '.join(metrics)}; name headline "
                         "columns with --metric")
    import math

    floors = {m: {name: math.fsum(v.values()) / len(v) for name, v in f.items()} for m, f in floor_values.items()}
    return rows, metrics, floors


def analyse_args(args, report: dict | None = None):
    """Run :func:`segscore.stats.analyse` as the command line asks; ``report``: the results
    folder's ``Report.to_dict()`` when no ``--table`` is given."""
    from segscore.stats.analysis import analyse

    by = _split(getattr(args, "by", None))
    if len(by) > 1 and args.table:
        raise ScoreError(f"--by {args.by}: a table takes one model column")
    model = by[0] if by else ("model" if not args.table else None)
    common = dict(intervals=args.intervals, statistic=args.statistic, level=args.level, resamples=args.resamples,
                  seed=args.seed, interval=args.interval, compare=args.compare, adjust=args.adjust, alpha=args.alpha,
                  test=args.test, permutations=args.permutations, rank=args.rank, stability=args.stability,
                  stability_method=_split(getattr(args, "stability_method", None)) or "aggregate",
                  stability_cases=getattr(args, "stability_cases", None) or "challenger",
                  missing=getattr(args, "missing", None) or "null", cluster_by=args.cluster_by)
    if args.table:
        if not args.case or not model or not args.metric:
            raise ScoreError(f"--table {args.table}: name its columns with --case COL --by COL --metric COL[,COL]")
        return analyse(args.table, case=args.case, by=model, metric=_split(args.metric), task=args.task,
                       smaller_better=_split(args.smaller_better), worst=_worst(args.worst), **common)
    if not args.case:
        raise ScoreError("a results folder's analysis needs --case TAG (the tag naming each job's case)")
    if args.cluster_by:
        raise ScoreError("--cluster-by reads a table column; give --table FILE, or leave it out for a results folder")
    from segscore.metrics.missing import larger_is_better, worst_of

    rows, metrics, floors = store_rows(report, case=args.case, by=model, task=args.task, metrics=_split(args.metric))
    common.pop("cluster_by")
    smaller = [m for m in metrics if not larger_is_better(m)] + _split(args.smaller_better)
    worst = {m: float(worst_of(m)) for m in metrics if isinstance(worst_of(m), (int, float))}
    worst.update(_worst(args.worst))
    out = analyse(rows, case="__case", by="__model", metric=metrics, task="__task" if args.task else None,
                  smaller_better=sorted(set(smaller)), worst=worst, **common)
    out["params"].update(source=report.get("source"), case=args.case, by=model, task=args.task)
    if "intervals" in out:
        out["intervals"]["floors"] = floors
    return out


def write_outputs(args, result) -> list:
    """``--csv FILE``: one CSV per part (FILE itself when there is one part, else ``FILE`` with
    ``.PART`` before its suffix); ``--json-out FILE``: the JSON. Returns the paths written."""
    from pathlib import Path

    written = []
    if getattr(args, "csv", None):
        parts = result.parts()
        base = Path(args.csv)
        for part in parts:
            path = base if len(parts) == 1 else base.with_name(f"{base.stem}.{part}{base.suffix or '.csv'}")
            result.to_csv(path, part)
            written.append(str(path))
    if getattr(args, "json_out", None):
        from segscore.io.results import write_json

        write_json(args.json_out, result)
        written.append(args.json_out)
    return written
