"""Executors: run one reduction per window and add the results up.

``reduce_windows(fn, windows, merge)`` calls ``fn(window)`` for every window and folds the
partial results with ``merge(a, b)``. The fold happens in window order, so a result is the
same whichever executor ran it and however many threads it had.

- ``"threads"`` (default): a thread pool. Kernels release the GIL, and so do file reads and
  zarr's codecs, so tiles run in parallel; at most ``2 * workers`` windows are in flight,
  which bounds memory.
- ``"synchronous"``: one window at a time in the calling thread (debugging, profiling).
- ``"dask"`` or a ``distributed.Client``: one dask task per window, merged by a tree of
  tasks. Sources must then be picklable: a source opened from a path pickles as its path
  (:func:`segscore.io.sources.by_path`), so on a cluster each worker reads its own windows and the
  caller reads none; the chunks the workers read are counted back into the caller's sources. A
  task reaches its numba kernels through an import or a module-level Python function, never by
  closing over a dispatcher: a dispatcher pickled with a task is rebuilt on the worker, and its
  kernels loaded again by every job (about 2 s per worker and job, measured). Warm the numba cache in
  the calling process first (``segscore.warm``: each family's ``segscore.<family>.warmup.warm``)
  so workers load compiled kernels instead of compiling them at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

#: the threads one job may use (:func:`thread_budget`); None: the process's CPUs
_BUDGET: contextvars.ContextVar = contextvars.ContextVar("segscore_thread_budget", default=None)


@contextlib.contextmanager
def thread_budget(n: int | None):
    """Within this block (in this thread), no pass of the engine uses more than ``n`` threads:
    :func:`default_workers`, and every explicit ``threads=``/``workers=`` of :func:`side_by_side`
    and :func:`reduce_windows`, are capped at it. A batch gives each job its worker's share of
    the CPUs, so N jobs side by side do not each spread over every core (None: no cap)."""
    token = _BUDGET.set(None if n is None else max(1, int(n)))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _capped(n: int) -> int:
    b = _BUDGET.get()
    return n if b is None else max(1, min(n, b))


def default_workers() -> int:
    """Threads to use: the CPUs this process may run on, at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return _capped(max(1, min(n, 8)))


def reduce_windows(fn: Callable[[tuple], T], windows: Sequence[tuple], merge: Callable[[T, T], T], *,
                   executor=None, workers: int | None = None,
                   progress: Callable[[int, int], None] | None = None) -> T | None:
    """Fold ``fn(window)`` over ``windows`` with ``merge``; None when there are no windows."""
    windows = list(windows)
    if not windows:
        return None
    if executor is None or executor == "threads":
        return _threads(fn, windows, merge, _capped(workers or default_workers()), progress)
    if executor == "synchronous":
        return _threads(fn, windows, merge, 1, progress)
    if isinstance(executor, str):
        return _dask(fn, windows, merge, executor)
    # a distributed.Client: sources travel by path (segscore.io.sources.by_path), workers read
    # their own windows, and the chunks they read are counted here as if read here
    from segscore.io.sources import absorb_counts

    task, both = _on_workers(fn, merge)
    result, counts = _dask(task, windows, both, executor)
    absorb_counts(counts)
    return result


def _threads(fn, windows, merge, workers, progress):
    total = len(windows)
    acc = None
    done = 0

    def fold(result):
        nonlocal acc, done
        acc = result if acc is None else merge(acc, result)
        done += 1
        if progress is not None:
            progress(done, total)

    if workers <= 1 or total == 1:
        for w in windows:
            fold(fn(w))
        return acc
    from segscore.io.zarr_store import read_chunks_in_caller  # a task per core: no pool under it

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="segscore",
                            initializer=read_chunks_in_caller) as pool:
        pending: deque = deque()
        it = iter(windows)
        for w in it:
            pending.append(pool.submit(fn, w))
            if len(pending) >= 2 * workers:
                fold(pending.popleft().result())
        while pending:
            fold(pending.popleft().result())
    return acc


def _dask(fn, windows, merge, executor):
    import dask

    parts = [dask.delayed(fn, pure=False)(w) for w in windows]
    merge_task = dask.delayed(merge, pure=True)
    while len(parts) > 1:  # a balanced tree of merges keeps the fold in window order
        nxt = [merge_task(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    if executor == "dask":
        (result,) = dask.compute(parts[0])
        return result
    future = executor.compute(parts[0])  # a distributed.Client
    return future.result()


def _on_workers(fn, merge):
    """``fn`` and ``merge`` for tasks on other processes: each task hands back, beside its partial
    result, the chunk counts of the sources its process reopened (:func:`segscore.io.sources.chunk_counts`),
    merged alongside the partial results."""
    from segscore.io.sources import chunk_counts, merge_counts

    def task(window):
        out = fn(window)
        return out, chunk_counts()

    def both(a, b):
        return merge(a[0], b[0]), merge_counts(a[1], b[1])

    return task, both


def side_by_side(calls: Sequence[Callable[[], T]], *, threads: int | None = None) -> list[T]:
    """Run independent zero-argument ``calls`` (the kernels release the GIL) on the engine's
    threads and return their results in order; an exception of any call is raised here.
    With one thread, or one call, they run in this thread one after the other."""
    calls = list(calls)
    threads = min(len(calls), _capped(threads or default_workers()))
    if threads <= 1:
        return [c() for c in calls]
    with ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="segscore") as pool:
        futures = [pool.submit(c) for c in calls[1:]]
        first = calls[0]()
        return [first] + [f.result() for f in futures]


@contextlib.contextmanager
def thread_pool(threads: int | None = None, *, name: str = "segscore"):
    """``(pool, n)``: a ``concurrent.futures`` pool of ``n`` threads (``threads``, else
    :func:`default_workers`; capped by :func:`thread_budget`) for tasks their caller schedules
    itself (``submit``, ``wait``) rather than a fold over windows: an audit's cases. Shut down,
    waiting for its tasks, when the block ends."""
    n = _capped(int(threads or default_workers()))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix=name) as pool:
        yield pool, n


#: dask config of the clusters segscore starts (public dask settings; a cluster you start keeps
#: its own): no statistical task profiler (it costs a one-thread scoring task a third of its time),
#: slower monitors and tick, work stealing every 100 ms. distributed's own MALLOC_TRIM_THRESHOLD_
#: (65536) is kept: glibc then gives a finished window's arrays back at once, so a worker falls
#: back to its baseline between windows (unset, a worker kept 115-130 MB of each 160³ TopoScore tile
#: and the 1 GB workers of a 1280³ surfaces job paused for good). Measurements: benchmarks/README.md
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "10s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "1s",
    "distributed.scheduler.work-stealing-interval": "100ms",
}

#: added for workers of many small tasks (the metric audit, ``small_tasks=True``): glibc's own malloc
#: thresholds as in a plain process (distributed's 65536 doubled an audit's page faults). distributed's
#: nanny leaves its pre-spawn environment in this process's os.environ, where it wins over the
#: config: an audit cluster started after another cluster in one process keeps 65536 (speed only)
SMALL_TASKS_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}

def local_cluster(processes: int, threads: int | None = None, *, small_tasks: bool = False):
    """``(client, cluster)``: a ``distributed.LocalCluster`` of ``processes`` worker processes
    with ``threads`` threads each (default 1) on 127.0.0.1, no dashboard, quiet logs, no task
    profiler and slower monitors (:data:`LOCAL_CLUSTER_CONFIG`; with ``small_tasks`` also
    :data:`SMALL_TASKS_CONFIG`). A cluster you start yourself keeps its own settings (set those
    there for the same speed)."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({**LOCAL_CLUSTER_CONFIG, **(SMALL_TASKS_CONFIG if small_tasks else {})}):
        cluster = LocalCluster(n_workers=processes, threads_per_worker=threads or 1, processes=True,
                               dashboard_address=None, host="127.0.0.1", silence_logs=logging.ERROR)
        try:
            client = Client(cluster)
        except BaseException:
            cluster.close()
            raise
    return client, cluster


#: what a worker process holds before its first task: distributed, NumPy, numba and the kernels
#: (170-260 MB measured on the benchmark's workers, docs/cluster.md)
WORKER_BASELINE_BYTES = 256 * 2**20


def worker_budget(client) -> tuple[int, int] | None:
    """``(budget, limit)``: the bytes one task may take on the smallest worker of ``client``'s
    cluster, and that worker's ``memory_limit``. The budget is the part of the limit below which
    distributed runs tasks (it pauses a worker at ``distributed.worker.memory.pause``, default 0.8
    of the limit) less :data:`WORKER_BASELINE_BYTES`. None when no worker has a limit."""
    import dask

    workers = client.scheduler_info().get("workers", {})
    limits = [int(w.get("memory_limit") or 0) for w in workers.values()]
    limits = [n for n in limits if n > 0]
    if not limits:
        return None
    pause = dask.config.get("distributed.worker.memory.pause", 0.8) or 1.0
    limit = min(limits)
    return max(0, int(float(pause) * limit) - WORKER_BASELINE_BYTES), limit


def budget_words(budget) -> str:
    """How a refusal names a worker's budget (:func:`worker_budget`)."""
    usable, limit = budget
    return (f"a worker's budget of {usable} bytes (its memory limit of {limit} bytes up to where distributed "
            f"pauses it, less {WORKER_BASELINE_BYTES} bytes for the worker itself)")


#: how long :func:`connect` waits for a scheduler address to answer
CONNECT_TIMEOUT = "5s"


def connect(*, processes: int | None = None, threads: int | None = None, scheduler=None, small_tasks: bool = False):
    """``(client, close)``: the ``distributed`` client work fans out on and what ends it, the one
    way every part of segscore reaches a cluster (the batch runner, the metric audit). ``scheduler``
    is a ``distributed.Client`` (used as it is; ``close`` leaves it running) or the address of a
    running scheduler (connected within :data:`CONNECT_TIMEOUT`; ``close`` disconnects, the cluster keeps running);
    else ``processes`` starts a :func:`local_cluster` of that many workers of ``threads`` threads
    (``close`` shuts it down; ``small_tasks``: as :func:`local_cluster`). ``(None, None)`` when
    neither is given: this process's threads.
    Refused in one line (:class:`~segscore.errors.ScoreError`): ``distributed`` not installed, or a
    scheduler address nothing answers at."""
    if scheduler is None and processes is None:
        return None, None
    from segscore.errors import ScoreError

    try:
        from distributed import Client
    except ImportError:
        raise ScoreError("--processes/--scheduler need the distributed package; fix: pip install "
                         "'segscore[dist]'") from None
    if scheduler is not None:
        if not isinstance(scheduler, str):
            return scheduler, (lambda: None)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ScoreError(f"--scheduler {scheduler}: cannot connect ({type(exc).__name__}: "
                             f"{(str(exc).splitlines() or [''])[0]}); fix: start a scheduler there "
                             "or use --processes N") from None
        return client, client.close
    client, cluster = local_cluster(processes, threads, small_tasks=small_tasks)

    def close():
        try:
            client.close()
        finally:
            cluster.close()

    return client, close


#: the warm-ups (``"module:function"``) this process has run (:func:`warm_once`)
_WARMED: set = set()


def warm_once(name: str) -> None:
    """Run the warm-up ``name`` (``"module:function"``) in this process unless it ran here before."""
    if name in _WARMED:
        return
    import importlib

    module, _, function = name.partition(":")
    getattr(importlib.import_module(module), function)()
    _WARMED.add(name)


def warm_cluster(client, name: str) -> None:
    """Run the kernel warm-up ``name`` (``"module:function"``) on one worker of ``client``'s
    cluster, then on the others at once, each worker once in its life (:func:`warm_once`): numba's
    on-disk cache is built by one process, then loaded by the rest (numba #4807, #10128:
    processes building one cache at once can crash). A worker that joins later loads the kernels
    when its first task needs them."""
    workers = sorted(client.scheduler_info().get("workers", {}))
    if workers:
        client.run(warm_once, name, workers=workers[:1])
    if len(workers) > 1:
        client.run(warm_once, name, workers=workers[1:])


def warm_workers(client, fn, *args) -> str | None:
    """Run ``fn(*args)`` on every worker of ``client``'s cluster, now and on any worker that joins
    or is restarted later (a ``distributed`` worker plugin): the warm-up of the kernels a task
    needs. None when it is in place; else the one-line reason it is not (a worker lost during the
    warm-up, say), and the tasks then load their kernels when they first run."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class _Warm(WorkerPlugin):
        name = f"segscore-warm-{getattr(fn, '__name__', 'fn')}"

        def setup(self, worker):
            fn(*args)

    try:
        client.register_plugin(_Warm())
    except Exception as exc:  # noqa: BLE001 - a worker lost at this moment: the work still runs
        return f"the kernels' warm-up did not reach every worker ({type(exc).__name__}: {exc}); they load on first use"
    return None
