"""The first run of a command on an empty numba cache, compiled by two processes at once.

numba compiles one function at a time in a process (its compiler lock), so a command's first run
compiles its kernels one after another on one CPU: 12-20 s for ``surfaces`` and ``curve`` on an
idle machine while the other CPU waits. A family may say, per command, how that work divides
(:class:`Plan`); the command's first run then starts a second Python process that compiles part
of the kernels while this process compiles the rest, both writing numba's on-disk cache, and the
command then loads what the other compiled (7.2 s instead of 11.7 s for ``surfaces``, 12.2 s
instead of 19.8 s for ``curve``: benchmarks/README.md, ``bench_first_run.py``).

The order of one first run:

1. a second process starts (``python -m segscore.engine.firstrun PART ...``) and imports numba
   while this one compiles the plan's ``prelude``: every function of ours that the two sides would
   compile with *different* signatures (numba keeps one index file per function, and two
   processes adding different signatures at the same moment can leave its index naming the other's
   data: ``tests/test_first_run.py`` checks that after the prelude no function of ours is compiled
   by both sides with different signatures; the same signature from both is one entry, written whole);
2. the second process is told to start and compiles the plan's ``there`` parts while this one
   compiles its ``here`` parts (each side's kernels about half the seconds, measured per part);
3. this process waits for the second to end, then runs the plan's ``then``: the family's warm call
   of the command, which loads what the other compiled and compiles anything left, so the command
   itself runs on a warm cache.

Whether a command has had its first run is a stamp file in numba's cache folder
(:func:`segscore.cachedir.numba_cache_dir`, keyed by the kernel sources: an edit to a kernel starts
a new folder, and the stamps with it), named by the Python version; ``segscore warm`` writes the
stamps of the commands it warms. A missing stamp with a warm cache costs one second process that
loads instead of compiling, once; a stamp left by an older numba (whose cache entries numba no
longer loads) costs one first run compiled in one process, as without a plan.

``SEGSCORE_FIRST_RUN_LOG=FILE`` appends to ``FILE`` one JSON line per function of ours compiled in
each phase of each side (``{"phase", "function", "args"}``; phases ``prelude``, ``here``, ``there``,
``then``): what ``tests/test_first_run.py`` and ``benchmarks/bench_first_run.py`` check.

``SEGSCORE_COMPILE_PROCESSES=1`` turns it off (so does a machine with one CPU, or
``NUMBA_DISABLE_JIT``); nothing else changes: each kernel is then compiled where it is first
called, as before. No number depends on it: the kernels are the same, compiled here or there.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Plan", "compile_first", "is_done", "mark_done", "processes", "run_parts"]


@dataclass(frozen=True)
class Plan:
    """How a command's first run divides: each entry names a function without arguments,
    ``"module:function"``.

    ``prelude``: run here before the second process starts (the functions both sides would
    compile with different signatures); ``here`` and ``there``: this process's and the second
    process's parts, run at once; ``then``: run here after the second process ended (the family's
    warm call of the command: after it the command compiles nothing)."""

    prelude: tuple[str, ...]
    here: tuple[str, ...]
    there: tuple[str, ...]
    then: tuple[str, ...]


#: seconds the first process waits for the second before it stops it and goes on alone
WAIT_SECONDS = 600


def processes() -> int:
    """Processes a first run compiles in: ``SEGSCORE_COMPILE_PROCESSES`` (1 turns the second off),
    else 2 where this process may run on two CPUs or more."""
    value = os.environ.get("SEGSCORE_COMPILE_PROCESSES", "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return 2 if cpus >= 2 else 1


def _stamp(command: str) -> Path | None:
    """The stamp file of ``command``'s first run, or None where numba caches nothing (found without
    importing numba: a warm run of a command that overlaps numba's import with its reads keeps that)."""
    from segscore.cachedir import numba_cache_dir

    folder = numba_cache_dir()
    if folder is None or os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return None
    return Path(folder) / "first-run" / f"{command}.py{sys.version_info[0]}{sys.version_info[1]}"


def is_done(command: str) -> bool:
    """Whether ``command`` had its first run on this numba cache (or no cache is kept: nothing to do)."""
    stamp = _stamp(command)
    return stamp is None or stamp.exists()


def mark_done(commands) -> None:
    """Stamp ``commands`` as run on this numba cache (where it can be written; else nothing)."""
    for command in [commands] if isinstance(commands, str) else commands:
        stamp = _stamp(command)
        if stamp is None:
            continue
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text("the first run of this command compiled its kernels into this folder\n")
        except OSError:  # a read-only cache: the next run divides its loading again
            return


def run_parts(parts, stop: threading.Event | None = None, *, phase: str = "") -> int:
    """Call each ``"module:function"`` of ``parts`` in order (before each, return if ``stop`` is
    set); the number called. ``phase`` names them in ``SEGSCORE_FIRST_RUN_LOG`` (module docstring)."""
    log = os.environ.get("SEGSCORE_FIRST_RUN_LOG")
    compiled = _Compiled() if log and phase else None
    done = 0
    try:
        for part in parts:
            if stop is not None and stop.is_set():
                break
            module, name = part.split(":")
            getattr(importlib.import_module(module), name)()
            done += 1
    finally:
        if compiled is not None:
            compiled.write(log, phase)
    return done


class _Compiled:
    """The functions of ours numba compiles while it is registered (numba's event API)."""

    def __init__(self):
        from numba.core import event

        self.rows = []
        rows = self.rows

        class Listener(event.Listener):
            def on_start(self, ev):
                pass

            def on_end(self, ev):
                func = getattr(ev.data["dispatcher"], "py_func", None)
                if func is not None and func.__module__.startswith("segscore."):
                    rows.append((f"{func.__module__}.{func.__qualname__}", str(ev.data["args"])))

        self.listener = Listener()
        event.register("numba:compile", self.listener)

    def write(self, path, phase):
        import json

        from numba.core import event

        event.unregister("numba:compile", self.listener)
        with open(path, "a") as f:
            for name, args in self.rows:
                f.write(json.dumps({"phase": phase, "function": name, "args": args}) + "\n")


def compile_first(command: str, plan: Plan | None) -> dict | None:
    """Run ``command``'s first-run compile as the module docstring says, when it has a ``plan``,
    no stamp and two processes to use; None when nothing was done, else ``{"seconds",
    "second_process"}`` (the second process's exit code; None when none could start: this
    process then compiled everything, as without a plan)."""
    if plan is None or processes() < 2 or is_done(command):
        return None
    t0 = time.perf_counter()
    try:
        child = subprocess.Popen([sys.executable, "-m", "segscore.engine.firstrun", *plan.there],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        child = None
    code = None
    try:
        run_parts(plan.prelude, phase="prelude")
        if child is not None:
            try:
                child.stdin.write(b"go\n")
                child.stdin.flush()
            except OSError:  # it ended already: the parts it did not compile compile below
                pass
        run_parts(plan.here, phase="here")
    except BaseException:
        if child is not None:
            child.stdin.close()  # it stops at its next part; the error is this process's
        raise
    if child is not None:
        try:
            code = child.wait(WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            code = child.wait()
        child.stdin.close()
    run_parts(plan.then, phase="then")
    mark_done(command)
    return {"seconds": time.perf_counter() - t0, "second_process": code}


def _second_process(parts) -> int:
    """The second process: load numba while the first compiles the prelude, wait for ``go``, then
    compile ``parts`` (before each, stop if the first process has gone: its pipe closed early)."""
    import numba  # noqa: F401  (its import overlaps the first process's prelude)

    import segscore.kernels._jit  # noqa: F401  (the same cache folder)

    for part in parts:
        importlib.import_module(part.split(":")[0])
    if sys.stdin.readline().strip() != "go":
        return 0
    stop = threading.Event()

    def watch():
        sys.stdin.read()  # returns at end of file: the first process closed the pipe
        stop.set()

    threading.Thread(target=watch, daemon=True).start()
    run_parts(parts, stop, phase="there")
    return 0


if __name__ == "__main__":
    sys.exit(_second_process(sys.argv[1:]))
