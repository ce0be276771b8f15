"""The metric audit (curvicost 0.3.1's ``audit``): which metric tracks which functional cost,
per error type, on your own reference masks.

    from segscore.curvilinear import audit, audit_from_cases
    result = audit(["gt1.png", "gt2.png", ...], prune_px=17)                 # score, then correlate
    result = audit_from_cases("audit.json", min_units=3)                     # correlate again only

**Cases.** Every reference mask is damaged by every operator (:data:`OPERATORS`) at every rung
of the ladder and every seed (the radius arm with the first seed only: it draws nothing, as in
curvicost), and each damaged copy is scored against its reference. The reference's work is done
once per mask (:func:`~segscore.curvilinear.scoring.prepare_reference`); the radius arm is scored
against the reference's own redraw at radius scale 1.0, prepared once too, so the rasterisation
error is not charged to the operator. A case whose copy equals the reference it is scored against
did not act: it is recorded (``acted: false``) and enters no count and no correlation.

**Seeds.** Each case's draws are seeded as curvicost 0.3.1's ``sweep`` seeds them: the operator
gets the ladder's seed number itself (``perturb(mask, operator, severity, seed=seed)``, seeds
``0 .. N-1``), whatever the reference is called, where it sits among the masks or which thread or
process runs it. The case table is therefore the same on any number of threads or processes, in
any order of the masks and under any file names, and the damaged copies are curvicost's: with the
same masks, in the same order, ladder and options, every cell's ρ, interval and label are
curvicost's. The units (the masks) enter the cluster bootstrap in the order they are given, as
in curvicost, so reordering the masks changes the intervals (and so possibly a label), never a case
or a ρ. (Before issue 26 each case was seeded from a SHA-256 of the file name, the operator, the
severity and the seed: audits run before then drew other copies and are not comparable.)

**Ladders.** ``"default"`` (curvicost's shortened one: break, bridge, truncate at 2, 5, 10, 20 and
50 % of the eligible population; radius x0.7, 0.85, 1.15, 1.3; boundary 0.5, 2, 5, 10, 20 % of the
foreground; 1 seed; 1,000 bootstrap resamples) or ``"study"`` (the paper's: 1, 2, 5, 10, 20, 35,
50 %; radius x0.5, 0.7, 0.85, 1.15, 1.3; boundary 0.2, 0.5, 1, 2, 5, 10, 20 %; 3 seeds; 2,000
resamples); ``severities``, ``radius_scales``, ``boundary_fracs``, ``seeds`` and ``n_boot`` override
parts of either.

**Quantities.** The costs correlated against: ``traceable_frac`` and ``conductance_twosided`` by
default, also ``conductance_frac``, ``traceable_single_frac`` and ``density_kept`` (``1 - |c - 1|``,
``c`` the foreground count of the copy over the reference's), and functions of the mask of your
own (``cost_fns``: ``"module:function"``, the module importable, in the current folder, or a path
to a ``.py`` file; or a callable). A user function is called as curvicost calls it, ``fn(mask)``
with a bool array (a copy), on the reference and on every damaged copy (the radius arm: on the
redraw it is scored against), and must return a finite number; the audited value is ``c =
q(copy) / q(reference)`` read one-sided (``c``) or two-sided (``min(c, 1/c)``, ``0`` for ``c <= 0``),
named ``user:<function>``; a reference on which it is 0 gives null fractions (with notes). Every
case row carries the four graph costs and ``density_kept`` whatever was audited, so a re-analysis
can pick another.

**Redraw floor.** Each reference is also redrawn at radius scale 1.0 and scored against the
original (operator ``redraw``): what every metric and quantity reads when only the drawing differs.
``redraw_floor`` holds median, min, max and n over masks per cost and metric; each findings row
gets ``redraw_metric`` and ``redraw_cost`` (the medians). ``redraw_floor=False`` skips it (and the
two row fields).

**Statistics** (:func:`~segscore.curvilinear.findings.findings_from_cases`): sign-aligned Spearman
per (cost, operator, metric) cell, a 95 % cluster bootstrap over reference masks, the paper's
labels, curvicost 0.3.1's field names; null where curvicost writes NaN, the reason in the row's
``reason`` (or, for a row's null ``redraw_metric``/``redraw_cost``, appended to it).

**Fan-out.** Cases are tasks: a thread pool in this process by default (``threads``), or a
``distributed`` cluster: ``processes=N`` starts a ``LocalCluster`` of N worker processes on
127.0.0.1 (one thread each unless ``threads``) and closes it; ``scheduler`` (an address or a
``distributed.Client``) uses an existing one. The kernels (:func:`segscore.curvilinear.warmup.audit`: the family's
warm-up less the Betti matching, which an audit does not compute; the five operators on a tiny mask and the statistics' kernels) are warmed where the cases run before
any arrives: in this process for its threads, on each worker (a worker plugin, so a restarted
worker too) for a cluster. Each task runs on one thread (:func:`_one_thread`): ``threads=N`` or N
one-thread processes use N CPUs. On a cluster each reference's preparation is a task and its cases
follow in tasks of :data:`CASES_PER_TASK`; distributed schedules them (a task lost with its worker
runs again elsewhere). The statistics' bulk (each cell's ρ and interval,
:func:`~segscore.curvilinear.findings.cell_statistics`) is then cut in one part per worker or
thread, run side by side, so on a cluster this process never starts numba. ``distributed`` is
imported only on those paths.

**Result** (the result contract, :mod:`segscore.io.results`): curvicost's fields ``n_cases``,
``n_units`` (acting cases and units), ``has_ci``, ``min_units``, ``min_cases``, ``findings``,
``ladder``, ``scale``, ``redraw_floor`` (null when skipped), ``cases`` (with ``include_cases``;
null otherwise), curvicost's ``cost_labels``/``cost_sided``; segscore's ``operator_notes``
(curvicost's ``notes``), ``n_declined``, ``n_boot``, ``costs``, ``metrics``, ``references``,
``format``/``version`` (so the JSON with its cases is a segscore case table ``audit_from_cases``
and :func:`~segscore.curvilinear.findings.read_cases` read back), and ``notes``: every null outside
the findings rows by dotted path (``cases.12.apls``, ``redraw_floor.values.apls.median``).
Cases carry the audited metrics (:data:`~segscore.curvilinear.scoring.AUDIT_METRICS`; not
``betti_matching``, which segscore does not compute: curvicost's cases hold NaN there), less
``erl_star`` and ``node_recall`` with ``erl=False`` (curvicost's ``--no-erl`` drops them).

Import the module's other names with ``from segscore.curvilinear.auditing import ...``: the package
attribute ``segscore.curvilinear.audit`` is this function, not the module.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
from dataclasses import dataclass

import numpy as np

from segscore.errors import ScoreError, whole_number
from segscore.io.results import as_result
from segscore.io.budget import load_json

__all__ = ["audit", "audit_from_cases", "load_cost_fn", "UserCost", "resolve_ladder",
           "summarise_floor", "OPERATORS", "DEFAULT_SEVERITIES", "STUDY_SEVERITIES", "DEFAULT_SEEDS",
           "STUDY_SEEDS", "DEFAULT_N_BOOT", "STUDY_N_BOOT", "COSTS", "BUILTIN_COSTS", "COST_LABELS"]

from segscore.curvilinear.ladders import (  # noqa: F401  (re-exported)
    OPERATORS, COUNTING, DEFAULT_SEVERITIES, STUDY_SEVERITIES, DEFAULT_SEEDS, STUDY_SEEDS, DEFAULT_N_BOOT,
    STUDY_N_BOOT, COSTS, GRAPH_COSTS, BUILTIN_COSTS, COST_LABELS, ERL_METRICS, SEVERITY_RANGE, MIN_UNITS,
    MIN_CASES, _levels, resolve_ladder, _plan)

from segscore.curvilinear.costfns import SIDED, UserCost, load_cost_fn  # noqa: E402,F401  (re-exported)


# ------------------------------------------------------------------------------------------
# per-reference work and one case (these run on workers)
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Options:
    prune_px: float
    metrics: tuple
    users: tuple  # UserCost
    need_radius: bool
    spacing: tuple | None = None  # one voxel size per axis for every mask; None: each file's header, else 1


@dataclass
class _Prepared:
    name: str
    mask: np.ndarray
    ref: object
    count: int
    q: dict
    radius_mask: np.ndarray | None = None
    radius_ref: object = None
    radius_count: int = 0
    radius_q: dict | None = None


@dataclass(frozen=True)
class _Failure:
    """A refusal raised on a worker, carried back as a value (so no worker logs a traceback)."""

    message: str


def _prepare(name, mask, opts: _Options):
    from segscore.curvilinear.operators import perturb
    from segscore.curvilinear.scoring import prepare_reference

    try:
        spacing = opts.spacing
        if spacing is None and isinstance(name, str) and os.path.exists(name):
            from segscore.io.spacing import read_spacing

            spacing = read_spacing(name)
        ref = prepare_reference(mask, prune_px=opts.prune_px, spacing=spacing)
        q = {u.name: u.value(mask, name) for u in opts.users}
        p = _Prepared(name, mask, ref, int(np.count_nonzero(mask)), q)
        if opts.need_radius:
            rm, _ = perturb(mask, "radius", 1.0, prune_px=opts.prune_px, name=name, analysis=ref.analysis())
            p.radius_mask = rm
            p.radius_ref = prepare_reference(rm, prune_px=opts.prune_px, spacing=spacing)
            p.radius_count = int(np.count_nonzero(rm))
            p.radius_q = {u.name: u.value(rm, f"{name} (its redraw at radius scale 1.0)") for u in opts.users}
        return p
    except ScoreError as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _Failure(why if str(name) in why else f"{name}: {why}")


def _summary(prep):
    if isinstance(prep, _Failure):
        return prep
    return {"median_radius": float(prep.ref.median_radius)}


def _case(prep, spec, opts: _Options):
    """One case row (``spec``: operator, severity, seed); the redraw floor's row for operator
    ``"redraw"``."""
    if isinstance(prep, _Failure):
        return prep
    try:
        return _case_row(prep, spec, opts)
    except ScoreError as exc:
        return _Failure(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def _cases(prep, specs, opts: _Options) -> list:
    """The rows of several cases of one reference (one task on a cluster); the first refusal
    instead, as a one-element list."""
    rows = []
    for spec in specs:
        r = _case(prep, spec, opts)
        if isinstance(r, _Failure):
            return [r]
        rows.append(r)
    return rows


#: cases per task on a cluster: a task per case kept the client and scheduler busy with task
#: bookkeeping; a few cases per task amortise it, and distributed still balances the tasks
CASES_PER_TASK = 4


def _case_row(prep: _Prepared, spec, opts: _Options) -> dict:
    from segscore.curvilinear.operators import perturb
    from segscore.curvilinear.scoring import _score as score

    op, sev, seed = spec
    name = prep.name
    if op == "redraw":
        out, ctx, count, q_ref, reference = prep.radius_mask, prep.ref, prep.count, prep.q, prep.mask
        row = {"unit": name, "operator": "redraw", "severity": 1.0, "seed": 0}
        where = f"{name} (its redraw at radius scale 1.0)"
    else:
        # seeded as curvicost's sweep seeds it: the ladder's seed number, nothing else
        out, info = perturb(prep.mask, op, sev, seed=int(seed), prune_px=opts.prune_px, name=name,
                            analysis=prep.ref.analysis())  # the reference's skeleton and graph, made once
        if op == "radius":
            reference, ctx, count, q_ref = prep.radius_mask, prep.radius_ref, prep.radius_count, prep.radius_q
            realised = None
        else:
            reference, ctx, count, q_ref = prep.mask, prep.ref, prep.count, prep.q
            realised = info.get("voxels_moved") if op == "boundary" else info.get("n_applied")
        row = {"unit": name, "operator": op, "severity": float(sev), "seed": int(seed),
               "realised": None if realised is None else int(realised),
               "population": None if info.get("population") is None else int(info["population"])}
        row["acted"] = not np.array_equal(out, reference)
        if not row["acted"]:
            if row["realised"] is None:
                del row["realised"]
            if row["population"] is None:
                del row["population"]
            return row
        where = f"{name} (its {op} copy at severity {sev:g}, seed {seed})"
        if row["realised"] is None:
            del row["realised"]  # radius: nothing counted (curvicost: None)
        if row["population"] is None:
            del row["population"]
    sc = score(None, out, reference=ctx, all_metrics=True, betti=False)  # betti_matching is not audited
    notes = {}
    for k in GRAPH_COSTS:
        row[k] = sc[k]
    c = int(np.count_nonzero(out)) / count
    row["density_kept"] = float(1.0 - abs(c - 1.0))
    for u in opts.users:
        v = u.read(q_ref[u.name], u.value(out, where))
        row[u.name] = v
        if v is None:
            notes[u.name] = (f"{u.spec} is 0 on the reference " + ("redraw " if op == "radius" else "")
                             + f"{name}, so the fraction of it is undefined")
    for m in opts.metrics:
        row[m] = sc[m]
    for k, why in sc["notes"].items():
        if k in row and row[k] is None:
            notes[k] = why
    row["notes"] = notes
    return row


def _warm_worker():
    """The audit's warm-up (the family's scoring kernels but the Betti matching, which an audit
    does not compute) and the five operators on a tiny mask: the kernels an audit runs, compiled or
    loaded from numba's cache before any case."""
    from segscore.curvilinear.operators import perturb
    from segscore.curvilinear.warmup import audit as warm

    warm()
    m = np.zeros((24, 24), bool)
    m[12, 2:22] = m[2:22, 12] = m[4, 4:12] = True
    for op, sev in (("break", 0.5), ("bridge", 0.5), ("truncate", 0.5), ("radius", 0.8), ("boundary", 0.1)):
        perturb(m, op, sev, seed=0, prune_px=1)
    _warm_findings()


def _warm_findings():
    """The statistics' kernels (Spearman, the cluster bootstrap), loaded on a tiny cell."""
    from segscore.curvilinear.findings import cluster_interval, spearman_rho

    x = np.arange(6.0)
    spearman_rho(x, x[::-1].copy())
    cluster_interval(x, x[::-1].copy(), np.array([0, 0, 1, 1, 2, 2]), n_boot=4)


# ------------------------------------------------------------------------------------------
# running the tasks
# ------------------------------------------------------------------------------------------

def _one_thread(fn, *args):
    """``fn(*args)`` with every pass inside it held to one thread (the engine's
    :func:`~segscore.engine.executor.thread_budget`): each task of an audit is one case run (or a
    reference's preparation, or a part of the statistics) on one of the executor's threads, so
    ``threads=N`` or ``processes=N`` (one thread each) keeps N CPUs busy, not more. Without it the
    two directions of a case's surface distances ran side by side on a thread of their own: a
    one-process run used about 1.2 CPUs, and two processes oversubscribed two CPUs."""
    from segscore.engine.executor import thread_budget

    with thread_budget(1):
        return fn(*args)


def _run(refs, ladder, opts, redraw, *, threads, processes, scheduler, progress, finish, statistics):
    """``finish(cases, floors, radii, *parts)``: the cases of every reference (in plan order), the
    redraw rows, each reference's median radius and the parts of ``statistics(cases, part,
    parts)`` (the statistics' bulk, one part per worker or thread), given to ``finish``, whose
    result is returned.

    Each reference is prepared once and its cases run where it is: on this process's threads (a
    thread pool, first in first out, so a reference is let go once its cases are scored), or as
    tasks on a ``distributed`` cluster, a reference's preparation and then its cases in tasks of
    :data:`CASES_PER_TASK`, scheduled by distributed (a task lost with its worker is run again
    elsewhere). The kernels are warmed where the cases run, before the first: here, or on every
    worker by a worker plugin."""
    specs = _plan(ladder) + ([("redraw", 1.0, 0)] if redraw else [])
    n_plan = len(specs) - int(redraw)
    from segscore.engine.executor import connect

    client, close = connect(processes=processes, threads=threads, scheduler=scheduler, small_tasks=True)
    rows = [[None] * len(specs) for _ in refs]
    total, done = len(refs) * len(specs), 0
    if progress is not None:
        progress(0, total)

    def take(i, lo, got):
        nonlocal done
        if got and isinstance(got[0], _Failure):
            raise ScoreError(got[0].message)
        rows[i][lo:lo + len(got)] = got
        done += len(got)
        if progress is not None:
            progress(done, total)

    try:
        if client is None:
            from segscore.engine.executor import thread_pool

            _warm_worker()
            with thread_pool(threads, name="segscore-audit") as (pool, n):
                summaries = _on_threads(pool, refs, specs, opts, take)
            parts = _parts_here(statistics, [r for per in rows for r in per[:n_plan]], n)
        else:
            from distributed import as_completed

            from segscore.engine.executor import warm_workers

            warm_workers(client, _warm_worker)
            futures, where, summary_futures = [], {}, []
            for i, (name, mask) in enumerate(refs):
                prep = client.submit(_one_thread, _prepare, name, mask, opts, pure=False)
                summary_futures.append(client.submit(_one_thread, _summary, prep, pure=False))
                for lo in range(0, len(specs), CASES_PER_TASK):
                    f = client.submit(_one_thread, _cases, prep, specs[lo:lo + CASES_PER_TASK], opts, pure=False)
                    futures.append(f)
                    where[f.key] = (i, lo)
                del prep
            try:
                for f in as_completed(futures):
                    take(*where[f.key], f.result())
                    f.release()
                summaries = client.gather(summary_futures)
            except BaseException:
                client.cancel(futures + summary_futures)
                raise
            cases = [r for per in rows for r in per[:n_plan]]
            workers = max(1, len(client.nthreads()))
            parts = client.gather([client.submit(statistics, cases, k, workers, pure=False) for k in range(workers)])
    finally:
        if close is not None:
            close()
    radii = []
    for s in summaries:
        if isinstance(s, _Failure):
            raise ScoreError(s.message)
        radii.append(s["median_radius"])
    cases = [r for per in rows for r in per[:n_plan]]
    floors = [per[n_plan] for per in rows] if redraw else []
    return finish(cases, floors, radii, *parts)


def _on_threads(pool, refs, specs, opts, take) -> list:
    """The references' cases on ``pool``, a case a task; returns each reference's summary. A
    reference is prepared (on the pool, after the cases queued before it) once the previous one's
    cases are queued, and let go once its own are scored: at most two are held at a time, one with
    a single thread."""
    from concurrent.futures import FIRST_COMPLETED, wait

    summaries, pending = [], {}

    def drain(keep):
        while len(pending) > keep:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                take(*pending.pop(f), f.result())

    for i, (name, mask) in enumerate(refs):
        prep = pool.submit(_one_thread, _prepare, name, mask, opts).result()
        summaries.append(_summary(prep))
        for j, spec in enumerate(specs):
            pending[pool.submit(_one_thread, _cases, prep, [spec], opts)] = (i, j)
        del prep
        drain(len(specs))  # the previous reference's cases scored: it is let go
    drain(0)
    return summaries


# ------------------------------------------------------------------------------------------
# the result
# ------------------------------------------------------------------------------------------

def summarise_floor(rows, keys) -> dict:
    """``{key: {"median", "min", "max", "n"}}`` over the redraw rows (None and n = 0 where no row
    has a value)."""
    out = {}
    for k in keys:
        v = np.asarray([r[k] for r in rows if isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
                        and math.isfinite(r[k])], float)
        out[k] = ({"median": float(np.median(v)), "min": float(v.min()), "max": float(v.max()), "n": int(v.size)}
                  if v.size else {"median": None, "min": None, "max": None, "n": 0})
    return out


def _references(masks):
    """``[(name, mask)]``: paths read and checked, arrays named ``mask0``, ``mask1``, ..."""
    from segscore.curvilinear.masks import as_binary, load_mask

    if masks is None:
        masks = []
    if isinstance(masks, (str, os.PathLike, np.ndarray)):
        masks = [masks]
    items = list(masks.items()) if isinstance(masks, dict) else list(masks)
    if not items:
        raise ScoreError("no reference masks; fix: give at least one (3 or more for intervals, 10 or more for a verdict)")
    out, seen = [], set()
    for i, it in enumerate(items):
        if isinstance(masks, dict):
            name, m = it
        elif isinstance(it, tuple) and len(it) == 2 and isinstance(it[0], str):
            name, m = it
        elif isinstance(it, (str, os.PathLike)):
            name, m = os.fspath(it), it
        else:
            name, m = f"mask{i}", it
        name = str(name)
        if name in seen:
            raise ScoreError(f"{name}: given twice; fix: give each reference mask once")
        seen.add(name)
        if isinstance(m, (str, os.PathLike)):
            mask, _ = load_mask(m, what="reference mask")
        else:
            mask = as_binary(m, name)
        if not mask.any():
            raise ScoreError(f"{name}: the mask is empty; fix: give reference masks with a structure to damage")
        out.append((name, mask))
    return out


def _null_notes(obj, prefix, why, notes):
    if isinstance(obj, dict):
        for k, v in obj.items():
            _null_notes(v, f"{prefix}{k}.", why, notes)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _null_notes(v, f"{prefix}{i}.", why, notes)
    elif obj is None:
        notes[prefix[:-1]] = why


def _lift(rows, prefix, notes):
    out = []
    for i, r in enumerate(rows):
        r = dict(r)
        for k, why in (r.pop("notes", None) or {}).items():
            notes[f"{prefix}{i}.{k}"] = why
        for k, v in r.items():  # anything null the scorer did not explain
            if v is None and f"{prefix}{i}.{k}" not in notes:
                notes[f"{prefix}{i}.{k}"] = f"{k} is undefined on this case"
        out.append(r)
    return out


def _nan_to_none(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


def _plain(cases, source=None):
    """The case table the statistics read: the rows without their notes."""
    from segscore.curvilinear.findings import CaseTable

    return CaseTable([{k: v for k, v in c.items() if k != "notes"} for c in cases], source=source or "audit")


def _statistics(cases, part, parts, *, costs, n_boot, source=None):
    """Part ``part`` of ``parts`` of the cells' correlations and intervals (the bulk of the
    statistics), for :func:`_assemble`; the parts run side by side, each where it is sent."""
    from segscore.curvilinear.findings import cell_statistics

    return cell_statistics(_plain(cases, source), costs=tuple(costs), n_boot=n_boot, seed=0, part=part,
                           parts=parts)


def _parts_here(statistics, cases, n):
    """The ``n`` parts of ``statistics(cases, part, parts)`` side by side on this process's
    threads (the kernels release the GIL)."""
    from segscore.engine.executor import side_by_side

    return side_by_side([functools.partial(statistics, cases, k, n) for k in range(n)], threads=n)


def _merged(parts) -> dict:
    """The cells of every part in one dict (each cell is in one part)."""
    return {k: v for part in parts for k, v in part.items()}


def _assemble(cases, floors, *, costs, min_units, min_cases, n_boot, include_cases, ladder, scale, cost_labels,
              cost_sided, references=None, floor_values=None, floor_units=None, source=None, cells=None):
    from segscore.curvilinear.findings import CASE_TABLE_FORMAT, findings_from_cases

    notes: dict = {}
    res = findings_from_cases(_plain(cases, source), costs=tuple(costs), min_units=min_units, min_cases=min_cases,
                              n_boot=n_boot, seed=0, cells=cells)
    findings = res["findings"]
    redraw = None
    values = None
    if floors:
        values = summarise_floor(floors, tuple(res["costs"]) + tuple(res["metrics"]))
        redraw = {"n_units": len(floors), "values": values}
        if include_cases:
            redraw["cases"] = _lift(floors, "redraw_floor.cases.", notes)
    elif floor_values is not None:
        values = floor_values
        redraw = {"n_units": floor_units, "values": values}
    if values is not None:
        for k, v in values.items():
            if v.get("n", 0) == 0:
                why = _floor_null_reason(k, floors)
                for part in ("median", "min", "max"):
                    if part in v and v[part] is None:
                        notes[f"redraw_floor.values.{k}.{part}"] = why
        for f in findings:
            f["redraw_metric"] = (values.get(f["metric"]) or {}).get("median")
            f["redraw_cost"] = (values.get(f["cost"]) or {}).get("median")
            missing = [f"redraw_{w} ({f[w]}) has no redraw-floor value" for w in ("metric", "cost")
                       if f[f"redraw_{w}"] is None]
            if missing:
                f["reason"] = "; ".join(([f["reason"]] if f["reason"] else []) + missing)
    result = {
        "format": CASE_TABLE_FORMAT, "version": 1,
        "n_cases": res["n_cases"], "n_units": res["n_units"], "n_declined": res["n_declined"],
        "has_ci": res["has_ci"], "min_units": min_units, "min_cases": min_cases, "n_boot": n_boot,
        "costs": res["costs"], "metrics": res["metrics"],
        "cost_labels": cost_labels, "cost_sided": cost_sided,
        "findings": findings, "operator_notes": res["operator_notes"],
        "ladder": ladder, "scale": scale, "redraw_floor": redraw,
        "cases": _lift(cases, "cases.", notes) if include_cases else None,
    }
    if references is not None:
        result["references"] = list(references)
    if source is not None:
        result["source"] = source
    for key in ("ladder", "scale"):
        if result[key] is not None:
            _null_notes(result[key], f"{key}.", f"null in the case table's file ({source})" if source else
                        "undefined", notes)
    result["notes"] = dict(sorted(notes.items(), key=_note_order))
    result["warnings"] = []
    return result


def _note_order(kv):
    parts = kv[0].split(".")
    return [(0, int(p)) if p.isdigit() else (1, p) for p in parts]


def _floor_null_reason(key, floors):
    for r in floors:
        why = (r.get("notes") or {}).get(key)
        if why:
            return f"{key} is null on every redraw: {why}"
    return f"{key} has no value on any redraw" + ("" if floors else " in the case table's file")


@as_result
def audit(masks, *, prune_px=5, ladder="default", severities=None, radius_scales=None, boundary_fracs=None,
          seeds=None, n_boot=None, costs=COSTS, cost_fns=(), cost_sided="two", min_units=MIN_UNITS,
          min_cases=MIN_CASES, redraw_floor=True, erl=True, include_cases=False, threads=None, processes=None,
          scheduler=None, progress=None, spacing=None) -> dict:
    """Audit the metrics against the costs on reference masks (the module docstring).

    Parameters
    ----------
    masks : paths or arrays (the **references**, each the truth its damaged copies are scored
        against), a list of ``(name, array)`` pairs, or a dict ``{name: array or path}``. A path's
        name is the path as given; arrays are ``mask0``, ``mask1``, ...
    prune_px : spur-pruning length in voxels (both graphs of every case).
    ladder, severities, radius_scales, boundary_fracs, seeds, n_boot : :func:`resolve_ladder`.
    costs : built-in quantities (:data:`BUILTIN_COSTS`) correlated against.
    cost_fns : quantities of your own, ``"module:function"`` or callables (:func:`load_cost_fn`),
        audited in addition to ``costs`` as ``user:<function>``; ``cost_sided`` ``"one"`` or ``"two"``.
    min_units, min_cases : the floors below which a cell is inconclusive (the paper's 10 and 12).
    redraw_floor : score each reference's redraw against it (``redraw_floor`` block, row fields).
    erl : audit ``erl_star`` and ``node_recall`` (curvicost's ``--no-erl`` drops them).
    include_cases : the case rows (and each redraw row) in the result.
    threads, processes, scheduler : where the cases run (module docstring).
    progress : ``progress(done, total)`` after every case.
    spacing : one voxel size per axis for every mask (lengths, radii and conductance in its unit:
        :func:`segscore.curvilinear.scoring.score`); default: the one each mask file's header
        states (:func:`segscore.io.spacing.read_spacing`), else 1 per axis.
    """
    from segscore.curvilinear.scoring import AUDIT_METRICS

    if isinstance(prune_px, bool) or not isinstance(prune_px, numbers.Real) or not (0 <= prune_px <= 1e6):
        raise ScoreError(f"prune_px {prune_px!r}: must be a length in voxels from 0 to 1e6")
    lad = resolve_ladder(ladder, severities=severities, radius_scales=radius_scales, boundary_fracs=boundary_fracs,
                         seeds=seeds, n_boot=n_boot)
    min_units = whole_number(min_units, "min_units", 0)
    min_cases = whole_number(min_cases, "min_cases", 0)
    for name, v in (("threads", threads), ("processes", processes)):
        if v is not None:
            whole_number(v, name, 1)
    if processes is not None and scheduler is not None:
        raise ScoreError("processes and scheduler: give one (processes starts a local cluster, scheduler uses yours)")
    if scheduler is not None and threads is not None:
        raise ScoreError("threads with scheduler: an existing cluster's workers keep their own threads; drop threads")
    if isinstance(costs, str):
        costs = (costs,)
    costs = tuple(dict.fromkeys(costs or ()))
    for c in costs:
        if c not in BUILTIN_COSTS:
            raise ScoreError(f"costs: {c!r} is not one of {', '.join(BUILTIN_COSTS)}; fix: name a built-in quantity "
                             "or pass a function in cost_fns")
    if cost_sided not in SIDED:
        raise ScoreError(f"cost_sided {cost_sided!r}: use 'one' or 'two'")
    if isinstance(cost_fns, str) or callable(cost_fns):
        cost_fns = (cost_fns,)
    users = []
    for spec in cost_fns or ():
        u = spec if isinstance(spec, UserCost) else load_cost_fn(spec, cost_sided)
        if u.name in costs or any(u.name == o.name for o in users):
            raise ScoreError(f"--cost-fn {u.spec}: a quantity named {u.name} is already audited; fix: give each "
                             "function once (two functions of one name need different names)")
        users.append(u)
    all_costs = costs + tuple(u.name for u in users)
    if not all_costs:
        raise ScoreError("costs: none given; fix: name a built-in quantity or pass cost_fns")
    refs = _references(masks)
    metrics = tuple(m for m in AUDIT_METRICS if erl or m not in ERL_METRICS)
    if spacing is not None:
        try:
            spacing = tuple(float(v) for v in spacing)
        except (TypeError, ValueError):
            raise ScoreError(f"spacing {spacing!r}: give one voxel size per axis in array order") from None
        if not all(math.isfinite(v) and v > 0 for v in spacing):
            raise ScoreError(f"spacing {list(spacing)}: every voxel size must be a positive finite number")
    opts = _Options(prune_px=prune_px, metrics=metrics, users=tuple(users),
                    need_radius=bool(redraw_floor or lad["severities"].get("radius")), spacing=spacing)
    from segscore._version import __version__

    ladder_out = {"name": lad["name"], "severities": {op: list(v) for op, v in lad["severities"].items()},
                  "seeds": list(lad["seeds"]), "n_boot": lad["n_boot"], "prune_px": prune_px,
                  "erl": bool(erl), "version": f"segscore {__version__}",
                  "spacing": list(spacing) if spacing is not None else "each mask's header, else 1 per axis"}
    labels = {c: COST_LABELS[c] for c in costs}
    labels.update({u.name: u.label for u in users})
    sided = {u.name: u.sided for u in users}
    if "density_kept" in costs:
        sided = {"density_kept": "kept", **sided}
    finish = functools.partial(_finish, prune_px=prune_px, costs=all_costs, min_units=min_units,
                               min_cases=min_cases, n_boot=lad["n_boot"], include_cases=include_cases,
                               ladder=ladder_out, cost_labels=labels, cost_sided=sided,
                               references=[n for n, _ in refs])
    statistics = functools.partial(_statistics, costs=all_costs, n_boot=lad["n_boot"])
    return _run(refs, lad, opts, bool(redraw_floor), threads=threads, processes=processes, scheduler=scheduler,
                progress=progress, finish=finish, statistics=statistics)


def _finish(cases, floors, radii, *parts, prune_px, **assemble):
    """The audit's result from its case rows, redraw rows and each reference's median radius (and
    the cells :func:`_statistics` computed already, in ``parts``)."""
    if parts:
        assemble["cells"] = _merged(parts)
    ratios = [prune_px / r if r > 0 else math.nan for r in radii]
    fin = [r for r in ratios if math.isfinite(r)]
    scale = {"median_radius": float(np.median(radii)), "prune_px": prune_px,
             "prune_in_radii": float(np.median(fin)) if fin else None, "n_units": len(radii)}
    return _assemble(cases, floors, scale=scale, **assemble)


@as_result
def audit_from_cases(cases, *, costs=None, min_units=MIN_UNITS, min_cases=MIN_CASES, n_boot=None,
                     include_cases=False) -> dict:
    """The audit's result recomputed from an earlier audit's cases, scoring nothing.

    ``cases`` is a path (segscore's audit JSON written with its cases, a segscore case table, or
    ``curvicost audit --include-cases --json FILE``) or a list of case dicts. ``costs`` default:
    the file's; ``n_boot`` default: the file's ladder's, else 1,000. The file's ``ladder``, ``scale``
    and redraw floor (its ``values``) are carried over; findings rows get their redraw medians."""
    doc = {}
    source = None
    if isinstance(cases, (str, os.PathLike)):
        source = os.fspath(cases)
        table = read_cases_checked(source)
        try:
            doc = load_json(source, fix="", allow_nan=True)  # curvicost writes NaN for undefined values
        except (OSError, ValueError):  # read_cases read it a moment ago (a ScoreError is a ValueError)
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        doc = _nan_to_none(doc)
        cases = table
        if costs is None:
            costs = table.costs
    elif costs is None:
        costs = getattr(cases, "costs", None)
    cases = [dict(c) for c in cases]
    if costs is None:
        present = {k for c in cases for k in c}
        costs = tuple(c for c in COSTS if c in present) or COSTS
    ladder = doc.get("ladder") if isinstance(doc.get("ladder"), dict) else None
    if n_boot is None:
        nb = (ladder or {}).get("n_boot")
        n_boot = nb if isinstance(nb, int) and not isinstance(nb, bool) and nb >= 1 else DEFAULT_N_BOOT
    n_boot = whole_number(n_boot, "n_boot", 1)
    min_units = whole_number(min_units, "min_units", 0)
    min_cases = whole_number(min_cases, "min_cases", 0)
    floors = []
    floor_values = floor_units = None
    rf = doc.get("redraw_floor")
    if isinstance(rf, dict):
        if isinstance(rf.get("cases"), list) and all(isinstance(r, dict) for r in rf["cases"]):
            floors = [dict(r) for r in rf["cases"]]
        elif isinstance(rf.get("values"), dict):
            floor_values = {k: v for k, v in rf["values"].items() if isinstance(v, dict)}
            floor_units = rf.get("n_units") if isinstance(rf.get("n_units"), int) else None
    scale = doc.get("scale") if isinstance(doc.get("scale"), dict) else None
    labels = dict(doc.get("cost_labels") or {}) if isinstance(doc.get("cost_labels"), dict) else {}
    labels = {c: labels.get(c) or COST_LABELS.get(c, c) for c in costs}
    sided = doc.get("cost_sided") if isinstance(doc.get("cost_sided"), dict) else {}
    sided = {c: s for c, s in sided.items() if c in costs}
    from segscore.engine.executor import default_workers

    parts = _parts_here(functools.partial(_statistics, costs=costs, n_boot=n_boot, source=source), cases,
                        default_workers())
    result = _assemble(cases, floors, costs=costs, min_units=min_units, min_cases=min_cases, n_boot=n_boot,
                       include_cases=include_cases, ladder=ladder, scale=scale, cost_labels=labels, cost_sided=sided,
                       floor_values=floor_values, floor_units=floor_units, source=source,
                       cells=_merged(parts))
    for k, what in (("ladder", "its ladder"), ("scale", "its masks' scale")):
        if result[k] is None:
            result["notes"][k] = (f"{source or 'the case table'} does not record {what}; a case table written by "
                                  "segscore audit or curvicost audit does")
    if result["redraw_floor"] is not None and result["redraw_floor"].get("n_units") is None:
        result["redraw_floor"]["n_units"] = len({r.get("unit") for r in floors}) or None
        if result["redraw_floor"]["n_units"] is None:
            result["notes"]["redraw_floor.n_units"] = "the case table's file does not say over how many masks"
    return result


def read_cases_checked(path):
    """:func:`~segscore.curvilinear.findings.read_cases`, with the fix for an audit JSON written
    without its cases."""
    from segscore.curvilinear.findings import CASE_TABLE_FORMAT, read_cases

    try:
        return read_cases(path)
    except ScoreError as exc:
        try:
            doc = load_json(path, fix="", allow_nan=True)
        except (OSError, ValueError, RecursionError):  # a ScoreError too: too large, not text
            raise exc from None
        if isinstance(doc, dict) and doc.get("format") == CASE_TABLE_FORMAT and doc.get("cases") is None \
                and "findings" in doc:
            raise ScoreError(f"{path}: a segscore audit written without its cases; fix: rerun segscore audit ... "
                             "--include-cases --json-out FILE") from None
        raise
