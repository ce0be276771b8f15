"""Imported last by the worker server (:func:`segscore.engine.executor.start_worker_server`).

The server ends when the process that started it ends. With numba and distributed loaded, tearing
its interpreter down took 0.6 s here, and it holds that process's standard output and error open
until it is gone: a pipe read from ``segscore audit --processes 2`` (a benchmark's, or ``| jq``)
stayed open that long after the command had exited. This ends the server at once instead, as the
workers forked from it end: its atexit handler runs before the teardown, and after the handlers of
the modules the server imported before it. It is armed only in the server
(:data:`segscore.engine._server_start.SERVER_PID`): imported anywhere else it does nothing, and a
worker forked from the server, which inherits the handler, has another pid (and leaves by
``os._exit`` anyway). The server owns nothing to release: its socket lives in Linux's abstract
namespace.
"""

from __future__ import annotations

import atexit
import os
import sys


def _exit_now(server: int) -> None:
    if os.getpid() == server:
        os._exit(0)


def _arm() -> None:
    start = sys.modules.get("segscore.engine._server_start")
    server = getattr(start, "SERVER_PID", None)
    if server is not None and server == os.getpid():
        atexit.register(_exit_now, server)


_arm()
