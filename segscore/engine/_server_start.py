"""Imported first by the worker server (:func:`segscore.engine.executor.start_worker_server`).

The server started with variables of its own beside the pre-spawn ones: ``PYTHONPATH`` (the
starting process's ``sys.path``) and ``PYTHONSAFEPATH`` (no current folder in front of it), which
shaped its ``sys.path`` as the interpreter started; and ``SEGSCORE_WORKER_SERVER``, naming the
process that started it and those variables' values there. This puts the variables back as they
are in that process, so that a worker forked from the server has that process's environment with
the pre-spawn variables set, as a spawned worker has; and it records that this process is the
server, which arms :mod:`segscore.engine._server_exit`. Anywhere else (no such variable, or one
written for another process) it does nothing.
"""

from __future__ import annotations

import json
import os

#: this process's pid where it is a worker server segscore started, else None
SERVER_PID = None


def _take() -> None:
    global SERVER_PID
    raw = os.environ.get("SEGSCORE_WORKER_SERVER")
    if raw is None:
        return
    try:
        spec = json.loads(raw)
        parent, restore = int(spec["parent"]), dict(spec["restore"])
    except (ValueError, KeyError, TypeError):
        return
    if parent != os.getppid():
        return  # a variable inherited from further up, not this process's start
    del os.environ["SEGSCORE_WORKER_SERVER"]
    for k, v in restore.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = str(v)
    SERVER_PID = os.getpid()


_take()
