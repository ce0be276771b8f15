"""Exact float ranking beside the integer-level path: passes, bytes gathered, time and peak RSS.

`segscore target` ranks a float map exactly (every distinct float64 value a threshold, as
ScrollGT's scikit-learn does) in passes over the map whose memory does not grow with it
(`segscore.metrics.exact`); an 8- or 16-bit map is counted into level histograms in one pass.
This script scores the same prediction both ways on the real 4,096^2 target
``scroll1_20231210121321`` (1x) and on a 8,192^2 target made of 2 x 2 copies of it (4x area):

- ``u8 png``: the map as an 8-bit PNG (decoded whole, as every PNG is), integer path;
- ``u16 npy``: the map as uint16 ``.npy`` (read by windows), integer path;
- ``f64 npy``: the map as float64 ``.npy``, every value distinct and both classes in nearly every
  first-pass bucket: the worst case for passes;
- ``narrow npy``: ``0.5 + (p - 0.5) * 2e-6``, float64: two first-pass buckets, refined by splits;
- at 1x, the ``u8 png`` card with its three floors (the passes are the uniform floor's: 16.7 M
  distinct doubles ranked exactly).

Each row is one whole process (``segscore.api.target(..., no_floors=True)``, the
card only, so the prediction's path is what is measured), timed from start to exit, its own
peak RSS measured under a bare parent; the passes and bytes come from that process. Nothing
spills to disk: the refinement gathers at most ``budget`` scores in memory per pass.

    PYTHONPATH=. nice python benchmarks/bench_exact.py [--repeat 1] [--skip-4x]

``--against TREE [TREE ...]`` instead runs the two commands whose time the exact ranking sets, side by side
with other checkouts (the quantized path it replaced: ``git worktree add TREE bfa3608``; and that
tree without the process tricks issue 28 removed from every command, see benchmarks/README.md), wall
and CPU (user + system, both threads) of each, and the load average around the runs:
``segscore target`` on bench_targets.py's 4,096² 8-bit PNG with its three floors (the uniform floor
is 16.7 M distinct doubles), and ``segscore columns`` on the full 2,061 x 30,097 float32 column map
with its floors. Whole processes, each tree on its own path and its own numba cache (warmed by one
unmeasured run each), the trees alternated run by run, medians of ``--repeat``:

    PYTHONPATH=. nice python benchmarks/bench_exact.py --against /work/scratch/exact-bfa --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import CACHE, machine_note, measure, shared_data, table  # noqa: E402


def child(pred: str, target: str, out: str, floors: str = "no") -> None:
    """The measured process: the card of ``pred`` on ``target``, and what the exact passes did."""
    import segscore.metrics.exact as E
    from segscore import api

    seen = []
    real = E.rank_exact

    def recording(*a, **k):
        ex = real(*a, **k)
        seen.append(ex)
        return ex

    E.rank_exact = recording
    card = api.target(target, pred, no_floors=floors != "floors")["metrics"]
    seen = [e for e in seen if e.n_pos + e.n_neg > 4]  # not the warm-up's four scores
    ex = seen[0] if seen else None  # the prediction's (the floor's comes after it)
    if floors == "floors":
        ex = seen[-1]  # the uniform floor's
    Path(out).write_text(json.dumps({
        "roc_auc": card["roc_auc"], "average_precision": card["average_precision"],
        "passes": ex.passes if ex else 1, "gathered_px": ex.collected_px if ex else 0,
        "max_pass_px": ex.max_pass_px if ex else 0, "split_regions": ex.split_regions if ex else 0}))


def make_cases(real: Path, skip_4x: bool) -> dict:
    from PIL import Image

    CACHE.mkdir(parents=True, exist_ok=True)
    gt = np.asarray(Image.open(real / "gt_ink.png").convert("L"))
    meta = json.loads((real / "meta.json").read_text())
    cases = {}
    for scale in ((1,) if skip_4x else (1, 2)):
        tag = f"{scale * scale}x"
        folder = CACHE / f"exact_target_{tag}"
        if scale == 1:
            folder = real
        elif not (folder / "gt_ink.png").exists():
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(np.tile(gt, (scale, scale))).save(folder / "gt_ink.png")
            m = dict(meta, target_id=f"{meta.get('target_id', 'scroll1')}_tiled{tag}")
            m["region"] = dict(meta.get("region") or {}, size=gt.shape[0] * scale)
            (folder / "meta.json").write_text(json.dumps(m))
        paths = {k: CACHE / f"exact_{tag}_{k}" for k in ("u8.png", "u16.npy", "f64.npy", "narrow.npy")}
        if not all(p.exists() for p in paths.values()):
            ink = np.tile(gt > 127, (scale, scale))
            rng = np.random.default_rng(0)
            p = np.clip(np.roll(ink, (31, -8), axis=(0, 1)) * 0.4 + rng.random(ink.shape) * 0.6, 0, 1)
            del ink
            Image.fromarray(np.rint(p * 255).astype(np.uint8)).save(paths["u8.png"])
            np.save(paths["u16.npy"], np.rint(p * 65535).astype(np.uint16))
            np.save(paths["f64.npy"], p)
            np.save(paths["narrow.npy"], 0.5 + (p - 0.5) * 2e-6)
            del p
        cases[tag] = {"target": folder, **{k.split(".")[0]: v for k, v in paths.items()}}
    return cases


def against(others: list, repeat: int) -> None:
    """``target`` with floors and full-size ``columns``, this checkout and each tree of ``others``
    alternated run by run (one table row per case and other tree)."""
    import statistics

    from benchmarks._harness import REPO, run_once, with_bytecode
    from benchmarks.bench_targets import make_cases

    case = make_cases(shared_data("scrollgt"))
    load0 = os.getloadavg()[0]
    trees = {"this": str(REPO)}
    for i, tree in enumerate(others):
        trees[f"other{i}"] = str(Path(tree).resolve())
    cmds = {"target 4096² u8 PNG + 3 floors": ["target", case["png"], case["target"]],
            "columns full grid f32 + 3 floors": ["columns", case["cols"], case["ctarget"]]}
    with tempfile.TemporaryDirectory() as tmp:
        envs = {k: dict(with_bytecode(os.environ), PYTHONPATH=v, NUMBA_CACHE_DIR=os.path.join(tmp, f"numba_{k}"))
                for k, v in trees.items()}

        def run(k, argv):
            out = os.path.join(tmp, f"{k}.json")
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            m = run_once([sys.executable, "-m", "segscore", *argv, "--json-out", out], env=envs[k], cwd=tmp)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command's own CPU (user + system)
            m["cpu"] = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            return m, json.loads(Path(out).read_text())

        rows = []
        for name, argv in cmds.items():
            for k in trees:  # warm each tree's cache (the first run compiles)
                run(k, argv)
            got = {k: [] for k in trees}
            cards = {}
            for _ in range(repeat):
                for k in trees:
                    m, cards[k] = run(k, argv)
                    got[k].append(m)
            med = {k: (statistics.median(m["seconds"] for m in v), statistics.median(m["peak_mb"] for m in v),
                       statistics.median(m["cpu"] for m in v)) for k, v in got.items()}
            for k in trees:
                if k == "this":
                    continue
                same = cards["this"] == cards[k]
                rows.append({"case": name, "other": trees[k], "s": med["this"][0], "s_other": med[k][0],
                             "ratio": med["this"][0] / med[k][0], "cpu": med["this"][2], "cpu_other": med[k][2],
                             "cpu_ratio": med["this"][2] / med[k][2],
                             "mb": med["this"][1], "mb_other": med[k][1],
                             "mb_ratio": med["this"][1] / med[k][1], "same": "yes" if same else "no (quantized)",
                             "runs": " ".join(f"{m['seconds']:.2f}" for m in got["this"]) + " / "
                             + " ".join(f"{m['seconds']:.2f}" for m in got[k])})
    print(f"exact ranking against {', '.join(others)} — {machine_note()} — whole processes, trees alternated, "
          f"medians of {repeat}, each tree's numba cache warm; load average {load0:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after\n")
    print(table(rows, [("case", "case", None), ("other", "other tree", None), ("s", "this s", "{:.2f}"),
                       ("s_other", "other s", "{:.2f}"),
                       ("ratio", "this / other", "{:.2f}"), ("cpu", "this CPU s", "{:.2f}"),
                       ("cpu_other", "other CPU s", "{:.2f}"), ("cpu_ratio", "CPU ratio", "{:.2f}"),
                       ("mb", "this peak MB", "{:.0f}"),
                       ("mb_other", "other peak MB", "{:.0f}"), ("mb_ratio", "peak ratio", "{:.2f}"),
                       ("same", "same JSON", None), ("runs", "runs (this / other)", None)]))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--skip-4x", action="store_true")
    ap.add_argument("--against", metavar="TREE", nargs="+",
                    help="time target + floors and columns beside other checkouts (alternated with each)")
    ap.add_argument("--child", nargs="+", metavar="PRED TARGET OUT [floors]", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(*args.child)
    if args.against:
        return against(args.against, args.repeat)
    real = shared_data("scrollgt") / "scroll1_20231210121321"
    if not real.exists():
        sys.exit(f"{real} not found: set SEGSCORE_SHARED_DATA")
    cases = make_cases(real, args.skip_4x)
    from segscore.metrics.exact import DEFAULT_BUDGET_BYTES

    rows = []
    base = {}
    with tempfile.TemporaryDirectory() as tmp:
        first = True
        for tag, case in cases.items():
            for kind, label in (("u8", "u8 png (levels)"), ("u16", "u16 npy (levels)"), ("f64", "f64 npy (exact)"),
                                ("narrow", "narrow f64 npy (exact)")):
                out = os.path.join(tmp, f"{tag}_{kind}.json")
                argv_ = [sys.executable, __file__, "--child", case[kind], case["target"], out]
                m = measure(argv_, repeat=args.repeat, warmup=1 if first else 0)
                first = False
                st = json.loads(Path(out).read_text())
                row = {"case": f"{tag} {label}", "s": m["seconds"], "mb": m["peak_mb"], "passes": st["passes"],
                       "gathered": st["gathered_px"] * 8 / 2**20, "per_pass": st["max_pass_px"] * 8 / 2**20,
                       "splits": st["split_regions"], "spilled": 0, "auc": st["roc_auc"]}
                if kind == "u16":
                    base[tag] = m["peak_mb"]
                rows.append(row)
            if tag == "1x":  # the card with its floors: the uniform floor (16.7 M distinct doubles) ranks exactly
                out = os.path.join(tmp, "1x_floors.json")
                m = measure([sys.executable, __file__, "--child", case["u8"], case["target"], out, "floors"],
                            repeat=args.repeat, warmup=0)
                st = json.loads(Path(out).read_text())
                rows.append({"case": "1x u8 png + 3 floors (uniform floor exact)", "s": m["seconds"],
                             "mb": m["peak_mb"], "passes": st["passes"], "gathered": st["gathered_px"] * 8 / 2**20,
                             "per_pass": st["max_pass_px"] * 8 / 2**20, "splits": st["split_regions"], "spilled": 0,
                             "auc": st["roc_auc"]})
    for r in rows:
        r["vs_int"] = r["mb"] / base[r["case"].split()[0]]
    print(f"exact float ranking vs integer levels — {machine_note()} — budget {DEFAULT_BUDGET_BYTES >> 20} MiB of "
          f"scores/pass, medians of {args.repeat}, JIT cache warm, card only (--no-floors)\n")
    print(table(rows, [("case", "case", None), ("passes", "passes", "{}"), ("splits", "regions split", "{}"),
                       ("gathered", "MiB gathered (all passes)", "{:.0f}"),
                       ("per_pass", "MiB gathered (max one pass)", "{:.0f}"), ("spilled", "bytes spilled", "{}"),
                       ("s", "wall s", "{:.2f}"), ("mb", "peak RSS MB", "{:.0f}"),
                       ("vs_int", "peak / u16 path's", "{:.2f}"), ("auc", "roc_auc", "{:.6f}")]))
    if "4x" in base:
        f4 = max(r["mb"] for r in rows if r["case"].startswith("4x") and "exact" in r["case"] and "floors" not in r["case"])
        ok = f4 <= 1.5 * base["4x"]
        print(f"\n- 4x-area float map within 1.5x the integer path's peak (u16 npy, 4x): {f4:.0f} MB vs "
              f"{base['4x']:.0f} MB -> {'met' if ok else 'MISSED'}")
        u8 = next(r["mb"] for r in rows if r["case"] == "4x u8 png (levels)")
        print(f"- the same against the u8 PNG path at 4x: {f4:.0f} MB vs {u8:.0f} MB ({f4 / u8:.2f}x)")
        f1 = max(r["mb"] for r in rows if r["case"].startswith("1x") and "exact" in r["case"] and "floors" not in r["case"])
        print(f"- the float path's peak from 1x to 4x area: {f1:.0f} -> {f4:.0f} MB")


if __name__ == "__main__":
    main()
