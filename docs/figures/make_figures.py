"""Draw every figure of :mod:`segscore.figures` into this folder, from small synthetic data.

    python docs/figures/make_figures.py [OUT_DIR]      # default: the folder of this script

Each input is made here with a fixed seed (nothing is downloaded, nothing private is used), scored
through the public API, and drawn by the figure function a user would call; the PNGs beside this
script are its output (150 dpi, re-encoded with a 256-colour palette: each under 100 KB). The
audit figure is the one exception to "synthetic": it recomputes the small case table kept for the tests
(``tests/data/curvicost/audit_fixture.json``), since an audit needs real curvilinear masks.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def write_png(path, array):
    from PIL import Image

    Image.fromarray(np.asarray(array)).save(path)
    return path


def blobs(shape, rng, rate):
    """A boolean map of smooth blobs covering about ``rate`` of the image (ink strokes, nuclei)."""
    from scipy.ndimage import gaussian_filter

    field = gaussian_filter(rng.normal(0.0, 1.0, shape), 3.0)
    return field > np.quantile(field, 1.0 - rate)


def ink_target(folder: Path, seed: int):
    """A ScrollGT-style ink target (gt_ink.png, mask.png, meta.json) and its ink."""
    rng = np.random.default_rng(seed)
    shape = (160, 200)
    ink = blobs(shape, rng, 0.25)
    folder.mkdir(parents=True, exist_ok=True)
    write_png(folder / "gt_ink.png", np.where(ink, 220, 30).astype(np.uint8))
    mask = np.ones(shape, bool)
    mask[:, :12] = False  # an unscored strip
    write_png(folder / "mask.png", np.where(mask, 255, 0).astype(np.uint8))
    meta = {"target_id": folder.name, "region": {"y0": 0, "x0": 0, "size": shape[0]},
            "registration": {"median_residual": 5.0, "placement": {"offset_level2_px": 4.0, "offset_mm": 0.03,
                                                                    "passed": True, "gate_threshold_level2_px": 48.0}}}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder, ink


def reading(ink, seed: int, signal: float):
    """A prediction that reads the ink with ``signal`` (0: noise, 1: the ink itself), as uint8."""
    rng = np.random.default_rng(seed)
    p = np.clip(rng.random(ink.shape) * (1.0 - signal) + signal * ink, 0.0, 1.0)
    return np.rint(p * 255).astype(np.uint8)


def target_and_board(work: Path, out: Path):
    from segscore import api, figures
    from segscore.batch import report

    targets = {name: ink_target(work / name, seed) for name, seed in (("tgt-a", 11), ("tgt-b", 12))}
    rows = []
    for model, signal, seed in (("unet", 0.2, 1), ("resnet", 0.12, 2), ("baseline", 0.04, 3)):
        for name, (folder, ink) in targets.items():
            pred = write_png(work / f"{model}-{name}.png", reading(ink, seed, signal))
            result = api.target(folder, pred)
            if model == "unet" and name == "tgt-a":  # target_curves: the curves its scoring computed
                figures.save(result.plot(), out / "target_curves.png")
            rows.append({"id": f"{model}-{name}", "status": "scored", "job": f"target {pred.name} {name}",
                         "tags": {"model": model, "target": name}, "result": json.loads(json.dumps(result))})
    rep = report(rows)  # what `segscore report` reads from a batch's results.jsonl
    figures.save(figures.leaderboard(rep, of="target:roc_auc"), out / "leaderboard.png")


def auc_figures(work: Path, out: Path):
    import tifffile

    from segscore import api, figures
    from segscore.ink.demo import make_sample

    sample = make_sample(work / "segment", shape=(240, 320), seed=0)  # the demo's sample, smaller
    pred = tifffile.imread(sample["prediction"]).astype(np.int64)
    rng = np.random.default_rng(7)
    blurred = np.where(pred > 0, np.clip(pred + rng.integers(-40, 41, pred.shape), 1, 255), 0).astype(np.uint8)
    tifffile.imwrite(work / "MAP_noisier.tif", blurred)  # a weaker map, for the paired comparison
    kw = dict(mask=sample["mask"], control=sample["control"], bootstrap=300, seed=3)
    # plot() draws auc_draws: the bootstrap alone (auc_bootstrap) without compare=, beside the paired
    # difference (auc_compare) with it
    result = api.auc(sample["labels"], sample["prediction"], **kw)
    figures.save(result.plot(), out / "auc_bootstrap.png")
    paired = api.auc(sample["labels"], sample["prediction"], compare=str(work / "MAP_noisier.tif"), **kw)
    figures.save(paired.plot(), out / "auc_draws.png")
    far = api.auc(sample["labels"], sample["prediction"], compare=sample["control"], **kw)  # vs a map reading nothing
    figures.save(far.plot(), out / "auc_compare.png")


def objects_figure(out: Path):
    from scipy.ndimage import label

    from segscore import api, figures

    rng = np.random.default_rng(5)
    shape = (160, 200)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    truth = np.zeros(shape, np.int32)
    pred = np.zeros(shape, np.int32)
    centres = []
    while len(centres) < 24:
        c = rng.integers(12, [shape[0] - 12, shape[1] - 12])
        if all(np.hypot(*(c - d)) > 22 for d in centres):
            centres.append(c)
    for k, (cy, cx) in enumerate(centres, 1):
        r = rng.uniform(6, 10)
        truth[np.hypot(yy - cy, xx - cx) <= r] = k
        if k % 8 == 0:
            continue  # a missed object
        dy, dx = rng.normal(0, 1.2, 2)  # a shifted, resized prediction of it
        pred[np.hypot(yy - cy - dy, xx - cx - dx) <= r * rng.uniform(0.8, 1.15)] = k
    pred[blobs(shape, rng, 0.01) & (truth == 0)] = 0
    spurious, n = label(blobs(shape, np.random.default_rng(6), 0.015) & (pred == 0) & (truth == 0))
    pred[spurious > 0] = spurious[spurious > 0] + 100  # false positives
    result = api.objects(truth, pred)
    figures.save(result.plot(), out / "objects_ap.png")


def fibers_figure(work: Path, out: Path):
    from segscore import api, figures

    shape = (24, 32, 48)
    fibers = [(np.array([[6, 8, 2], [6, 8, 44]], float), np.array([[0, 1]])),
              (np.array([[12, 20, 4], [12, 20, 30], [18, 26, 44]], float), np.array([[0, 1], [1, 2]])),
              (np.array([[18, 6, 6], [18, 6, 40]], float), np.array([[0, 1]]))]
    folder = work / "fibers_24"
    folder.mkdir(parents=True, exist_ok=True)
    coords = np.concatenate([c for c, _ in fibers]).astype(np.float32)
    f_off = np.concatenate([[0], np.cumsum([len(c) for c, _ in fibers])]).astype(np.int64)
    e_off = np.concatenate([[0], np.cumsum([len(e) for _, e in fibers])]).astype(np.int64)
    edges = np.concatenate([e + f_off[i] for i, (_, e) in enumerate(fibers)]).astype(np.int32)
    np.savez(folder / "skeleton.npz", coords=coords, edges=edges, fiber_offsets=f_off, edge_offsets=e_off,
             fiber_ids=np.arange(len(fibers), dtype=np.int64) + 1, scale_um=np.array([7.91] * 3),
             origin_zyx=np.zeros(3, np.int64), shape=np.asarray(shape, np.int64))
    mask = np.zeros(shape, bool)  # the fibers' voxels, a little thickened
    lab = np.zeros(shape, np.int32)
    for i, (c, e) in enumerate(fibers):
        for a, b in e:
            for t in np.linspace(0.0, 1.0, 200):
                z, y, x = np.rint(c[a] + t * (c[b] - c[a])).astype(int)
                mask[max(z - 1, 0): z + 2, max(y - 1, 0): y + 2, x] = True
                lab[z, y, x] = i + 1
    lab[6, 8, 30:] = 7  # fiber 1 split in two
    lab[lab == 3] = 2  # fibers 2 and 3 merged into one instance
    np.savez(folder / "mask.npz", packed=np.packbits(mask.ravel()), shape=np.asarray(shape, np.int64))
    meta = {"target_id": folder.name, "split": "primary", "size_class": shape[0], "shape": list(shape),
            "tolerance": 2.0, "floors": {}}
    (folder / "meta.json").write_text(json.dumps(meta))
    np.save(work / "fiber_labels.npy", lab)
    card = api.fibers(folder, work / "fiber_labels.npy", recompute_floors=True)
    figures.save(card.plot(), out / "fiber_erl.png")


def audit_figure(out: Path):
    from segscore import figures
    from segscore.curvilinear.auditing import audit_from_cases

    result = audit_from_cases(REPO / "tests" / "data" / "curvicost" / "audit_fixture.json", n_boot=200, min_units=3,
                              min_cases=3)
    figures.save(figures.audit_bars(result), out / "audit_bars.png")


def shrink(png: Path) -> None:
    """Re-encode ``png`` with an adaptive 256-colour palette (the figures use a few flat colours
    and anti-aliased edges): a third of the size, the same picture, so each stays under 100 KB."""
    from PIL import Image

    with Image.open(png) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(png, optimize=True)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else HERE
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="segscore-figures-") as tmp:
        work = Path(tmp)
        target_and_board(work, out)
        auc_figures(work, out)
        objects_figure(out)
        fibers_figure(work, out)
        audit_figure(out)
    for png in sorted(out.glob("*.png")):
        shrink(png)
        print(f"{png.name}: {png.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
