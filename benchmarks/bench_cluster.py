"""One job on a real dask.distributed cluster against the same streamed code on threads (issue 37).

The script starts ``dask scheduler`` and two ``dask worker --nthreads 1 --memory-limit 1GB``
processes on 127.0.0.1 itself, then runs, each as a whole process:

* ``segscore objects TRUTH.zarr PRED.zarr`` on a 3D uint8 zarr pair of ``--size``³ voxels
  (default 256; the issue's case is ``--size 1280``, 2 GB per volume), and
* ``segscore auc`` of a map of ``--auc-scale``² times bench_auc's 5,980 x 8,240 area (default 2:
  the 4x map, 11,960 x 16,480, made as bench_auc.py makes it),

twice with ``--threads 2`` (one process, the machine's two cores) and twice with ``--scheduler``
(the two workers), and prints the wall time of the first run ("first s": a fresh process; on the
cluster the first real job of workers warmed on a tiny one) and of the second, the client's peak
RSS, each worker's peak RSS over both runs (psutil,
sampled every 50 ms; the worker process, not its nanny), whether the JSON is identical (timing
fields aside: there are none), and whether a worker log mentions spilling, pausing or a restart.
The workers load their kernels in an unmeasured warm-up job first. Cases are cached under
benchmarks/_cache (outside git).

    PYTHONPATH=. nice python benchmarks/bench_cluster.py [--size 512] [--auc-scale 2] [--skip-auc]
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
#: profiler, slower monitors, and the nanny's MALLOC_TRIM_THRESHOLD_ left unset
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
  nanny:
    pre-spawn-environ:
      MALLOC_TRIM_THRESHOLD_: null
"""
CELL = (16, 32, 32)
#: a log line of a worker that spilled, paused or was restarted for memory
MEMORY_TROUBLE = re.compile(r"spill|paus|restart|exceeded|memory limit|Worker is at", re.I)


def make_pair(size: int, chunks=(64, 128, 128)) -> tuple[Path, Path]:
    """A truth and a prediction of ``size``³ uint8 labels as zarr v3: cells of 16 x 32 x 32 voxels
    with 1-voxel gaps, ids 1..250 repeating; the prediction shifted by (1, 2, 1), every 7th id merged
    into its neighbour and the far half of every 11th given another id. Written slab by slab."""
    import zarr

    folder = CACHE / f"cluster_pair_{size}"
    t_path, p_path = folder / "truth.zarr", folder / "pred.zarr"
    if (folder / "done").exists():
        return t_path, p_path
    folder.mkdir(parents=True, exist_ok=True)
    shape = (size,) * 3
    ta = zarr.create_array(t_path, shape=shape, chunks=chunks, dtype="uint8", overwrite=True, zarr_format=3)
    pa = zarr.create_array(p_path, shape=shape, chunks=chunks, dtype="uint8", overwrite=True, zarr_format=3)
    ny, nx = -(-size // CELL[1]), -(-size // CELL[2])

    def cells(z0, z1, shift=(0, 0, 0)):
        z = np.arange(z0, z1)[:, None, None] - shift[0]
        y = np.arange(size)[None, :, None] - shift[1]
        x = np.arange(size)[None, None, :] - shift[2]
        ids = ((z // CELL[0]) * ny * nx + (y // CELL[1]) * nx + (x // CELL[2])) % 250 + 1
        gap = (z % CELL[0] == 0) | (y % CELL[1] == 0) | (x % CELL[2] == 0)
        return np.where(gap, 0, ids).astype(np.uint8), x % CELL[2]

    for z0 in range(0, size, chunks[0]):  # a slab of chunks at a time, computed in 8-plane pieces
        z1 = min(size, z0 + chunks[0])
        t_slab, p_slab = np.empty((2, z1 - z0, size, size), np.uint8)
        for s0 in range(z0, z1, 8):
            s1 = min(z1, s0 + 8)
            t_slab[s0 - z0:s1 - z0] = cells(s0, s1)[0]
            p, xin = cells(s0, s1, (1, 2, 1))
            p[(p % 7 == 0) & (p > 1)] -= 1
            far = (p % 11 == 0) & (xin >= CELL[2] // 2)
            p[far] = 251 + p[far] % 5
            p_slab[s0 - z0:s1 - z0] = p
        ta[z0:z1] = t_slab
        pa[z0:z1] = p_slab
    (folder / "done").write_text("ok")
    return t_path, p_path


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
        """Each worker's RSS now (MB), as its scheduler knows it."""
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            c.run(lambda: None)  # a heartbeat's worth of fresh metrics
            time.sleep(1.5)
            return {w["name"]: w["metrics"]["memory"] / 2 ** 20 for w in c.scheduler_info()["workers"].values()}

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


def _json(path) -> dict:
    return json.loads(Path(path).read_text())


def compare(name, argv, cluster, out_dir: Path, voxels: int) -> list[dict]:
    """``argv`` on two threads in one process, then on the cluster: a row each."""
    one, many = out_dir / f"{name}_threads.json", out_dir / f"{name}_cluster.json"
    t1 = run_once(argv + ["--threads", "2", "--json-out", str(one)])
    t = run_once(argv + ["--threads", "2", "--json-out", str(one)])
    cluster.watch()
    c1 = run_once(argv + ["--scheduler", cluster.address, "--json-out", str(many)])
    same = _json(one) == _json(many)
    c = run_once(argv + ["--scheduler", cluster.address, "--json-out", str(many)])
    same = same and _json(one) == _json(many)
    peaks = cluster.worker_peaks()
    return [{"case": name, "run": "one process, 2 threads", "first s": f"{t1['seconds']:.1f}",
             "seconds": f"{t['seconds']:.1f}", "client MB": f"{t['peak_mb']:.0f}", "worker MB": "",
             "ns/voxel": f"{t['seconds'] / voxels * 1e9:.1f}", "identical JSON": ""},
            {"case": name, "run": "cluster, 2 workers x 1 thread", "first s": f"{c1['seconds']:.1f}",
             "seconds": f"{c['seconds']:.1f}", "client MB": f"{max(c['peak_mb'], c1['peak_mb']):.0f}",
             "worker MB": " / ".join(f"{p:.0f}" for p in peaks), "ns/voxel": f"{c['seconds'] / voxels * 1e9:.1f}",
             "identical JSON": "yes" if same else "NO"}]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256, help="side of the objects pair (default 256; 1280: the issue's)")
    ap.add_argument("--auc-scale", type=int, default=2, help="auc map side x bench_auc's (default 2: 4x the area)")
    ap.add_argument("--skip-auc", action="store_true")
    ap.add_argument("--skip-objects", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cluster_") as tmp:
        tmp = Path(tmp)
        t_path, p_path = make_pair(args.size)
        small_t, small_p = make_pair(32)
        cases = []
        if not args.skip_objects:
            cases.append((f"objects {args.size}^3 uint8 zarr", segscore_argv("objects", t_path, p_path),
                          args.size ** 3))
        if not args.skip_auc:
            from benchmarks.bench_auc import SURFACE, auc_argv, make_case

            case = make_case(CACHE / ("auc" if args.auc_scale == 1 else f"auc_{args.auc_scale}x"), scale=args.auc_scale)
            cases.append((f"auc {SURFACE[0] * args.auc_scale:,} x {SURFACE[1] * args.auc_scale:,}", auc_argv(case),
                          SURFACE[0] * SURFACE[1] * args.auc_scale ** 2))
        warm = {"objects": segscore_argv("objects", small_t, small_p), "auc": segscore_argv(*tiny_auc(tmp))}
        trouble, idle = [], []
        for name, cmd, voxels in cases:  # a fresh cluster per case: each worker's peak is the case's own
            folder = tmp / name.split()[0]
            folder.mkdir()
            cluster = Cluster(folder)
            try:
                # unmeasured: the workers load the kernels (numba's cache) on a small job of the command
                run_once(warm[name.split()[0]] + ["--scheduler", cluster.address])
                idle.append((name.split()[0], cluster.baseline, cluster.idle_memory()))
                rows += compare(name, cmd, cluster, tmp, voxels)
                trouble += cluster.trouble()
            finally:
                cluster.close()
    print(table(rows, [(k, k, None) for k in ("case", "run", "first s", "seconds", "ns/voxel", "client MB",
                                              "worker MB", "identical JSON")]))
    print()
    for command, baseline, warmed in idle:
        print(f"{command}: workers' RSS when idle, before any job (MB): "
              f"{', '.join(f'{k} {v:.0f}' for k, v in sorted(baseline.items()))}; after the warm-up job (kernels "
              f"loaded): {', '.join(f'{k} {v:.0f}' for k, v in sorted(warmed.items()))}")
    said = "none" if not trouble else "\n  " + "\n  ".join(trouble)
    print("worker logs on memory (spilling, pausing, restarts): " + said)
    print(machine_note())
    return 0 if all(r["identical JSON"] in ("", "yes") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
