"""Connected components from blocks joined on faces (issue 37) beside the whole-volume labeller and
dask-image's ``label`` + scikit-image's VOI / adapted Rand, on a random-blob uint8 pair.

Rows (each its own process, wall time and peak RSS of the process, one run each by default):

- ``labels whole``: :func:`segscore.metrics.masks.components` of the truth read whole (26-connected).
- ``labels blockwise``: :func:`segscore.objects.blocklabel.blockwise_labels` of the truth ``.npy``
  (bands of ``--tile-rows``), then every band read back relabelled, as the objects pass reads it.
- ``labels dask-image``: ``dask_image.ndmeasure.label`` of the truth (chunks ``--chunk``³), computed.
- ``objects whole``: ``api.objects(arrays, components=26)`` (whole-volume labels, the full scorecard).
- ``objects blockwise``: ``api.objects(paths, components=26)`` (blockwise labels, streamed).
- ``VOI dask-image + skimage``: both labelled by dask-image, then ``variation_of_information`` and
  ``adapted_rand_error`` of scikit-image (dask-image is only an opponent here, not a dependency).

The labels' counts and the VOI values are checked equal across rows before the table is printed.

    PYTHONPATH=. nice python benchmarks/bench_blocklabel.py --size 512
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._harness import CACHE, run_once, table  # noqa: E402

MODES = ("labels whole", "labels blockwise", "labels dask-image", "objects whole", "objects blockwise",
         "VOI dask-image + skimage")


def make_pair(size: int, folder: Path) -> tuple[Path, Path]:
    """A truth and a prediction of random blobs (smoothed noise cut at a level), uint8 0/1."""
    from scipy import ndimage

    t_path, p_path = folder / f"blobs{size}_truth.npy", folder / f"blobs{size}_pred.npy"
    if t_path.exists() and p_path.exists():
        return t_path, p_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(37)
    for path, shift in ((t_path, 0), (p_path, 1)):
        f = ndimage.uniform_filter(rng.random((size,) * 3, dtype=np.float32), 7)
        if shift:
            f = np.roll(f, shift, axis=(0, 1, 2))
        np.save(path, (f > np.quantile(f[::4, ::4, ::4], 0.7)).astype(np.uint8))
        del f
    return t_path, p_path


def child(mode: str, t_path: str, p_path: str, out: str, tile_rows: int, chunk: int, threads: int):
    import segscore

    t0 = time.perf_counter()
    res: dict = {}
    if mode == "labels whole":
        from segscore.metrics.masks import components

        lab = components(np.load(t_path), 26)
        res["count"] = int(lab.max())
    elif mode == "labels blockwise":
        from segscore.io.readers import open_labels
        from segscore.objects.blocklabel import blockwise_labels

        src = open_labels(t_path)
        got = blockwise_labels(src, connectivity=26, tile_rows=tile_rows, halo=4, threads=threads)
        top = 0
        n0 = src.shape[0]
        for a in range(0, n0, tile_rows):  # read back as the objects pass does: bands with a halo of 4
            band = got.read((slice(max(0, a - 4), min(n0, a + tile_rows + 4)), slice(0, src.shape[1]),
                             slice(0, src.shape[2])))
            top = max(top, int(band.max()))
        res["count"] = got.count
        res["top"] = top
        res["face_pairs"] = int(len(got.face_pairs))
    elif mode == "labels dask-image":
        import dask
        import dask.array as da
        from dask_image.ndmeasure import label

        dask.config.set(num_workers=threads)
        arr = da.from_array(np.load(t_path, mmap_mode="r"), chunks=chunk)
        lab, n = label(arr, structure=np.ones((3, 3, 3), bool))
        lab = lab.compute()
        res["count"] = int(np.asarray(n).item() if hasattr(n, "item") else n.compute())
    elif mode in ("objects whole", "objects blockwise"):
        from segscore import api

        if mode == "objects whole":
            r = api.objects(np.load(t_path), np.load(p_path), components=26, threads=threads)
        else:
            r = api.objects(t_path, p_path, components=26, threads=threads, tile_rows=tile_rows)
        res.update({k: r[k] for k in ("voi_split", "voi_merge", "adapted_rand_error", "n_truth", "n_pred")})
    elif mode == "VOI dask-image + skimage":
        import dask
        import dask.array as da
        from dask_image.ndmeasure import label
        from skimage.metrics import adapted_rand_error, variation_of_information

        dask.config.set(num_workers=threads)
        labs = []
        for path in (t_path, p_path):
            lab, _ = label(da.from_array(np.load(path, mmap_mode="r"), chunks=chunk),
                           structure=np.ones((3, 3, 3), bool))
            labs.append(lab.compute())
        # the truth background left out, as the objects scorecard does (count_background off)
        split, merge = variation_of_information(labs[0], labs[1], ignore_labels=[0])
        are = adapted_rand_error(labs[0], labs[1])[0]
        res.update({"voi_split": float(split), "voi_merge": float(merge), "adapted_rand_error": float(are),
                    "n_truth": int(labs[0].max()), "n_pred": int(labs[1].max())})
    res["seconds_in"] = time.perf_counter() - t0
    res["segscore"] = segscore.__file__
    Path(out).write_text(json.dumps(res))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--tile-rows", type=int, default=64)
    ap.add_argument("--chunk", type=int, default=128, help="dask-image's chunk edge")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", nargs="*", default=list(MODES))
    ap.add_argument("--child", nargs=4, metavar=("MODE", "TRUTH", "PRED", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(*a.child, a.tile_rows, a.chunk, a.threads)
        return 0
    t_path, p_path = make_pair(a.size, CACHE / "blocklabel")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in a.modes:
            out = os.path.join(tmp, "out.json")
            r = run_once([sys.executable, __file__, "--size", a.size, "--tile-rows", a.tile_rows, "--chunk", a.chunk,
                          "--threads", a.threads, "--child", mode, t_path, p_path, out])
            res = json.loads(Path(out).read_text())
            rows.append({"mode": mode, **r, **res})
            print(json.dumps(rows[-1]), file=sys.stderr)
    counts = {r["count"] for r in rows if "count" in r}
    if len(counts) > 1:
        raise SystemExit(f"the labellers disagree on the count: {counts}")
    for key in ("voi_split", "voi_merge", "adapted_rand_error", "n_truth", "n_pred"):
        vals = [r[key] for r in rows if key in r]
        if vals and max(vals) - min(vals) > 1e-9 * max(1.0, abs(max(vals))):
            raise SystemExit(f"{key} differs across rows: {vals}")
    base = {r["mode"].split()[0]: r for r in rows if r["mode"].endswith("whole")}
    for r in rows:
        b = base.get(r["mode"].split()[0]) or base.get("objects")
        r["ratio"] = r["seconds"] / b["seconds"] if b else None
        r["mem_ratio"] = r["peak_mb"] / b["peak_mb"] if b else None
    print(f"{a.size}^3 uint8 blob pair, 26-connected, {a.threads} threads, bands of {a.tile_rows} rows, "
          f"dask-image chunks {a.chunk}^3; components {counts.pop() if counts else '?'}")
    print(table(rows, [("mode", "row", None), ("seconds", "wall s", "{:.1f}"), ("peak_mb", "peak RSS MB", "{:.0f}"),
                       ("ratio", "time / whole", "{:.2f}"), ("mem_ratio", "RSS / whole", "{:.2f}")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
