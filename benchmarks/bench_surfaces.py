"""``segscore surfaces`` beside the peers' pipeline (Betti-Matching-3D + DeepMind's surface-distance
+ cc3d + scikit-image, composed as topometrics does: benchmarks/surfaces_peer.py), whole process,
on generated sheet-like volumes; wall time and peak RSS of each process.

    python benchmarks/bench_surfaces.py --sizes 256 512 \\
        --peer-python /work/scratch/topo/venv/bin/python --peer-path /work/scratch/topo/build

segscore runs twice: first with an empty numba cache (compile time included: "cold"), then
with the cache it left ("warm"). The peer runs once (its code is compiled ahead). Both get the
same files (npy, memory-mapped by neither) and must agree on every field to 1e-9; the table
says so. Run with ``nice`` on a shared machine.

Measured 2026-12-03 on the shared 2-core machine (load 2-5 from other jobs), commit "betti
kernels: no variable divisions": 256^3, segscore warm 15.4 s / 487 MB peak RSS, cold (empty
numba cache) 88.8 s / 591 MB; the peers' pipeline 51.9 s / 2622 MB; 3.36x warm, 0.58x cold;
every field equal to 1e-9. 512^3 (segscore only; the peers' pipeline was not run there):
warm 200.9 s / 2838 MB with two octants in flight at once; after tiles above 8M voxels were
matched one at a time: 139.9 s / 1690 MB (same leaderboard). First-call compile, an 8^3 pair
with an empty numba cache: 22.9 s (0.8 s with the cache), lightly loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIELDS = ("leaderboard", "toposcore", "topoF1_0", "topoF1_1", "topoF1_2", "surface_dice", "voi_score",
          "voi_total", "voi_split", "voi_merge")


def make_pair(n: int, seed: int = 0):
    """Sheet-like labels (0/1, with an unlabelled band as 2) and a prediction with the errors
    a model makes: holes, specks, a merge, a shifted sheet."""
    sys.path.insert(0, str(HERE))
    from surfaces_peer import sheet_volume

    rng = np.random.default_rng(seed)
    shape = (n, n, n)
    sheets = max(3, n // 24)
    g = sheet_volume(np.random.default_rng(seed + 1), shape, sheets, 3.0, holes=0, wobble=n / 40)
    p = sheet_volume(np.random.default_rng(seed + 1), shape, sheets, 3.0, holes=n // 16, wobble=n / 40)
    p |= rng.random(shape) < 0.0001
    p[:, n // 3: n // 3 + 2, n // 4: n // 2] = True  # a wall merging sheets
    labels = g.astype(np.uint8)
    labels[:, :, -n // 16:] = np.where(labels[:, :, -n // 16:] == 1, 2, 0)  # an unlabelled band
    return p.astype(np.uint8), labels


def measure(cmd, env=None):
    """Run ``cmd`` in a fresh child of a fresh process: (seconds, peak RSS in MB, stdout)."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter()\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "dt = time.perf_counter() - t\n"
            "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
            "print(json.dumps({'s': dt, 'rss': rss, 'rc': r.returncode, 'out': r.stdout, 'err': r.stderr[-2000:]}))\n")
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, env=env)
    res = json.loads(out.stdout)
    if res["rc"] != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {res['err']}")
    return res["s"], res["rss"], res["out"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256])
    ap.add_argument("--peer-python", help="python of a venv with betti_matching, surface_distance, cc3d, skimage")
    ap.add_argument("--peer-path", default="", help="PYTHONPATH for the peer (Betti-Matching-3D's build dir)")
    ap.add_argument("--threads", type=int, default=None, help="segscore --threads (default: its own)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_surfaces_"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        p, g = make_pair(n)
        pp, gp = work / f"pred_{n}.npy", work / f"gt_{n}.npy"
        np.save(pp, p)
        np.save(gp, g)
        del p, g
        env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(work / f"numba_{n}"))
        ours = [sys.executable, "-m", "segscore", "surfaces", str(pp), str(gp), "--json"]
        if args.threads:
            ours += ["--threads", str(args.threads)]
        cold = measure(ours, env)
        warm = measure(ours, env)
        mine = json.loads(warm[2])
        row = {"size": n, "cold_s": cold[0], "warm_s": warm[0], "rss_mb": warm[1], "cold_rss_mb": cold[1]}
        if args.peer_python:
            penv = dict(os.environ, PYTHONPATH=args.peer_path)
            peer = measure([args.peer_python, str(HERE / "surfaces_peer.py"), "score", str(pp), str(gp)], penv)
            theirs = json.loads(peer[2])
            row.update(peer_s=peer[0], peer_rss_mb=peer[1], ratio_warm=peer[0] / warm[0],
                       ratio_cold=peer[0] / cold[0])
            row["agree_1e-9"] = all((theirs[k] is None and mine[k] is None) or
                                    (theirs[k] is not None and mine[k] is not None and abs(theirs[k] - mine[k]) <= 1e-9)
                                    for k in FIELDS) and theirs["topology"] == mine["topology"]
        row["leaderboard"] = mine["leaderboard"]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(f"{'size':>5} {'segscore cold s':>15} {'warm s':>8} {'RSS MB':>7} {'peer s':>8} {'peer RSS MB':>11} "
          f"{'peer/warm':>9} {'peer/cold':>9} {'agree':>5}")
    for r in rows:
        print(f"{r['size']:>5} {r['cold_s']:>15.1f} {r['warm_s']:>8.1f} {r['rss_mb']:>7.0f} "
              f"{r.get('peer_s', float('nan')):>8.1f} {r.get('peer_rss_mb', float('nan')):>11.0f} "
              f"{r.get('ratio_warm', float('nan')):>9.2f} {r.get('ratio_cold', float('nan')):>9.2f} "
              f"{str(r.get('agree_1e-9', '-')):>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
