"""``segscore surfaces`` beside the peers' pipeline (Betti-Matching-3D + DeepMind's surface-distance
+ cc3d + scikit-image, composed as topometrics does: benchmarks/surfaces_peer.py), whole process,
on generated sheet-like volumes; wall time and peak RSS of each process, then seconds per stage
of each in process, and per call with a prepared truth.

    python benchmarks/bench_surfaces.py --sizes 256 --rounds 3 \\
        --peer-python /work/scratch/surfaces/venv/bin/python --peer-path /work/scratch/surfaces/src/build

The peer venv: ``pip install numpy scikit-image connected-components-3d surface-distance pybind11``;
Betti-Matching-3D from its repository, built with CMake (``CXXFLAGS="-include tuple"`` for GCC 12,
``cmake .. -Dpybind11_DIR=$(python -m pybind11 --cmakedir) && make betti_matching``); never
committed. Each round runs segscore with an empty numba cache ("cold", compile time included),
the peer, then segscore again with the cache the cold run left ("warm"); medians over the rounds.
Both get the same npy files and must agree on every field to 1e-9 (the table says so). Run with
``nice`` on a shared machine: a loaded machine lowers every ratio (two threads of ours compete
with one of the peer's), so CPU seconds are quoted beside wall times.

Measured 2026-12-03, commit "surfaces: VOI and surface Dice interleaved ..." (issue 36), 256^3,
3 alternated rounds on the shared 2-core machine under load 9-16 (eight helpers' jobs): segscore
warm 105.8 s / 554 MB (rounds 115.7, 105.8, 97.6 s), cold 228.3 s / 680 MB (228.3, 163.5,
271.8 s), the peers' pipeline 299.1 s / 2560 MB (299.1, 262.5, 417.2 s): 2.83x warm, 1.31x cold,
every field equal to 1e-9 in every round. CPU seconds of one whole process (user + sys):
segscore warm 15.9 s, the peer 34.0 s (2.1x); of that, the tiles' Betti matching is 15.0 s of
ours (dual_pairs 6.3, reduce_dim1 2.7, uf_pairs 2.0, uf_image_match 1.8, sorted_cells 1.6,
_cube_values 0.5) against 0.25 s for everything else (prepare 0.32 s once; per prediction:
corner codes 0.04, the two area passes 0.02, labelling and VOI counts 0.10, binarize 0.01).
With the betti helper's branch (b2bf684) the whole call takes 9.4 s CPU (9.0 s with a prepared
truth), same counts.

Per stage, in process, warm, 256^3 (``stages``; CPU seconds, load-independent, then wall under
load ~11): segscore / the peer -- ignore+binarize 0.004 / 0.10; Betti matching of the 8 octants
16.0 (2 threads, 56.6 s wall) / 24.9 (one thread, 90.0 s wall); surface Dice 0.10 / 6.35 (the
peer's wall 45.8 s: its distance passes allocate gigabytes); components 0.11 with VOI / 0.06, VOI
0.07; one whole call 14.9 / about 31.5 (58.3 s / 122.7 s wall: 2.1x); with a prepared truth
15.1 CPU, 45.9 s wall (2.7x), prepare 0.33 once. Everything but the Betti matching is 0.25 s
CPU of ours: the matching is the whole of the remaining gap to 6x (and to 10x per call). Before this issue (same machine, load 2-5): 15.4 s warm, 88.8 s cold, peer
51.9 s, 3.36x / 0.58x.

512^3 (segscore only), warm, under load ~14: 17 min 40 s wall, 115.6 s user + 33.0 s sys, peak
RSS 1650 MB (commit "surfaces: the passes on the engine's threads ..."); again after a truth
prepared for one call drops its ignore region and components ahead of the octants: 25 min 43 s,
130.6 s user + 28.9 s sys, peak 1730 MB, the same leaderboard (0.5698466085415046) and counts.
The drop did not lower the peak: it is set by the heaviest octant's Betti matching (one octant
alone, the first, peaked at 1.0 GB above a 170 MB process), not by what the score holds beside
it (the caller's 268 MB of uint8 volumes and 34 MB of packed masks). Bytes per voxel of the volume, beyond the caller's
arrays (2 bytes: uint8 prediction and labels): prepare 1 (ignore) + 1 (truth mask) + 4 (one
labelling, then 4 per truth foreground voxel); surface Dice 1 (prediction mask) + 2 (corner codes
of both); VOI 4 (the prediction's labelling) then 4-8 per foreground voxel; each octant's Betti
matching about 61 bytes per voxel of the octant (7.6 per voxel of the volume: 1.0 GB at 512^3,
measured alone by ru_maxrss) with both masks held packed (1/4 byte). Matching two octants at
once, or one on two threads, would add another 1.0 GB or 0.6 GB: at 512^3 the octants run one
at a time, so the wall time there is the Betti matching's single-thread CPU time (about 140 s).
All of the above is "before" the Betti kernel work below.

After (issue 36, branch betti36, 2026-12-04, load ~7 on the 2 cores; CPU seconds): the Betti
matching of the eight 128^3 octants of this 256^3 pair, one thread, per kernel before -> after:
sorted_cells 2.65 -> 1.35 (a binary image sorted in one pass: value-0 cells from the front,
value-1 cells from the back, that tail reversed), dual_pairs 2.54 -> 2.04 (no division by the
volume's sizes: the far-face voxels are linked to the outside first), reduce_dim1 2.63 -> 2.53,
uf_pairs 1.22 -> 1.00, uf_image_match 0.98 -> 0.70, _cube_values 0.21 -> 0.13 (the last four
unchanged code: the machine's spread); 10.57 -> 7.92 in all. One whole api.surfaces call on the
arrays (two threads, medians of 3 alternated with the code before, in one run): 11.15 -> 10.37
CPU s (rounds 10.02/11.15/12.54 -> 9.02/10.96/10.37), with a prepared truth 11.20 -> 10.19
(9.36/12.67/11.20 -> 9.16/10.19/10.22), same leaderboard 0.5241715768117944; the peers' 34.0
CPU s were not re-run (3.3x, 3.3x prepared: the 6x and 10x targets are not met). 512^3 after:
one api.surfaces call on arrays 119.8 s wall, 117.7 CPU s in the call
(the whole process 80.6 s user + 39.0 s sys: a third is the kernel's page faults on each
octant's fresh arrays), peak RSS 1429 MB (was 148.6 CPU s, 1650 MB), leaderboard
0.5698466085415046 as before: <= 1.5 GB met, <= 45 s not. Bytes per voxel of an octant's passes (unchanged): ranks 4 x 3 images, top-cell values 4
(+4 while an input's dual runs), sorted cells 12, keep 3, dual union-find 8, column reduction
12 + 12, edge union-find 4, the matching's union-find 12 + 8. Then the union-finds' int32 node
arrays written once (no int64 arange first): the octants 7.65 (dual_pairs 1.73, uf_pairs 0.90),
one run, after the whole-call measurements.

512^3 on two threads (issue 36, 2026-12-05 02:51-02:55 UTC, idle, whole ``segscore surfaces``
processes on the .npy pair, warm cache, alternated with 5df9717): **39.5 / 40.4 s, peak RSS
1,409 / 1,408 MiB** against 87.5 / 79.4 s, 1,475 / 1,421 MiB before; the same leaderboard
(0.5698466085415046) and counts. What changed: a big tile's matching runs its independent steps
two at a time (the two inputs' pairs; the comparison's squares beside the dimension-0 matching;
the two image-pair reductions), the comparison's ranks not held meanwhile; the column reduction
keeps a kept column's slot in its pivot edge's entry instead of a per-column table (12 bytes per
voxel less); the CLI hands its files to the score as paths, so the raw volumes (268 MB) are
dropped once binarized; surface Dice runs beside VOI; the corner codes are made row by row (one
512^3 grid 1.35 -> 0.45 s). One 256^3 octant, its RSS sampled every 5 ms above the process:
46 bytes per voxel on one thread (57 before), 72 on two; 8.9 s on one thread, one run.
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
sys.path.insert(0, str(ROOT))
from benchmarks._harness import with_bytecode  # noqa: E402
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


def stages(pred_path, gt_path, calls=3, threads=None) -> dict:
    """Seconds per stage of segscore's score on one pair, in this process (call it with a warm
    cache): each pass alone (the tiles' Betti matchings on the engine's threads, surface Dice,
    VOI), the whole ``surfaces`` call, ``prepare_surfaces`` and a call with the prepared truth
    (medians of ``calls``)."""
    from segscore.engine.executor import reduce_windows
    from segscore.topology import score as S
    from segscore.topology.surface import corner_grid, surface_dice_of_codes

    p = np.load(pred_path)
    g = np.load(gt_path)
    small = np.zeros((12, 12, 12), np.uint8)  # load every kernel from the cache first
    small[3:6] = 1
    S.surfaces(truth=small, pred=small[::-1].copy())
    out, cpu = {}, {}
    t, c = time.perf_counter(), time.process_time()
    prep = S.prepare_surfaces(g)
    out["prepare"] = time.perf_counter() - t
    cpu["prepare"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    pb = S.binarize(p, ignore=prep.ignore)
    out["ignore+binarize"] = time.perf_counter() - t
    cpu["ignore+binarize"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    tiles = S.tile_slices(pb.shape, S.DEFAULT_TOPO_TILES)
    reduce_windows(lambda sl: [S.tile_counts(np.ascontiguousarray(pb[sl]), np.ascontiguousarray(prep.fg[sl]))],
                   tiles, lambda a, b: a + b, workers=threads)
    out["betti matching"] = time.perf_counter() - t
    cpu["betti matching"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    surface_dice_of_codes(corner_grid(prep.fg), corner_grid(pb))
    out["surface dice"] = time.perf_counter() - t
    cpu["surface dice"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    S.voi(pb, prep.fg)
    out["components+voi"] = time.perf_counter() - t
    cpu["components+voi"] = time.process_time() - c

    def median(f):
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2]

    c = time.process_time()
    out["call"] = median(lambda: S.surfaces(truth=g, pred=p, threads=threads))
    cpu["call"] = (time.process_time() - c) / calls  # the mean
    c = time.process_time()
    out["prepared call"] = median(lambda: S.surfaces(truth=prep, pred=p, threads=threads))
    cpu["prepared call"] = (time.process_time() - c) / calls
    out["cpu"] = cpu  # process CPU seconds of each stage (all threads)
    return out


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256])
    ap.add_argument("--peer-python", help="python of a venv with betti_matching, surface_distance, cc3d, skimage")
    ap.add_argument("--peer-path", default="", help="PYTHONPATH for the peer (Betti-Matching-3D's build dir)")
    ap.add_argument("--threads", type=int, default=None, help="segscore --threads (default: its own)")
    ap.add_argument("--rounds", type=int, default=3, help="alternated rounds (cold, peer, warm); medians reported")
    ap.add_argument("--no-cold", action="store_true", help="skip the empty-cache runs")
    ap.add_argument("--no-stages", action="store_true", help="skip the per-stage runs")
    ap.add_argument("--peer-sizes", type=int, nargs="*", default=None, help="sizes the peer runs at (default all)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--json-out", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    if args.peer_python and not Path(args.peer_python).exists():
        raise SystemExit(f"--peer-python {args.peer_python}: no such file; build the peer venv first (module docstring)")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_surfaces_"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        pp, gp = work / f"pred_{n}.npy", work / f"gt_{n}.npy"
        if not (pp.exists() and gp.exists()):
            p, g = make_pair(n)
            np.save(pp, p)
            np.save(gp, g)
            del p, g
        ours = [sys.executable, "-m", "segscore", "surfaces", str(pp), str(gp), "--json"]
        if args.threads:
            ours += ["--threads", str(args.threads)]
        peer_here = args.peer_python and (args.peer_sizes is None or n in args.peer_sizes)
        penv = dict(with_bytecode(os.environ), PYTHONPATH=args.peer_path)
        runs = {"cold": [], "warm": [], "peer": []}
        mine = theirs = None
        for r in range(args.rounds):
            cache = work / f"numba_{n}_{r}"
            env = dict(with_bytecode(os.environ), PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(cache))
            if not args.no_cold or r == 0:
                cold = measure(ours, env)  # an empty cache (also fills it for the warm run)
                if not args.no_cold:
                    runs["cold"].append(cold[:2])
            if peer_here:
                peer = measure([args.peer_python, str(HERE / "surfaces_peer.py"), "score", str(pp), str(gp)], penv)
                runs["peer"].append(peer[:2])
                theirs = json.loads(peer[2])
            warm = measure(ours, env)
            runs["warm"].append(warm[:2])
            mine = json.loads(warm[2])
            print(json.dumps({"size": n, "round": r, **{k: v[-1] for k, v in runs.items() if v}}), file=sys.stderr)
        row = {"size": n, "leaderboard": mine["leaderboard"], "runs": runs}
        for k, v in runs.items():
            if v:
                row[f"{k}_s"] = _median([x[0] for x in v])
                row[f"{k}_rss_mb"] = _median([x[1] for x in v])
        if theirs is not None:
            row["ratio_warm"] = row["peer_s"] / row["warm_s"]
            if "cold_s" in row:
                row["ratio_cold"] = row["peer_s"] / row["cold_s"]
            row["agree_1e-9"] = all((theirs[k] is None and mine[k] is None) or
                                    (theirs[k] is not None and mine[k] is not None and abs(theirs[k] - mine[k]) <= 1e-9)
                                    for k in FIELDS) and theirs["topology"] == mine["topology"]
        if not args.no_stages:
            env = dict(with_bytecode(os.environ), PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(work / f"numba_{n}_0"))
            code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from bench_surfaces import stages; "
                    f"print(json.dumps(stages({str(pp)!r}, {str(gp)!r}, 3, {args.threads!r})))")
            row["stages"] = json.loads(measure([sys.executable, "-c", code], env)[2])
            if peer_here:
                row["peer_stages"] = json.loads(measure([args.peer_python, str(HERE / "surfaces_peer.py"), "stages",
                                                         str(pp), str(gp), "3"], penv)[2])
                row["ratio_call"] = row["peer_stages"]["call"] / row["stages"]["call"]
                row["ratio_prepared_call"] = row["peer_stages"]["call"] / row["stages"]["prepared call"]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1))
    print(f"{'size':>5} {'cold s':>7} {'warm s':>7} {'RSS MB':>7} {'peer s':>7} {'peer MB':>8} "
          f"{'peer/warm':>9} {'peer/cold':>9} {'agree':>5}")
    nan = float("nan")
    for r in rows:
        print(f"{r['size']:>5} {r.get('cold_s', nan):>7.1f} {r['warm_s']:>7.1f} {r['warm_rss_mb']:>7.0f} "
              f"{r.get('peer_s', nan):>7.1f} {r.get('peer_rss_mb', nan):>8.0f} "
              f"{r.get('ratio_warm', nan):>9.2f} {r.get('ratio_cold', nan):>9.2f} {str(r.get('agree_1e-9', '-')):>5}")
    for r in rows:
        if "stages" in r:
            print(f"\nstages at {r['size']}^3 (in process, warm; wall s, then CPU s)   segscore   peer   "
                  "segscore CPU   peer CPU")
            peer = r.get("peer_stages", {})
            for k in ("ignore+binarize", "betti matching", "surface dice", "components", "components+voi", "voi",
                      "prepare", "call", "prepared call"):
                a, b = r["stages"].get(k), peer.get(k)
                ac, bc = r["stages"].get("cpu", {}).get(k), peer.get("cpu", {}).get(k)
                if a is None and b is None:
                    continue

                def f(x):
                    return "" if x is None else f"{x:.2f}"

                print(f"  {k:<22} {f(a):>8}   {f(b):>6}   {f(ac):>12}   {f(bc):>8}")
            if "ratio_call" in r:
                print(f"  per call: {r['ratio_call']:.2f}x; with a prepared truth: {r['ratio_prepared_call']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
