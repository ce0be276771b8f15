"""The worker server of an audit on worker processes: what it preloads, and its start.

``segscore audit --processes N`` calls :func:`start_server` first thing, so that its workers are
forked from one process that imported distributed and loaded the audit's kernels once (0.6 s and
1.2-1.5 s here, which each spawned worker spent again; :func:`segscore.engine.executor.start_worker_server`).
The server is this process's fork server for as long as the process lives, so the library does
not start it on its own: a script that calls ``audit(..., processes=N)`` opts in by calling
:func:`start_server` at its top. This module imports nothing heavy (no numpy), so the server
starts before the command has imported anything else.
"""

from __future__ import annotations

#: what the worker server imports before it forks the workers: distributed and the audit's
#: kernels (:mod:`segscore.curvilinear._worker_preload`)
WORKER_PRELOAD = ("segscore.curvilinear._worker_preload",)


def start_server() -> bool:
    """Start the audit's worker server in this process if it is not running; True where later
    ``processes=N`` clusters of this process fork their workers from it (Linux), False where
    they spawn them (no distributed, whose absence the audit reports; another fork server
    running already; no server possible here)."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        return False
    from segscore.engine.executor import start_worker_server

    return start_worker_server(WORKER_PRELOAD)
