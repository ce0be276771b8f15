"""Shared benchmark plumbing: whole-process wall time and peak RSS, medians, a table.

Every benchmark runs the contenders side by side in one run of one script, so the ratios
it prints are measured under the same machine load. Numbers are medians of ``repeat``
runs; peak RSS is the command's own ``ru_maxrss``, measured under a bare parent (see run_once).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("SEGSCORE_BENCH_CACHE", REPO / "benchmarks" / "_cache"))


def shared_data(sub: str, *, required: bool = True) -> Path:
    """``sub`` inside the shared real data (``$SEGSCORE_SHARED_DATA`` or ``../shared/data``, as
    the tests find it). Missing: exits with the fix, or (``required=False``) gives the default
    place, so a later read names it."""
    sys.path.insert(0, str(REPO))
    from tests.conftest import shared_data_dir

    d = shared_data_dir()
    if d is None:
        if required:
            sys.exit("shared data not found: set SEGSCORE_SHARED_DATA or place it at ../shared/data")
        d = Path(os.environ.get("SEGSCORE_SHARED_DATA") or REPO.parent / "shared" / "data")
    return d / sub


def with_bytecode(env) -> dict:
    """``env`` with Python's bytecode cache on, for every contender alike: a measured process
    loads its modules as an installed package does (pip writes their bytecode at install time).
    This machine's environment sets ``PYTHONDONTWRITEBYTECODE=1``, under which every segscore
    process run from this checkout compiled its ~40 modules from source (0.1 s of a 1 s
    process) while the peers' venvs loaded theirs. The bytecode goes to ``_cache/pyc``
    (``PYTHONPYCACHEPREFIX``), not into the source tree. ``SEGSCORE_BENCH_NO_BYTECODE=1``
    keeps the environment as it is."""
    env = dict(env)
    if env.get("SEGSCORE_BENCH_NO_BYTECODE") == "1":
        return env
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(CACHE / "pyc"))
    return env


def python_env() -> dict:
    """The environment for child processes: this checkout first on the path, bytecode cached
    (:func:`with_bytecode`)."""
    env = with_bytecode(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


#: a bare Python that runs the measured command as its child and reports the child's peak RSS.
#: On Linux a child's ``ru_maxrss`` starts from its parent's RSS at fork/exec time, so a big
#: benchmark process would inflate every number it measures; this small parent does not.
_WRAPPER = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_once(argv, *, env=None, cwd=None, stdout=subprocess.DEVNULL) -> dict:
    """Run ``argv`` once: wall seconds, peak RSS (MB, the command's own) and the exit code."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-S", "-c", _WRAPPER, rss.name, *map(str, argv)],
                              env=env or python_env(), cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        peak_kb = int(rss.read() or 0)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace")
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{err[-2000:]}")
    return {"seconds": wall, "peak_mb": peak_kb / 1024.0}


def measure(argv, *, repeat=3, warmup=1, env=None, cwd=None) -> dict:
    """Median wall time and peak RSS of ``repeat`` runs after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        run_once(argv, env=env, cwd=cwd)
    runs = [run_once(argv, env=env, cwd=cwd) for _ in range(repeat)]
    return {"seconds": statistics.median(r["seconds"] for r in runs),
            "peak_mb": statistics.median(r["peak_mb"] for r in runs), "runs": runs}


def measure_interleaved(cases: dict, *, repeat=3, warmup=1, env=None, cwd=None) -> dict:
    """``measure`` for several commands at once, run in turns (A B C A B C ...).

    On a shared, noisy machine a burst of load then hits every contender alike, so the
    ratios between them hold better than timings taken one contender after another.
    """
    runs = {name: [] for name in cases}
    for i in range(warmup + repeat):
        for name, argv in cases.items():
            r = run_once(argv, env=env, cwd=cwd)
            if i >= warmup:
                runs[name].append(r)
    return {name: {"seconds": statistics.median(r["seconds"] for r in rs),
                   "peak_mb": statistics.median(r["peak_mb"] for r in rs), "runs": rs}
            for name, rs in runs.items()}


def time_call(fn, *, repeat=3, warmup=1) -> float:
    """Median seconds of ``fn()`` in this process, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


#: the least work a process that runs a numba kernel does: start the interpreter, import numpy and
#: numba, call one cached one-line kernel (numba's first dispatch builds its CPU target: about
#: 0.4 s, scipy.linalg's import among it), exit. With the collector treated as segscore's CLI
#: treats it (rested while starting, frozen at the exit), so no segscore process can beat it.
_NUMBA_FLOOR_KERNEL = (
    "import numba\n\n\n"
    "@numba.njit(cache=True, nogil=True)\n"
    "def total(a):\n"
    "    s = 0\n"
    "    for x in a:\n"
    "        s += x\n"
    "    return s\n"
)
_NUMBA_FLOOR_RUN = (
    "import gc, sys\n"
    "gc.disable()\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "import numpy as np\n"
    "from floor_kernel import total\n"
    "total(np.zeros(3, np.int64))\n"
    "print('{}')\n"
    "gc.freeze()\n"
)


def numba_floor_argv() -> list[str]:
    """A whole process that does nothing but start numba and run one cached kernel (its source
    under ``_cache/numba_floor``; its cache entry is made by the first run, so measure it with
    a warm-up). Prints ``{}``. The start-up floor under every whole-process row of segscore: a
    target below it cannot be met by any process that runs a numba kernel."""
    folder = CACHE / "numba_floor"
    folder.mkdir(parents=True, exist_ok=True)
    kernel = folder / "floor_kernel.py"
    if not kernel.exists() or kernel.read_text() != _NUMBA_FLOOR_KERNEL:
        kernel.write_text(_NUMBA_FLOOR_KERNEL)
    return [sys.executable, "-c", _NUMBA_FLOOR_RUN, str(folder)]


def segscore_argv(*args) -> list[str]:
    return [sys.executable, "-m", "segscore", *map(str, args)]


def curvicost_exe() -> str:
    """curvicost's console script: on PATH, else beside this interpreter (a venv not activated)."""
    import shutil

    return shutil.which("curvicost") or str(Path(sys.executable).with_name("curvicost"))


def table(rows, columns) -> str:
    """A markdown table of ``rows`` (dicts) with ``columns`` (key, header, format)."""
    head = "| " + " | ".join(h for _, h, _ in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = []
    for r in rows:
        cells = []
        for key, _, fmt in columns:
            v = r.get(key)
            cells.append("" if v is None else (fmt.format(v) if fmt else str(v)))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


def _pss_mb(pid: int) -> float:
    """Proportional set size of ``pid`` (MB): its private pages plus its share of each page it
    shares with other processes (``/proc/PID/smaps_rollup``; 0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _status_mb(pid: int) -> tuple[float, float] | None:
    """``(VmRSS, VmHWM)`` of ``pid`` in MB (``/proc/PID/status``): its resident set now and at its
    highest so far; None once it has gone."""
    rss = hwm = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024.0
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None if rss is None or hwm is None else (rss, hwm)


class TreeMemory:
    """Memory of the process tree under ``pid`` while it runs, sampled in a thread: each process's
    own peak RSS (``peaks``, MB: its high-water mark, ``VmHWM``, as last read before it ended;
    with ``names``), the peak of the tree's summed RSS (``tree_rss``) and of its summed PSS
    (``tree_pss``: pages a forked worker shares with the process it was forked from counted once,
    not once per process). ``include_root``: whether ``pid`` itself counts in the sums.

    ``getrusage``'s peak of a child (``wait4``) is the highest of the child and of every process
    it reaped: a command that reaped its spawned workers reported a worker's peak as its own. The
    high-water mark here is each process's alone.

    The memory of the processes already known is read every ``interval`` s (about 0.03 ms each);
    the tree itself (new children, which means reading every process of the machine: about 3 ms
    here) and the PSS every ``refresh`` s, and every ``interval`` during the first second. A run
    on every CPU pays this sampler's time out of its own; polling the whole tree every 0.1 s cost
    about 3 % of a CPU."""

    def __init__(self, pid: int, *, include_root: bool = True, interval: float = 0.05, refresh: float = 0.5):
        import psutil

        self.peaks: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.direct: set[int] = set()  # the children of ``pid`` itself seen
        self.tree_rss = 0.0
        self.tree_pss = 0.0
        self.include_root = include_root
        self.interval, self.refresh = interval, refresh
        self._stop = threading.Event()
        try:
            self.root = psutil.Process(pid)
        except psutil.Error:  # gone already: nothing to sample
            self.root = None
            self._thread = None
            return
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _tree(self) -> list:
        import psutil

        try:
            kids = self.root.children(recursive=True)
        except psutil.Error:
            return []
        self.direct.update(k.pid for k in kids if k.ppid() == self.root.pid)
        return ([self.root] if self.include_root else []) + kids

    def _poll(self):
        import psutil

        procs, next_refresh, t0 = [], 0.0, time.perf_counter()
        while not self._stop.is_set():
            now = time.perf_counter()
            refresh = now >= next_refresh
            if refresh:
                procs = self._tree()
                next_refresh = now + (self.interval if now - t0 < 1.0 else self.refresh)
            total = pss = 0.0
            for p in procs:
                got = _status_mb(p.pid)
                if got is None:
                    continue
                rss, hwm = got
                total += rss
                if hwm > self.peaks.get(p.pid, 0):
                    self.peaks[p.pid] = hwm
                    if p.pid not in self.names:
                        try:
                            self.names[p.pid] = " ".join(p.cmdline()[:3])
                        except psutil.Error:
                            pass
                if refresh:
                    pss += _pss_mb(p.pid)
            self.tree_rss = max(self.tree_rss, total)
            if refresh:
                self.tree_pss = max(self.tree_pss, pss)
            self._stop.wait(self.interval)

    def stop(self) -> "TreeMemory":
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self


def machine_note() -> str:
    import platform

    try:
        ncpu = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        ncpu = os.cpu_count()
    return f"{platform.node()} · {ncpu} CPUs · Python {platform.python_version()} · {time.strftime('%Y-%m-%d %H:%M')}"
