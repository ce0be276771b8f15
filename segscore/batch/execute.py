"""What runs on a worker: one job (a thread here, or a task on a dask worker), and the warm-up."""

from __future__ import annotations

import os
import shutil
import time
import traceback
from datetime import datetime, timezone


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def warm_worker(families) -> list[str]:
    """Compile or load the kernels of ``families`` in this process (once per worker)."""
    from segscore.families import warm

    return warm(list(families))


def execute(task: dict) -> dict:
    """Run one job and return ``{status, result, error, seconds, finished}``, never raising:
    ``scored`` with the result dict (JSON-ready), ``refused`` with the refusal's one line, or
    ``crashed`` with the exception's one line and its ``traceback``.

    ``task``: ``command`` and ``values`` (parsed by the command's declarations, inputs resolved,
    outputs pointed into ``folder``) with ``argv`` (the job's words, which a ledger records), run
    by :func:`segscore.api.run_command`; or ``call`` ``(family, args, kwargs)``, the family's
    :mod:`segscore.api` function; ``folder`` the job's output folder (emptied first), ``threads``
    the job's share of the CPUs (a cap on every pass), ``executor`` for a family call (a
    distributed client)."""
    from segscore.commands._errors import refusal
    from segscore.io.results import jsonable

    t0 = time.perf_counter()
    out = {"status": "scored", "result": None, "error": None}
    try:
        folder = task.get("folder")
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder, exist_ok=True)
        if task.get("call") is not None:
            from segscore.engine.executor import thread_budget

            with thread_budget(task.get("threads") if task.get("executor") is None else None):
                result = _call(task)
        else:
            from segscore.api import run_command
            from segscore.engine.executor import thread_budget

            values = task["values"]
            if folder and values.get("slug"):  # the job's own ledger, in its folder
                from segscore.io import ledger

                if not ledger.run_path(values["slug"], values["root"]).exists():
                    ledger.init_run(values["slug"], values["root"])
            with thread_budget(task.get("threads")):  # the job's share of the worker's CPUs, in every pass
                result = run_command(task["command"], values, recorded=["segscore", *(task.get("argv") or [])],
                                     figure=False)
        out["result"] = jsonable(result)
    except Exception as exc:  # noqa: BLE001 - every job ends in a row; the batch goes on
        message = refusal(exc)
        if message is None:
            out.update(status="crashed", error=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                       .rstrip(": "), traceback=traceback.format_exc())
        else:
            out.update(status="refused", error=message)
        out["result"] = None
    out["seconds"] = time.perf_counter() - t0
    out["finished"] = _now()
    return out


def _call(task):
    import inspect

    from segscore.families import family

    name, args, kwargs = task["call"]
    fn = family(name).load("score")
    kwargs = dict(kwargs)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    if task.get("executor") is not None and "executor" in params and "executor" not in kwargs:
        kwargs["executor"] = task["executor"]  # a dask array is reduced tile by tile on the cluster
    if task.get("threads") and "threads" in params and "threads" not in kwargs and "executor" not in kwargs:
        kwargs["threads"] = task["threads"]
    return fn(*args, **kwargs)


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB."""
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
