"""The worker server of ``audit(processes=N)``: what it preloads, and its start.

This module imports nothing heavy (no numpy), so that ``segscore audit --processes N`` starts the
server first thing, and the server loads the kernels while the command reads its masks and
imports distributed (:func:`segscore.engine.executor.start_worker_server`).
"""

from __future__ import annotations

#: what the worker server imports before it forks the workers, in order: distributed, then the
#: audit's kernels (:mod:`segscore.curvilinear._worker_preload`)
WORKER_PRELOAD = ("distributed", "segscore.curvilinear._worker_preload")


def start_server() -> bool:
    """Start the audit's worker server if it is not running (a no-op without distributed, whose
    absence the audit itself reports); True where its workers will be forked from it (Linux)."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        return False
    from segscore.engine.executor import start_worker_server

    return start_worker_server(WORKER_PRELOAD)
