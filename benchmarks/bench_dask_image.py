"""bench_cluster's objects pair scored by dask-image + scikit-image against segscore (issue 37).

At each ``--sizes`` side (default 128, 256, 384, 512), each contender a whole process of its own,
killed after ``--timeout`` seconds (default 900):

* ``segscore``: ``segscore objects TRUTH_FG.zarr PRED_FG.zarr --components 26 --threads 2``, where
  ``*_FG.zarr`` are the foreground (label > 0, uint8 0/1) of bench_cluster's zarr pair, so that
  ``--components`` (components of each class value) labels the foreground's 26-connected components;
* ``dask-image``: ``dask_image.ndmeasure.label`` of each volume's foreground (``label > 0`` of the
  original zarr, read with ``dask.array.from_zarr`` in its chunks, 26-connected), computed with
  dask's threaded scheduler on 2 threads, then scikit-image's ``variation_of_information(truth,
  pred, ignore_labels=[0])`` of the computed labels.

Both define VOI the same way: bits; the truth's background left out (segscore's default without
``--count-background``; scikit-image's ``ignore_labels=[0]`` drops the voxels where the truth is 0),
the prediction's background one more segment. scikit-image returns ``[H(pred | truth),
H(truth | pred)]`` (image1 given image0, then the reverse): segscore's ``voi_split`` and
``voi_merge``. The script checks they agree to ``1e-9`` and the component counts are equal, and prints wall seconds and peak RSS (the process's own
``ru_maxrss``; of a process killed at the timeout, its tree's highest sampled RSS). A size that one
contender does not finish is reported, and larger sizes are not tried for it.

    PYTHONPATH=. nice python benchmarks/bench_dask_image.py [--sizes 128,256,384,512] [--timeout 900]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import _WRAPPER, TreeMemory, machine_note, python_env, segscore_argv, table  # noqa: E402
from benchmarks.bench_cluster import make_pair  # noqa: E402


def foreground_pair(size: int) -> tuple[Path, Path, Path, Path]:
    """bench_cluster's pair at ``size`` and its foreground (uint8 0/1) as zarr beside it, written
    slab by slab: (truth, pred, truth_fg, pred_fg)."""
    import zarr

    t_path, p_path = make_pair(size)
    folder = t_path.parent
    out = folder / "truth_fg.zarr", folder / "pred_fg.zarr"
    if (folder / "fg_done").exists():
        return t_path, p_path, *out
    for src, dst in zip((t_path, p_path), out):
        a = zarr.open_array(src, mode="r")
        b = zarr.create_array(dst, shape=a.shape, chunks=a.chunks, dtype="uint8", overwrite=True, zarr_format=3)
        for z0 in range(0, a.shape[0], a.chunks[0]):
            b[z0:z0 + a.chunks[0]] = (a[z0:z0 + a.chunks[0]] > 0).astype(np.uint8)
    (folder / "fg_done").write_text("ok")
    return t_path, p_path, *out


def dask_image_child(t_path: str, p_path: str, out: str, threads: int) -> None:
    """Label each volume's foreground with dask-image, then scikit-image's VOI; JSON to ``out``."""
    import dask
    import dask.array as da
    from dask_image.ndmeasure import label
    from skimage.metrics import variation_of_information

    t0 = time.perf_counter()
    parts = []
    for path in (t_path, p_path):
        fg = da.from_zarr(path) > 0
        parts.extend(label(fg, structure=np.ones((3, 3, 3), bool)))
    lt, nt, lp, np_ = dask.compute(*parts, scheduler="threads", num_workers=threads)
    t1 = time.perf_counter()
    split, merge = variation_of_information(lt, lp, ignore_labels=[0])  # H(pred | truth), H(truth | pred)
    t2 = time.perf_counter()
    Path(out).write_text(json.dumps({"voi_split": float(split), "voi_merge": float(merge), "n_truth": int(nt),
                                     "n_pred": int(np_), "label_s": t1 - t0, "voi_s": t2 - t1}))


def run_limited(argv, timeout: float) -> dict:
    """``argv`` as a whole process under a bare parent (the harness's run_once), killed with its
    process group after ``timeout`` s: wall seconds, peak MB, and whether it finished."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-S", "-c", _WRAPPER, rss.name, *map(str, argv)],
                                env=python_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        mem = TreeMemory(proc.pid, include_root=False, refresh=2.0, interval=0.5)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            mem.stop()
            return {"seconds": time.perf_counter() - t0, "peak_mb": max(mem.peaks.values(), default=0.0),
                    "finished": False, "error": f"killed after {timeout:.0f} s"}
        wall = time.perf_counter() - t0
        mem.stop()
        peak_kb = int(rss.read() or 0)
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return {"seconds": wall, "peak_mb": max(peak_kb / 1024.0, max(mem.peaks.values(), default=0.0)),
                "finished": False, "error": f"exit {proc.returncode}: {tail[0][:120]}"}
    return {"seconds": wall, "peak_mb": peak_kb / 1024.0, "finished": True, "error": ""}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="128,256,384,512", help="sides of the pair (default 128,256,384,512)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per contender and size (default 900)")
    ap.add_argument("--threads", type=int, default=2, help="threads of each contender (default 2)")
    ap.add_argument("--child", nargs=3, metavar=("TRUTH", "PRED", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        dask_image_child(*args.child, args.threads)
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    rows, bad, alive = [], [], {"segscore": True, "dask-image": True}
    with tempfile.TemporaryDirectory(prefix="bench_dask_image_") as tmp:
        tmp = Path(tmp)
        for size in sizes:
            t_path, p_path, t_fg, p_fg = foreground_pair(size)
            cmds = {"segscore": segscore_argv("objects", t_fg, p_fg, "--components", "26", "--threads",
                                              args.threads, "--json-out", tmp / f"seg{size}.json"),
                    "dask-image": [sys.executable, str(Path(__file__).resolve()), "--threads", str(args.threads),
                                   "--child", str(t_path), str(p_path), str(tmp / f"dimg{size}.json")]}
            got = {}
            for name, cmd in cmds.items():
                if not alive[name]:
                    rows.append({"size": f"{size}^3", "contender": name, "seconds": "not run (a smaller size "
                                 "did not finish)"})
                    continue
                load = os.getloadavg()[0]
                r = run_limited(cmd, args.timeout)
                alive[name] = r["finished"]
                out = tmp / (f"seg{size}.json" if name == "segscore" else f"dimg{size}.json")
                got[name] = json.loads(out.read_text()) if r["finished"] else None
                d = got[name] or {}
                rows.append({"size": f"{size}^3", "contender": name,
                             "seconds": f"{r['seconds']:.1f}" if r["finished"] else r["error"],
                             "ns/voxel": f"{r['seconds'] / size ** 3 * 1e9:.0f}" if r["finished"] else "",
                             "peak MB": f"{r['peak_mb']:.0f}", "voi_split": d.get("voi_split"),
                             "voi_merge": d.get("voi_merge"),
                             "components": f"{d['n_truth']} / {d['n_pred']}" if d else "",
                             "load": f"{load:.1f}"})
                print(rows[-1], flush=True)
            if all(got.get(k) for k in ("segscore", "dask-image")):
                a, b = got["segscore"], got["dask-image"]
                diff = max(abs(a["voi_split"] - b["voi_split"]), abs(a["voi_merge"] - b["voi_merge"]))
                same = diff <= 1e-9 and (a["n_truth"], a["n_pred"]) == (b["n_truth"], b["n_pred"])
                rows[-1]["agree"] = f"{'yes' if same else 'NO'} ({diff:.1e})"
                if not same:
                    bad.append(size)
    print(table(rows, [(k, k, "{:.12f}" if k.startswith("voi") else None)
                       for k in ("size", "contender", "seconds", "ns/voxel", "peak MB", "voi_split", "voi_merge",
                                 "components", "agree", "load")]))
    done = [s for s in sizes if any(r["size"] == f"{s}^3" and r["contender"] == "dask-image"
                                    and r.get("ns/voxel") for r in rows)]
    print(f"largest size dask-image finished: {max(done) if done else 'none'}^3")
    print(machine_note())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
