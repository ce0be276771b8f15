"""A notebook, kept as a script the tests run: each family scored through ``segscore.api``.

    python docs/notebook.py DATA [FIGURES]

Every call takes the truth first and the prediction second (``truth=``, ``pred=``), a path or an
array alike, and options named as on the command line; it returns the dict ``segscore CMD --json``
prints, as a ``Result``: ``.to_frame()`` is a pandas DataFrame, ``.plot()`` the command's figure.

DATA holds one input of each kind, named as ``tests/fuzz/corpus.py`` writes them (an ink segment,
an ink target, a column target, a fiber target, label images, curvilinear masks); FIGURES
(default: DATA) receives the figures as PNG. The objects, curvilinear and topology cells build
their inputs as arrays here, to show that an array goes where a path goes.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from segscore import api

data = Path(sys.argv[1])
figures = Path(sys.argv[2]) if len(sys.argv) > 2 else data
frames = {}


def show(title, result):
    """What a notebook cell would display: the result's repr and its DataFrame."""
    print(f"== {title}")
    print(repr(result))
    frame = result.to_frame()
    print(frame.T.head(12).to_string())
    return frame


# %% ink: the pixel AUC of an ink map inside its supervision mask (segscore auc)
auc = api.auc(truth=data / "labels.zarr", pred=data / "map.tif", mask=data / "mask.zarr",
              control=data / "rev.tif", bootstrap=50, seed=1)
frames["auc"] = show("ink: auc", auc)
auc.plot().savefig(figures / "auc.png")

# %% ink: a prediction on a registered ink target (segscore target)
card = api.target(truth=data / "ink_target", pred=data / "ink_pred.png", no_floors=True)
frames["target"] = show("ink: target", card)
card.plot().savefig(figures / "target.png")

# %% columns: a grid-resolution map on a column target (segscore columns), the map as an array
col_map = np.load(data / "col_pred.npy")
columns = api.columns(truth=data / "col_target", pred=col_map, no_floors=True)
frames["columns"] = show("columns", columns)

# %% objects: an instance segmentation's scorecard (segscore objects), a label image built here
rng = np.random.default_rng(0)
truth = np.zeros((64, 64), np.int32)
for i, (y, x) in enumerate(rng.integers(4, 56, size=(10, 2)), start=1):
    truth[y:y + 6, x:x + 6] = i
pred = np.roll(truth, 1, axis=1)
pred[pred == 3] = 0  # one object missed
objects = api.objects(truth=truth, pred=pred, iou=0.5)
frames["objects"] = show("objects", objects)
objects.plot().savefig(figures / "objects.png")

# %% objects on files: the truth a TIFF, the prediction a .npy
on_files = api.objects(truth=data / "truth.tif", pred=data / "objpred.npy")
print("objects on files: F1", on_files["f1"])

# %% fibers: a tracer's instance labels against a fiber target (segscore fibers)
fibers = api.fibers(truth=data / "fiber_target", pred=np.load(data / "fiber_labels.npy"))
frames["fibers"] = show("fibers", fibers)
fibers.plot().savefig(figures / "fibers.png")

# %% curvilinear: overlap and topology beside the functional costs (segscore curve), as arrays
vessel = np.zeros((64, 64), bool)
vessel[32, 4:60] = True
vessel[8:56, 20] = True
vessel[8:56, 44] = True
broken = vessel.copy()
broken[32, 30:34] = False  # one break
curve = api.curve(truth=vessel, pred=broken)
frames["curve"] = show("curvilinear: curve", curve)

# %% curvilinear: which metric tracks which cost (segscore audit), three references, a tiny ladder
grid = np.zeros((64, 64), bool)
grid[10, 4:60] = True
grid[40, 4:60] = True
grid[8:56, 30] = True
audit = api.audit(masks=[data / "gt.png", vessel, grid], severities="0.1,0.3", radius_scales="0.85",
                  boundary_fracs="0.05,0.2", n_boot=50, no_redraw_floor=True, min_units=1, min_cases=2)
print("== curvilinear: audit")
print(audit.to_frame("findings")[["cost", "operator", "metric", "aligned_rho", "label"]].head().to_string())
audit.plot().savefig(figures / "audit.png")

# %% topology: the surface-detection score of a 3D volume (segscore surfaces), as arrays
sheet = np.zeros((10, 12, 14), np.uint8)
sheet[3:5] = 1
noisy = sheet.copy()
noisy[np.random.default_rng(1).random(noisy.shape) < 0.02] ^= 1
surf = api.surfaces(truth=sheet, pred=noisy, topo_tiles=[1, 1, 1])
frames["surfaces"] = show("topology: surfaces", surf)

# %% one headline of each family, side by side
headline = {"auc": "forward.auc", "target": "metrics.roc_auc", "columns": "metrics.col_gutter_auc",
            "objects": "f1", "fibers": "metrics.erl", "curve": "cldice", "surfaces": "leaderboard"}
summary = pd.DataFrame([{"command": name, "metric": field, "value": frames[name].loc[0, field]}
                        for name, field in headline.items()])
print(summary.to_string(index=False))
