"""One job on a real dask.distributed cluster against the same streamed code on threads (issue 37).

The script starts ``dask scheduler`` and ``dask worker --nthreads 1 --memory-limit 1GB`` processes
(``--workers``: how many, a comma-separated list, default 2) on 127.0.0.1 itself, a fresh cluster per
case and worker count, and runs, each as a whole process:

* ``segscore objects TRUTH.zarr PRED.zarr`` on a 3D uint8 zarr pair of ``--size``³ voxels
  (default 256; the issue's case is ``--size 1280``, 2 GB per volume),
* ``segscore surfaces PRED.zarr TRUTH.zarr --topo-tiles A B C`` (the competition's argument order)
  on a pair of wavy sheets (uint8 0/1, ``--size``³; the prediction lifted by a plane on one half,
  holed and pillared: see make_sheets), ``--topo-tiles`` default 2 2 2 (the issue's case at 1280 is
  8 8 8: 160³ tiles; not the leaderboard's octants), and
* ``segscore auc`` of a map of ``--auc-scale``² times bench_auc's 5,980 x 8,240 area (default 2:
  the 4x map, 11,960 x 16,480, made as bench_auc.py makes it),

twice with ``--threads 2`` (one process, the machine's two cores) and twice with ``--scheduler``
on each cluster, and prints the wall time of the first run ("first s": a fresh process; on the
cluster the first real job of workers warmed on a tiny one) and of the second, the client's peak
RSS, each worker's peak RSS over both runs (psutil, sampled every 50 ms; the worker process, not
its nanny), whether the JSON is identical to the threads' (timing fields aside: there are none),
whether a worker log mentions spilling, pausing or a restart, and the 1-minute load average when
the row started. ``--kill``: one more run per case on a fresh cluster of the largest worker count,
in which worker w0's worker process (its nanny's child) is SIGKILLed ``--kill-after`` seconds into
the job (default 0.4 x that cluster size's second run); its nanny restarts it and distributed
reruns the lost tasks; the row says whether the kill landed while the job ran and the restart
happened, and the JSON must still be identical. The workers load their kernels in an unmeasured
warm-up job first. Cases are cached under benchmarks/_cache (outside git), written in slabs (a few
hundred MB at 1280³, never a whole volume).

    PYTHONPATH=. nice python benchmarks/bench_cluster.py [--size 512] [--workers 1,2] [--kill]
        [--topo-tiles 2 2 2] [--auc-scale 2] [--skip-objects] [--skip-surfaces] [--skip-auc]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import (CACHE, TreeMemory, machine_note, python_env, run_once, segscore_argv,  # noqa: E402
                                 table)

#: dask config of the benchmark's cluster (a YAML file in the folder ``DASK_CONFIG`` names): what
#: segscore's own local clusters use (segscore.engine.executor.LOCAL_CLUSTER_CONFIG): no task
#: profiler, slower monitors (distributed's MALLOC_TRIM_THRESHOLD_ kept)
CLUSTER_YAML = """\
distributed:
  worker:
    profile:
      enabled: false
    memory:
      monitor-interval: 1s
  admin:
    system-monitor:
      interval: 10s
      disk: false
    tick:
      interval: 1s
"""
CELL = (16, 32, 32)
#: a log line of a worker that spilled, paused or was restarted for memory
MEMORY_TROUBLE = re.compile(r"spill|paus|restart|exceeded|memory limit|Worker is at", re.I)


def _write_pair(name: str, size: int, chunks, planes) -> tuple[Path, Path]:
    """``CACHE/name/{truth,pred}.zarr``: ``size``³ uint8 zarr v3 written a slab of chunks at a time,
    each slab filled 8 planes at a time by ``planes(z0, z1) -> (truth, prediction)``; kept once done."""
    import zarr

    folder = CACHE / name
    t_path, p_path = folder / "truth.zarr", folder / "pred.zarr"
    if (folder / "done").exists():
        return t_path, p_path
    folder.mkdir(parents=True, exist_ok=True)
    shape = (size,) * 3
    ta = zarr.create_array(t_path, shape=shape, chunks=chunks, dtype="uint8", overwrite=True, zarr_format=3)
    pa = zarr.create_array(p_path, shape=shape, chunks=chunks, dtype="uint8", overwrite=True, zarr_format=3)
    for z0 in range(0, size, chunks[0]):
        z1 = min(size, z0 + chunks[0])
        t_slab, p_slab = np.empty((2, z1 - z0, size, size), np.uint8)
        for s0 in range(z0, z1, 8):
            s1 = min(z1, s0 + 8)
            t_slab[s0 - z0:s1 - z0], p_slab[s0 - z0:s1 - z0] = planes(s0, s1)
        ta[z0:z1] = t_slab
        pa[z0:z1] = p_slab
    (folder / "done").write_text("ok")
    return t_path, p_path


def make_pair(size: int, chunks=(64, 128, 128)) -> tuple[Path, Path]:
    """A truth and a prediction of ``size``³ uint8 labels as zarr v3: cells of 16 x 32 x 32 voxels
    with 1-voxel gaps, ids 1..250 repeating; the prediction shifted by (1, 2, 1), every 7th id merged
    into its neighbour and the far half of every 11th given another id. Written slab by slab."""
    ny, nx = -(-size // CELL[1]), -(-size // CELL[2])

    def cells(z0, z1, shift=(0, 0, 0)):
        z = np.arange(z0, z1)[:, None, None] - shift[0]
        y = np.arange(size)[None, :, None] - shift[1]
        x = np.arange(size)[None, None, :] - shift[2]
        ids = ((z // CELL[0]) * ny * nx + (y // CELL[1]) * nx + (x // CELL[2])) % 250 + 1
        gap = (z % CELL[0] == 0) | (y % CELL[1] == 0) | (x % CELL[2] == 0)
        return np.where(gap, 0, ids).astype(np.uint8), x % CELL[2]

    def planes(s0, s1):
        p, xin = cells(s0, s1, (1, 2, 1))
        p[(p % 7 == 0) & (p > 1)] -= 1
        far = (p % 11 == 0) & (xin >= CELL[2] // 2)
        p[far] = 251 + p[far] % 5
        return cells(s0, s1)[0], p

    return _write_pair(f"cluster_pair_{size}", size, chunks, planes)


def tiny_auc(folder: Path) -> list:
    """``auc`` words of a 200 x 300 map (the workers' warm-up job)."""
    import tifffile

    from tests.ink.helpers import segment, write_levels

    pred, ink, mask = segment((200, 300), seed=1)
    tifffile.imwrite(folder / "tiny.tif", pred)
    tifffile.imwrite(folder / "tiny_rev.tif", pred[::-1].copy())
    write_levels(folder / "tiny_ink.zarr", {"2": ink.astype(np.uint8)}, chunks=(64, 64))
    write_levels(folder / "tiny_sup.zarr", {"2": mask.astype(np.uint8)}, chunks=(64, 64))
    return ["auc", folder / "tiny.tif", "--labels", folder / "tiny_ink.zarr", "--mask", folder / "tiny_sup.zarr",
            "--control", folder / "tiny_rev.tif"]


class Cluster:
    """``dask scheduler`` and ``n`` ``dask worker`` processes on 127.0.0.1, logs in ``folder``."""

    def __init__(self, folder: Path, n: int = 2, memory_limit: str = "1GB"):
        self.folder = folder
        (folder / "dask").mkdir()
        (folder / "dask" / "segscore.yaml").write_text(CLUSTER_YAML)
        env = {**python_env(), "DASK_CONFIG": str(folder / "dask")}
        self.file = folder / "scheduler.json"
        dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        self.logs = [open(folder / "scheduler.log", "w")]
        self.scheduler = subprocess.Popen(dask + ["--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                                  "--scheduler-file", str(self.file)],
                                          env=env, stdout=self.logs[0], stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.address = json.loads(self.file.read_text())["address"]
        self.workers, self.memory = [], []
        for i in range(n):
            log = open(folder / f"worker{i}.log", "w")
            self.logs.append(log)
            proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                                     "--nthreads", "1", "--memory-limit", memory_limit, "--no-dashboard",
                                     "--host", "127.0.0.1", "--name", f"w{i}"],
                                    env=env, stdout=log, stderr=subprocess.STDOUT)
            self.workers.append(proc)
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            c.wait_for_workers(n, timeout=120)
        self.baseline = self.idle_memory()

    def idle_memory(self) -> dict:
        """Each worker process's RSS now (MB), read by the worker itself (the scheduler's metrics can
        lag a job by more than a heartbeat)."""
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            rss = c.run(lambda: __import__("psutil").Process().memory_info().rss)
            names = {a: w["name"] for a, w in c.scheduler_info()["workers"].items()}
            return {names[a]: v / 2 ** 20 for a, v in rss.items()}

    def watch(self) -> list:
        """Start sampling each worker's process tree (the nanny and its worker process)."""
        self.memory = [TreeMemory(p.pid) for p in self.workers]
        return self.memory

    def worker_peaks(self) -> list[float]:
        """Each worker process's peak RSS (MB) since :meth:`watch`: the largest of its tree but the nanny."""
        out = []
        for proc, mem in zip(self.workers, self.memory):
            mem.stop()
            out.append(max((mb for pid, mb in mem.peaks.items() if pid != proc.pid), default=0.0))
        return out

    def trouble(self) -> list[str]:
        for log in self.logs:
            log.flush()
        lines = []
        for i in range(len(self.workers)):
            for line in (self.folder / f"worker{i}.log").read_text(errors="replace").splitlines():
                if MEMORY_TROUBLE.search(line):
                    lines.append(f"w{i}: {line.strip()[:160]}")
        return lines

    def close(self):
        for p in self.workers + [self.scheduler]:
            p.terminate()
        for p in self.workers + [self.scheduler]:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in self.logs:
            log.close()


def make_sheets(size: int, chunks=(64, 128, 128)) -> tuple[Path, Path]:
    """A truth and a prediction of ``size``³ uint8 0/1 as zarr v3: wavy sheets 2 voxels thick, one
    every 16 planes along z (the height ``8 + 3 sin(2 pi x / 97) + 2 cos(2 pi y / 71)`` within each
    period); the prediction is the truth's sheets lifted by one plane where x >= size / 2, with
    6 x 6 holes in every third sheet (on a 48 x 40 grid) and 1-voxel pillars joining a sheet to the
    next every 64 voxels in x and y. Written slab by slab, computed 8 planes at a time."""
    y = np.arange(size)[None, :, None]
    x = np.arange(size)[None, None, :]
    height = np.rint(8 + 3 * np.sin(2 * np.pi * x / 97) + 2 * np.cos(2 * np.pi * y / 71)).astype(np.int64)
    lift = (x >= size // 2).astype(np.int64)
    hole = (x % 48 < 6) & (y % 40 < 6)
    pillar = (x % 64 == 10) & (y % 64 == 10)

    def planes(s0, s1):
        z = np.arange(s0, s1)[:, None, None]
        off = z - height - lift
        sheet = off % 16 < 2
        sheet &= ~(hole & ((off // 16) % 3 == 0))
        sheet |= pillar
        return (z - height) % 16 < 2, sheet

    return _write_pair(f"cluster_sheets_{size}", size, chunks, planes)


def _same(reference, out):
    """Whether the JSON equals the one-process run's: True/False, None without one (--skip-threads)."""
    return None if reference is None else _json(reference) == _json(out)


def _yes(same) -> str:
    return "n/a" if same is None else "yes" if same else "NO"


def _json(path) -> dict:
    """The JSON result, timing fields (none today) aside."""
    return {k: v for k, v in json.loads(Path(path).read_text()).items() if not re.search(r"seconds|_time$", k)}


def _workers_label(n: int) -> str:
    return f"{n} worker{'s' if n > 1 else ''} x 1 thread"


def _load() -> str:
    return "{:.1f}".format(os.getloadavg()[0])


def threads_rows(name, argv, out: Path, voxels: int, once: bool = False) -> dict:
    """``argv`` twice (``once``: once) on two threads in one process (``out``: the reference JSON)."""
    load = _load()
    t1 = run_once(argv + ["--threads", "2", "--json-out", str(out)])
    t = t1 if once else run_once(argv + ["--threads", "2", "--json-out", str(out)])
    return {"case": name, "run": "one process, 2 threads", "first s": f"{t1['seconds']:.1f}",
            "seconds": f"{t['seconds']:.1f}", "client MB": f"{max(t['peak_mb'], t1['peak_mb']):.0f}",
            "worker MB": "", "ns/voxel": f"{t['seconds'] / voxels * 1e9:.1f}", "identical JSON": "", "logs": "",
            "load": load}


def cluster_row(name, argv, cluster, n: int, reference: Path, out: Path, voxels: int,
                once: bool = False) -> tuple[dict, float]:
    """``argv`` twice (``once``: once) on the cluster of ``n`` workers: a row, and the last run's seconds."""
    load = _load()
    cluster.watch()
    c1 = run_once(argv + ["--scheduler", cluster.address, "--json-out", str(out)])
    same = _same(reference, out)
    c = c1
    if not once:
        c = run_once(argv + ["--scheduler", cluster.address, "--json-out", str(out)])
        same = None if same is None else same and _same(reference, out)
    peaks = cluster.worker_peaks()
    trouble = cluster.trouble()
    return ({"case": name, "run": f"cluster, {_workers_label(n)}", "first s": f"{c1['seconds']:.1f}",
             "seconds": f"{c['seconds']:.1f}", "client MB": f"{max(c['peak_mb'], c1['peak_mb']):.0f}",
             "worker MB": " / ".join(f"{p:.0f}" for p in peaks), "ns/voxel": f"{c['seconds'] / voxels * 1e9:.1f}",
             "identical JSON": _yes(same), "logs": "none" if not trouble else f"{len(trouble)} lines",
             "load": load, "trouble": trouble}, c["seconds"])


def _worker_process(nanny_pid: int):
    """The worker process a nanny spawned (multiprocessing's ``spawn_main``), or None."""
    import psutil

    try:
        for child in psutil.Process(nanny_pid).children():
            if "spawn_main" in " ".join(child.cmdline()):
                return child
    except psutil.Error:
        pass
    return None


def killed_row(name, argv, cluster, n: int, reference: Path, out: Path, voxels: int, after: float) -> dict:
    """``argv`` once on the cluster, worker w0's worker process SIGKILLed ``after`` s into the job
    (its nanny restarts it): a row saying whether the kill landed mid-job and the restart happened."""
    import signal
    import threading

    victim = _worker_process(cluster.workers[0].pid)
    load = _load()
    cluster.watch()
    result = {}

    def job():
        try:
            result.update(run_once(argv + ["--scheduler", cluster.address, "--json-out", str(out)]))
        except RuntimeError as e:
            result["error"] = str(e)

    th = threading.Thread(target=job)
    t0 = time.perf_counter()
    th.start()
    th.join(after)
    killed_at = None
    if th.is_alive() and victim is not None:
        victim.send_signal(signal.SIGKILL)
        killed_at = time.perf_counter() - t0
    th.join()
    restarted = None
    deadline = time.monotonic() + 60
    while killed_at is not None and time.monotonic() < deadline:
        new = _worker_process(cluster.workers[0].pid)
        if new is not None and new.pid != victim.pid:
            restarted = new.pid
            break
        time.sleep(0.5)
    peaks = cluster.worker_peaks()
    trouble = cluster.trouble()
    if "error" in result:
        same, seconds = f"NO (failed: {result['error'].splitlines()[-1][:100]})", float("nan")
    else:
        same, seconds = _yes(_same(reference, out)), result["seconds"]
    what = (f"w0 SIGKILLed at {killed_at:.1f} s, {'restarted by its nanny' if restarted else 'NOT restarted'}"
            if killed_at is not None else f"no kill (the job ended before {after:.1f} s)")
    return {"case": name, "run": f"cluster, {_workers_label(n)}: {what}", "first s": "",
            "seconds": f"{seconds:.1f}", "client MB": f"{result.get('peak_mb', 0):.0f}",
            "worker MB": " / ".join(f"{p:.0f}" for p in peaks), "ns/voxel": f"{seconds / voxels * 1e9:.1f}",
            "identical JSON": same, "logs": "none" if not trouble else f"{len(trouble)} lines", "load": load,
            "trouble": trouble, "killed": killed_at is not None and bool(restarted)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256, help="side of the 3D pairs (default 256; 1280: the issue's)")
    ap.add_argument("--auc-scale", type=int, default=2, help="auc map side x bench_auc's (default 2: 4x the area)")
    ap.add_argument("--workers", default="2", help="cluster sizes, comma-separated, a fresh cluster each (default 2)")
    ap.add_argument("--kill", action="store_true",
                    help="one more cluster run per case, on the largest --workers, with worker w0's process "
                         "SIGKILLed mid-job")
    ap.add_argument("--kill-after", type=float, default=None,
                    help="seconds into the killed run (default: 0.4 x that cluster's second run, at least 2)")
    ap.add_argument("--topo-tiles", type=int, nargs=3, default=(2, 2, 2), metavar="N",
                    help="surfaces' --topo-tiles (default 2 2 2; at --size 1280 the issue's 8 8 8)")
    ap.add_argument("--surfaces-tile-rows", type=int, default=None, metavar="N",
                    help="surfaces' --tile-rows on every run (files then stream window by window on threads "
                         "too: the same code as on the cluster; needed at 1280 where the whole-volume path "
                         "would need more than the machine's memory; default: 8 at --size >= 768, else none)")
    ap.add_argument("--once", action="store_true",
                    help="one run per row instead of two (the 1280^3 surfaces case takes tens of minutes a run)")
    ap.add_argument("--skip-threads", action="store_true",
                    help="no one-process run (the cluster rows' JSON is then compared with nothing: n/a)")
    ap.add_argument("--reference", default=None, metavar="JSON",
                    help="a one-process run's --json-out of the (one) case, from an earlier run: compared with "
                         "instead of running the threads row again (the 1280^3 surfaces one takes half an hour)")
    ap.add_argument("--skip-auc", action="store_true")
    ap.add_argument("--skip-objects", action="store_true")
    ap.add_argument("--skip-surfaces", action="store_true")
    args = ap.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",")]
    rows, trouble, idle, kill_logs = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench_cluster_") as tmp:
        tmp = Path(tmp)
        cases = []  # (name, command, voxels, warm-up command)
        if not args.skip_objects:
            t_path, p_path = make_pair(args.size)
            small_t, small_p = make_pair(32)
            cases.append((f"objects {args.size}^3 uint8 zarr", segscore_argv("objects", t_path, p_path),
                          args.size ** 3, segscore_argv("objects", small_t, small_p)))
        if not args.skip_surfaces:
            t_path, p_path = make_sheets(args.size)
            small_t, small_p = make_sheets(32)
            tiles = [str(t) for t in args.topo_tiles]
            rows_opt = args.surfaces_tile_rows or (8 if args.size >= 768 else None)
            streamed = ["--tile-rows", str(rows_opt)] if rows_opt else []
            cases.append((f"surfaces {args.size}^3 sheets, tiles {'x'.join(tiles)}"
                          + (f", windows of {rows_opt} slices" if rows_opt else ""),
                          segscore_argv("surfaces", p_path, t_path, "--topo-tiles", *tiles, *streamed), args.size ** 3,
                          segscore_argv("surfaces", small_p, small_t, "--topo-tiles", "2", "2", "2")))
        if not args.skip_auc:
            from benchmarks.bench_auc import SURFACE, auc_argv, make_case

            case = make_case(CACHE / ("auc" if args.auc_scale == 1 else f"auc_{args.auc_scale}x"), scale=args.auc_scale)
            cases.append((f"auc {SURFACE[0] * args.auc_scale:,} x {SURFACE[1] * args.auc_scale:,}", auc_argv(case),
                          SURFACE[0] * SURFACE[1] * args.auc_scale ** 2, segscore_argv(*tiny_auc(tmp))))
        for name, cmd, voxels, warm in cases:
            command = name.split()[0]
            reference = tmp / f"{command}_threads.json"
            if args.reference:
                reference = Path(args.reference)
            elif args.skip_threads:
                reference = None
            else:
                rows.append(threads_rows(name, cmd, reference, voxels, once=args.once))
                print(rows[-1], flush=True)
            runs = [(n, False) for n in counts] + ([(max(counts), True)] if args.kill else [])
            second = {}
            for n, kill in runs:  # a fresh cluster per run: each worker's peak is the run's own
                folder = tmp / f"{command}_{n}{'_kill' if kill else ''}"
                folder.mkdir()
                cluster = Cluster(folder, n)
                try:
                    # unmeasured: the workers load the kernels (numba's cache) on a small job of the command
                    run_once(warm + ["--scheduler", cluster.address])
                    out = tmp / f"{command}_cluster{n}.json"
                    if kill:
                        after = args.kill_after or max(2.0, 0.4 * second.get(n, 5.0))
                        row = killed_row(name, cmd, cluster, n, reference, out, voxels, after)
                        kill_logs += [f"{command}: {line}" for line in row.pop("trouble")]
                    else:
                        idle.append((f"{command} on {n}", cluster.baseline, cluster.idle_memory()))
                        row, second[n] = cluster_row(name, cmd, cluster, n, reference, out, voxels, once=args.once)
                        trouble += [f"{command} on {n}: {line}" for line in row.pop("trouble")]
                    rows.append(row)
                    print(row, flush=True)
                finally:
                    cluster.close()
    print(table(rows, [(k, k, None) for k in ("case", "run", "first s", "seconds", "ns/voxel", "client MB",
                                              "worker MB", "identical JSON", "logs", "load")]))
    print()
    for where, baseline, warmed in idle:
        print(f"{where}: workers' RSS when idle, before any job (MB): "
              f"{', '.join(f'{k} {v:.0f}' for k, v in sorted(baseline.items()))}; after the warm-up job (kernels "
              f"loaded): {', '.join(f'{k} {v:.0f}' for k, v in sorted(warmed.items()))}")
    said = "none" if not trouble else "\n  " + "\n  ".join(trouble)
    print("worker logs on memory (spilling, pausing, restarts), runs without a kill: " + said)
    if args.kill:
        said = "none" if not kill_logs else "\n  " + "\n  ".join(kill_logs)
        print("worker logs of the killed runs (the restart is expected there): " + said)
    print(machine_note())
    ok = all(r["identical JSON"] in ("", "yes", "n/a") for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
