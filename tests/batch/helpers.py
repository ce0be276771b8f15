"""A small folder of every family's inputs, for the batch tests."""

from __future__ import annotations

import numpy as np


def workspace(folder, n_curves=3):
    """Write inputs under ``folder`` and return the job lines (relative paths) by id."""
    import tifffile

    from segscore.curvilinear.masks import save_mask
    from tests.curvilinear.helpers import vessel_tree
    from tests.fibers.helpers import write_target
    from tests.ink.helpers import segment, write_levels
    from tests.objects.helpers import synthetic_pair
    from tests.targets.helpers import make_target, reading_map, write_png

    folder.mkdir(parents=True, exist_ok=True)
    gt = vessel_tree((96, 96), seed=0)
    save_mask(gt, folder / "gt.png")
    jobs = {}
    for i in range(n_curves):
        pred = np.roll(gt, i, axis=0)
        pred[40 + i:44 + i] = False
        save_mask(pred, folder / f"pred{i}.png")
        jobs[f"curve{i}"] = f"curve pred{i}.png --gt gt.png --prune-px 5"
    truth, pred = synthetic_pair((64, 64), n=12, seed=0)[:2]
    np.save(folder / "truth.npy", truth)
    np.save(folder / "pred.npy", pred)
    jobs["objects"] = "objects truth.npy pred.npy --tolerances 1 2"
    _, ink, _ = make_target(folder / "targets" / "a")
    write_png(folder / "map.png", reading_map(ink))
    jobs["target"] = "target map.png targets/a --seed 3"
    p, ink2, mask2 = segment((50, 70), seed=0)
    tifffile.imwrite(folder / "MAP.tif", p)
    tifffile.imwrite(folder / "REV.tif", segment((50, 70), seed=1)[0])
    write_levels(folder / "inklabels.zarr", {"2": ink2.astype(np.uint8)})
    write_levels(folder / "supervision.zarr", {"2": mask2.astype(np.uint8)})
    jobs["auc"] = "auc MAP.tif --labels inklabels.zarr --mask supervision.zarr --control REV.tif --bootstrap 20"
    shape = (10, 12, 24)
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]])),
              (np.array([[6, 9, 3], [6, 9, 15], [2, 9, 18]], float), np.array([[0, 1], [1, 2]]))]
    mask = np.zeros(shape, bool)
    mask[4, 3:6, :] = True
    mask[6, 9, 5:] = True
    write_target(folder / "fibers_tiny_10", fibers, mask)
    lab = np.zeros(shape, np.int32)
    lab[4, 4, :] = 1
    lab[6, 9, :] = 2
    np.save(folder / "labels.npy", lab)
    jobs["fibers"] = "fibers labels.npy fibers_tiny_10"
    return jobs


def write_csv(path, jobs, tags=None):
    import csv

    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        names = sorted({k for t in (tags or {}).values() for k in t})
        w.writerow(["id", "job", *names])
        for job_id, text in jobs.items():
            w.writerow([job_id, text, *[(tags or {}).get(job_id, {}).get(n, "") for n in names]])
    return path
