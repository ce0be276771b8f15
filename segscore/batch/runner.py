"""Run a batch: skip what is scored already, fan the rest out, append each row as it finishes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

STATUSES = ("scored", "refused", "crashed")


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class BatchResult:
    """The rows of a batch's jobs (in the jobs' order; a job skipped as scored already keeps its
    stored row), ``skipped`` (ids not rerun), ``workers`` (``{worker: peak RSS MB}``), ``warnings``
    (one-line strings: what the run did that a reader should know, a worker lost say)."""

    def __init__(self, rows, *, skipped=(), workers=None, out=None, warnings=()):
        self.rows = list(rows)
        self.skipped = list(skipped)
        self.workers = dict(workers or {})
        self.out = out
        self.warnings = list(warnings)

    @property
    def errors(self) -> list[dict]:
        """The rows that did not score (``refused`` or ``crashed``), each with its ``error``."""
        return [r for r in self.rows if r["status"] != "scored"]

    @property
    def results(self) -> dict:
        """``{id: result dict}`` of the scored jobs."""
        return {r["id"]: r["result"] for r in self.rows if r["status"] == "scored"}

    def counts(self) -> dict:
        return {s: sum(r["status"] == s for r in self.rows) for s in STATUSES}

    def to_frame(self):
        """A pandas DataFrame, one row per job: ``id, job, family, status, error, seconds, finished,
        version``, ``tags.NAME``, ``result.KEY`` (nested keys joined with ``.``). Needs pandas."""
        from segscore.batch.store import flat_row, row_function
        from segscore.io.frames import to_frame

        return to_frame([flat_row(r, row_function(r)) for r in self.rows], flat=True)

    def __repr__(self) -> str:
        c = self.counts()
        return (f"BatchResult({len(self.rows)} job{'' if len(self.rows) == 1 else 's'}: {c['scored']} scored ({len(self.skipped)} already), "
                f"{c['refused']} refused, {c['crashed']} crashed)")


class Progress:
    """``done/total`` jobs, failures, elapsed and estimated time on a stream (a terminal)."""

    def __init__(self, total, stream=None):
        self.total, self.stream, self.t0 = total, stream, time.monotonic()
        self.done = self.failed = 0

    def step(self, status) -> None:
        self.done += 1
        self.failed += status != "scored"
        if self.stream is None:
            return
        elapsed = time.monotonic() - self.t0
        left = elapsed / self.done * (self.total - self.done) if self.done else 0
        self.stream.write(f"\rsegscore batch: {self.done}/{self.total} jobs, {self.failed} failed, "
                          f"{_clock(elapsed)} elapsed, ~{_clock(left)} left ")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def _clock(s) -> str:
    s = int(s + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


def as_jobs(jobs) -> list:
    """Jobs from a manifest path, one job line, or a list of job lines, dicts or :class:`Job`."""
    from segscore.batch.jobs import Job, JobError, array_job, parse_job
    from segscore.batch.manifest import ManifestError, load_manifest

    if isinstance(jobs, os.PathLike) or (isinstance(jobs, str) and (
            os.path.isfile(jobs) or os.path.isdir(jobs) or os.path.splitext(jobs)[1].lower() in (".csv", ".json", ".jsonl", ".ndjson"))):
        return load_manifest(jobs)
    if isinstance(jobs, str):
        jobs = [jobs]
    out, seen = [], set()
    for i, item in enumerate(jobs):
        try:
            if isinstance(item, Job):
                job = item
            elif isinstance(item, str):
                job = parse_job(item)
            elif isinstance(item, dict) and "family" in item and "job" not in item:
                job = array_job(item, i)
            elif isinstance(item, dict):
                tags = {**(item.get("tags") or {}), **{k: v for k, v in item.items() if k not in ("id", "job", "tags")}}
                job = parse_job(item.get("job"), id=item.get("id"), tags=tags)
            else:
                raise JobError(f"a job is a command line, a dict or a Job, not {type(item).__name__}")
        except JobError as exc:
            raise ManifestError(f"job {i}: {exc}") from None
        if job.id in seen:
            raise ManifestError(f"job {i}: id {job.id!r} is given twice; give every job its own id")
        seen.add(job.id)
        out.append(job)
    return out


def run(jobs, *, client=None, out=None, threads=None, processes=None, scheduler=None, force=False, hash=False,
        progress=None, on_crash=None):
    """Score ``jobs`` and return a :class:`BatchResult`.

    ``jobs``: a manifest path (CSV, JSON, JSON Lines, grid), or a list of job lines (``"curve
    P.png --gt G.png"``), dicts ``{"id", "job", "tags"}``, or dicts ``{"id", "family", "args",
    "kwargs"}`` calling a family's :mod:`segscore.api` function on arrays (``args``: ``[truth,
    pred]``). Where they run: ``threads`` threads
    here (default: the CPUs, at most 8); or a ``distributed`` ``client``; or ``processes`` N
    (a ``LocalCluster`` of N worker processes of ``threads`` threads, default 1, on 127.0.0.1,
    closed afterwards); or ``scheduler`` (the address of a running cluster). On a cluster the
    jobs' families' kernels are warmed once per worker first; on threads each job compiles or loads
    only the kernels its path calls. ``out``: the results folder (``results.jsonl``, ``results.csv``,
    ``outputs/ID/``); a job with a ``scored`` row there for the same id, job text and input
    fingerprints is not run again unless ``force``. ``hash``: fingerprints carry sha256.
    ``progress``: a stream for the progress line. ``on_crash(job, traceback)`` sees each crash.
    """
    from segscore._version import __version__
    from segscore.batch.jobs import in_job_folder
    from segscore.batch.store import ResultsStore, fingerprint

    jobs = as_jobs(jobs)
    store = ResultsStore(out) if out is not None else None
    if store is not None:
        store.folder.mkdir(parents=True, exist_ok=True)  # an unusable --out refuses before any job runs
    previous = store.latest() if store is not None and not force else {}
    rows: dict[str, dict] = {}
    todo, skipped = [], []
    fingerprints, seen = {}, {}
    for job in jobs:
        fps = [seen[p] if p in seen else seen.setdefault(p, fingerprint(p, sha256=hash)) for p in job.inputs]
        fingerprints[job.id] = fps
        prev = previous.get(job.id)
        if (job.call is None and prev is not None and prev.get("status") == "scored" and prev.get("job") == job.job
                and prev.get("inputs") == fps):
            rows[job.id] = prev
            skipped.append(job.id)
        else:
            todo.append(job)
    meter = Progress(len(todo), progress)

    def record(job, outcome):
        if outcome["status"] == "crashed" and on_crash is not None:
            on_crash(job, outcome.get("traceback", ""))
        row = {"id": job.id, "job": job.job, "family": job.family, "tags": job.tags, "status": outcome["status"],
               "result": outcome["result"], "error": outcome["error"], "inputs": fingerprints[job.id],
               "version": __version__, "seconds": round(outcome["seconds"], 6),
               "finished": outcome["finished"]}
        if store is not None:
            store.append(row)
        rows[job.id] = row
        meter.step(row["status"])

    def task(job, threads_per_job, executor=None):
        t = {"threads": threads_per_job, "executor": executor}
        if job.call is not None:
            t["call"] = job.call
            return t
        folder = None
        values = job.values
        if job.outputs and store is not None:
            folder = str(store.outputs / job.id)
            values = in_job_folder(job, folder)
        t.update(command=job.command, values=values, argv=job.argv, folder=folder)
        return t

    families = sorted({j.family for j in todo})
    workers, warnings = {}, []
    close = None
    try:
        if todo and (client is not None or processes or scheduler):
            if client is None:
                from segscore.engine.executor import connect

                client, close = connect(processes=processes or None, threads=threads, scheduler=scheduler or None)
            workers = _run_on_cluster(client, todo, families, task, record, warnings)
        elif todo:
            n = threads or min(_cpus(), 8)
            _run_on_threads(todo, n, task, record)
            from segscore.batch.execute import peak_rss_mb

            workers = {"local": peak_rss_mb()}
    finally:
        if close is not None:
            close()
        if store is not None and (todo or store.jsonl.exists()):
            store.write_csv([j.id for j in jobs])
    return BatchResult([rows[j.id] for j in jobs if j.id in rows], skipped=skipped, workers=workers,
                       out=None if out is None else Path(out), warnings=warnings)


def _run_on_threads(todo, n, task, record) -> None:
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from segscore.batch.execute import execute

    # no family warm-up here: a job compiles (or loads) only the kernels its own path calls, and
    # numba compiles a kernel once however many threads ask for it. Warming every family first
    # cost two tiny objects jobs 24 s instead of 9 s on an empty cache (benchmarks/README.md,
    # bench_first_run's batch row). Clusters still warm: there the client builds the cache once so
    # that every worker only loads it.
    # a command's first run divided between two processes where its family plans it (objects',
    # holdout's, curve's...: segscore.engine.firstrun), as the command itself does; once stamped,
    # a file's existence checked (the README's two objects jobs on an empty cache: 10.9 -> 8.8 s)
    from segscore.families import first_run

    for command in dict.fromkeys(j.command for j in todo if j.command):
        first_run(command)
    per_job = max(1, _cpus() // n)
    pending = {}
    queue = list(reversed(todo))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="segscore-batch") as pool:
        try:
            while queue or pending:
                while queue and len(pending) < 2 * n:  # a bounded queue: a kill loses only these
                    job = queue.pop()
                    pending[pool.submit(execute, task(job, per_job))] = job
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    record(pending.pop(fut), fut.result())
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def _run_on_cluster(client, todo, families, task, record, warnings) -> dict:
    """Score ``todo`` on ``client``'s cluster; returns ``{worker: peak RSS MB}`` and appends to
    ``warnings`` what the run should say (the warm-up not reaching a worker lost meanwhile). A
    job whose worker dies is rerun elsewhere by distributed, and a row ``crashed`` when it cannot be."""
    from distributed import as_completed

    from segscore.batch.execute import execute, peak_rss_mb, warm_worker

    local = [j for j in todo if j.call is not None]  # arrays live here: run here, reduced on the cluster
    remote = [j for j in todo if j.call is None]
    if remote and families:
        from segscore.engine.executor import warm_workers

        warm_worker(families)  # here first: any missing numba cache is built once, then the workers load it
        warned = warm_workers(client, warm_worker, families)
        if warned:
            warnings.append(warned)
    for job in local:
        record(job, execute(task(job, None, executor=client)))
    futures, by_key = [], {}
    for job in remote:
        fut = client.submit(execute, task(job, 1), pure=False, key=f"segscore-job-{job.id}-{os.urandom(4).hex()}")
        futures.append(fut)
        by_key[fut.key] = job
    try:
        for fut in as_completed(futures):
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - the worker died under the job (execute never raises)
                from segscore.batch.execute import _now

                outcome = {"status": "crashed", "result": None, "error": f"{type(exc).__name__}: {exc}"[:500],
                           "seconds": 0.0, "finished": _now(), "traceback": ""}
            record(by_key[fut.key], outcome)
            fut.release()
    except BaseException:
        client.cancel(futures)
        raise
    try:  # the workers that are left (one lost at the end costs only its line of the memory report)
        peaks = client.run(peak_rss_mb, on_error="ignore")
    except Exception:  # noqa: BLE001 - the cluster itself is gone: no memory report
        peaks = {}
    return {w: round(v, 1) for w, v in peaks.items() if isinstance(v, (int, float))}

