"""`segscore batch` beside the same jobs as separate `segscore` processes (issue 13's benchmark).

Two batches, each run five ways, side by side in one run:

- auc: `auc MAP --control REV --labels L --mask M --bootstrap 300 --seed K` on three maps, reused
  with different seeds (full size: 50 jobs on 5,980 x 8,240 maps; default: 10 jobs on maps of
  half the side, 2,990 x 4,120);
- mixed: `curve` on vessel masks (full: 20 on 2048^2; default: 6 on 1024^2), `objects` on label
  pairs (full: 20 on 2048^2 with ~2,100 objects; default: 6 on 1024^2 with ~520), `fibers` on the shared
  256^3 cubes (full: 10; default: 2; skipped without the shared data).

Ways: the jobs as separate `python -m segscore JOB --json` processes one after another; `segscore
batch` with threads (the default: one per CPU); `--threads 1`; `--processes 1`; `--processes 2`
(one thread each). Each row: wall seconds, the ratio to the separate processes, jobs per second;
the start-up (the same way running one `check` job, which runs no kernel: imports, the cluster,
the ink warm-up) and the jobs per second after it; and peak RSS per worker (the largest resident
set of any one scoring process: each separate process; the batch process with threads; each dask
worker process), polled every 50 ms.

    PYTHONPATH=. python benchmarks/bench_batch.py            # reduced size, a few minutes here
    PYTHONPATH=. python benchmarks/bench_batch.py --full     # the issue's sizes
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import CACHE, TreeMemory, machine_note, python_env, shared_data, table  # noqa: E402

SIZES = {  # (auc jobs, auc map shape, curves, curve side, objects, objects side, objects n, fibers)
    "default": (10, (2990, 4120), 6, 1024, 6, 1024, 520, 2),
    "full": (50, (5980, 8240), 20, 2048, 20, 2048, 2100, 10),
}


def _levels(path, plane, chunks=(1024, 1024)):
    import zarr

    group = zarr.open_group(str(path), mode="w", zarr_format=3)
    level = plane
    for key in ("2", "3"):
        arr = group.create_array(key, shape=level.shape, dtype=np.uint8, chunks=chunks)
        arr[...] = level
        level = level[::2, ::2]


#: a job that runs no kernel: what a batch costs before and after its jobs
STARTUP_JOB = "check --window-px 64 --scan-um 7.91"


def make_auc(folder: Path, shape) -> dict:
    """Three maps, a control and the labels of one synthetic segment (bench_auc.py's recipe)."""
    import tifffile

    folder.mkdir(parents=True, exist_ok=True)
    names = ["map0.tif", "map1.tif", "map2.tif", "rev.tif", "inklabels.zarr", "supervision.zarr"]
    if all((folder / n).exists() for n in names):
        return {n: folder / n for n in names}
    rng = np.random.default_rng(0)
    H, W = shape
    lh, lw = int(H * 5820 / 5980), int(W * 8020 / 8240)
    coarse = rng.random((lh // 16 + 1, lw // 16 + 1)) < 0.08
    ink = np.repeat(np.repeat(coarse, 16, 0), 16, 1)[:lh, :lw]
    sup = np.zeros((lh, lw), np.uint8)
    sup[lh // 20: lh - lh // 20, lw // 20: lw - lw // 20] = 255
    _levels(folder / "inklabels.zarr", ink.astype(np.uint8) * 255)
    _levels(folder / "supervision.zarr", sup)
    rows = np.minimum(((np.arange(H) + 0.5) * lh / H).astype(np.int64), lh - 1)
    cols = np.minimum(((np.arange(W) + 0.5) * lw / W).astype(np.int64), lw - 1)
    for name, gain in (("map0.tif", 60), ("map1.tif", 45), ("map2.tif", 30), ("rev.tif", 0)):
        out = np.empty((H, W), np.uint8)
        for y in range(0, H, 1024):
            band = ink[np.ix_(rows[y:y + 1024], cols)].astype(np.float32) * gain
            band += rng.normal(100, 30, band.shape).astype(np.float32)
            out[y:y + 1024] = np.clip(band, 1, 255).astype(np.uint8)
        out[:, : W // 50] = 0
        tifffile.imwrite(folder / name, out)
    return {n: folder / n for n in names}


def auc_jobs(n, shape) -> tuple[Path, list[str]]:
    folder = CACHE / "batch" / f"auc_{shape[0]}x{shape[1]}"
    make_auc(folder, shape)
    return folder, [f"auc map{k % 3}.tif --control rev.tif --labels inklabels.zarr --mask supervision.zarr "
                    f"--bootstrap 300 --seed {k}" for k in range(n)]


def mixed_jobs(n_curve, side, n_obj, obj_side, obj_n, n_fib) -> tuple[Path, list[str]]:
    from segscore.curvilinear.masks import save_mask
    from segscore.curvilinear.operators import perturb
    from tests.curvilinear.helpers import vessel_tree
    from tests.objects.helpers import synthetic_pair

    folder = CACHE / "batch" / f"mixed_{side}_{obj_side}"
    folder.mkdir(parents=True, exist_ok=True)
    jobs = []
    per_tree = max(1, n_curve // 2)
    for t in range(2):
        gt = folder / f"tree{t}_gt.png"
        if not gt.exists():
            m = vessel_tree((side, side), seed=t, depth=7 if side >= 1024 else 5, r0=max(side / 150, 3.0), reach=0.3)
            save_mask(m, gt)
            for k in range(per_tree):
                save_mask(perturb(m, ("break", "bridge", "truncate")[k % 3], 0.05 + 0.05 * (k // 3), seed=k,
                                  prune_px=17 if side >= 1024 else 6)[0], folder / f"tree{t}_p{k}.png")
        jobs += [f"curve tree{t}_p{k}.png --gt tree{t}_gt.png --prune-px {17 if side >= 1024 else 6}"
                 for k in range(per_tree)]
    jobs = jobs[:n_curve]
    for t in range(2):
        if not (folder / f"truth{t}.npy").exists():
            truth, pred = synthetic_pair(shape=(obj_side, obj_side), n=obj_n, r=(6, 14), p_miss=0.08, p_split=0.08,
                                         p_merge=0.08, n_fp=max(obj_n // 14, 5), jitter=3, seed=t)[:2]
            np.save(folder / f"truth{t}.npy", truth)
            np.save(folder / f"pred{t}.npy", pred)
    jobs += [f"objects truth{k % 2}.npy pred{k % 2}.npy --iou {(0.5, 0.6, 0.7, 0.8, 0.9)[k // 2 % 5]}"
             for k in range(n_obj)]
    root = shared_data("scrollgt", required=False)
    cubes = [root / "fibers_s1_00497_01497_03997_256", root / "fibers_s5_03997_01497_03997_256"]
    if n_fib and all(c.is_dir() for c in cubes):
        from segscore.fibers.floors import connected_components
        from segscore.fibers.target import load_target

        for c in cubes:
            lab = folder / f"{c.name}_cc.npy"
            if not lab.exists():
                np.save(lab, connected_components(load_target(c).mask))
        floors = [None, "connected_components", "single_instance", "voxel_instances", "oracle"]
        for k in range(n_fib):
            c = cubes[k % 2]
            f = floors[(k // 2) % len(floors)]
            jobs.append(f"fibers {c.name}_cc.npy {c}" if f is None else f"fibers --floor {f} {c}")
    else:
        print("(fibers jobs skipped: the shared 256^3 cubes are not there)", file=sys.stderr)
    return folder, jobs


def run_measured(argv, cwd) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=python_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    meter = TreeMemory(proc.pid)
    _, err = proc.communicate()
    peaks = meter.stop().peaks
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{err.decode()[-2000:]}")
    return {"seconds": wall, "peaks": peaks, "names": meter.names, "pid": proc.pid}


def separate(folder, jobs) -> dict:
    total, worst = 0.0, 0.0
    for job in jobs:
        r = run_measured([sys.executable, "-m", "segscore", *shlex.split(job), "--json"], folder)
        total += r["seconds"]
        worst = max([worst, *r["peaks"].values()])
    return {"seconds": total, "rss": worst}


def batch(folder, jobs, out, *extra) -> dict:
    import shutil

    manifest = folder / "bench_jobs.jsonl"
    manifest.write_text("".join(json.dumps({"id": f"j{i:03d}", "job": j}) + "\n" for i, j in enumerate(jobs)))
    shutil.rmtree(out, ignore_errors=True)
    r = run_measured([sys.executable, "-m", "segscore", "batch", str(manifest), "--out", str(out), "--quiet",
                      *map(str, extra)], folder)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    bad = [x for x in rows if x["status"] != "scored"]
    if bad or len(rows) != len(jobs):
        raise RuntimeError(f"batch {extra}: {len(rows)} rows, not scored: {bad[:2]}")
    # the workers: with --processes, every process under the batch but its main one (the scheduler
    # and nannies live there) and small helpers (the resource tracker); else the batch process
    main_pid = r["pid"]
    workers = [v for p, v in r["peaks"].items() if p != main_pid and v > 80] if "--processes" in extra else []
    return {"seconds": r["seconds"], "rss": max(workers) if workers else r["peaks"][main_pid],
            "main_rss": r["peaks"][main_pid], "results": {x["id"]: x["result"] for x in rows}}


def bench(name, folder, jobs, out_root) -> list[dict]:
    ways = [("batch, threads (default)", "threads", ()), ("batch --threads 1", "threads1", ("--threads", 1)),
            ("batch --processes 1", "processes1", ("--processes", 1)),
            ("batch --processes 2", "processes2", ("--processes", 2))]
    print(f"{name}: {len(jobs)} jobs in {folder}", file=sys.stderr)
    rows = []
    warm()
    sep = separate(folder, jobs)
    rows.append({"batch": name, "way": "separate `segscore` processes", "s": sep["seconds"], "ratio": 1.0,
                 "jps": len(jobs) / sep["seconds"], "rss": sep["rss"]})
    results = None
    for label, key, extra in ways:
        warm()  # a kernel file edited meanwhile would otherwise make this row pay the recompilation
        # start-up: the same way with one job that runs no kernel (cluster start, imports, warm-up)
        start = batch(folder, [STARTUP_JOB], out_root / f"{name}_{key}_startup", *extra)["seconds"]
        r = batch(folder, jobs, out_root / f"{name}_{key}", *extra)
        if results is None:
            results = r["results"]
        elif r["results"] != results:
            raise RuntimeError(f"{label}: results differ from the threaded batch's")
        rows.append({"batch": name, "way": label, "s": r["seconds"], "ratio": r["seconds"] / sep["seconds"],
                     "jps": len(jobs) / r["seconds"], "start": start,
                     "wjps": len(jobs) / max(r["seconds"] - start, 1e-3), "rss": r["rss"]})
    p1, p2 = rows[3], rows[4]
    p2["note"] = (f"{p2['jps'] / p1['jps']:.2f}x the throughput of --processes 1 "
                  f"({p2['wjps'] / p1['wjps']:.2f}x after start-up; target >= 1.6x)")
    rows[1]["note"] = f"target <= 0.6x: {'met' if rows[1]['ratio'] <= 0.6 else 'NOT met'}"
    return rows


def warm() -> None:
    """Build (or check) numba's on-disk cache, so no measured row compiles."""
    subprocess.run([sys.executable, "-c", "import segscore; segscore.warm()"], check=True, env=python_env())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="the issue's sizes (50 full-size auc jobs; 20/20/10 mixed)")
    ap.add_argument("--only", choices=("auc", "mixed"), help="run one of the two batches")
    args = ap.parse_args(argv)
    n_auc, shape, n_curve, side, n_obj, obj_side, obj_n, n_fib = SIZES["full" if args.full else "default"]
    out_root = CACHE / "batch" / "runs"
    rows = []
    if args.only in (None, "auc"):
        rows += bench("auc", *auc_jobs(n_auc, shape), out_root)
    if args.only in (None, "mixed"):
        rows += bench("mixed", *mixed_jobs(n_curve, side, n_obj, obj_side, obj_n, n_fib), out_root)
    print(f"`segscore batch` vs separate processes ({'full' if args.full else 'reduced'} size) · {machine_note()}\n")
    print(table(rows, [("batch", "batch", None), ("way", "how", None), ("s", "wall s", "{:.1f}"),
                       ("ratio", "x separate", "{:.2f}"), ("jps", "jobs/s", "{:.2f}"),
                       ("start", "start-up s", "{:.1f}"), ("wjps", "jobs/s after start-up", "{:.2f}"),
                       ("rss", "peak RSS per worker MB", "{:.0f}"), ("note", "", None)]))


if __name__ == "__main__":
    main()
