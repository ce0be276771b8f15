"""Imported last by the worker server (:func:`segscore.engine.executor.start_worker_server`).

The server ends when the process that started it ends. With numba and distributed loaded, tearing
its interpreter down took 0.6 s here, and it holds that process's standard output and error open
until it is gone: a pipe read from ``segscore audit --processes 2`` (a benchmark's, or ``| jq``)
stayed open that long after the command had exited. This ends the server at once instead, as
the workers forked from it end: the atexit handler runs before the teardown, in the server only
(a worker inherits it but has another pid, and leaves by ``os._exit`` anyway). The server owns
nothing to release: its socket lives in Linux's abstract namespace.
"""

from __future__ import annotations

import atexit
import os

_SERVER = os.getpid()


def _exit_now() -> None:
    if os.getpid() == _SERVER:
        os._exit(0)


atexit.register(_exit_now)
