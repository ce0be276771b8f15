"""The refusal matrix (issue 14 item 7): one case per failure-mode row of the four specs.

Each case builds its failing input in ``tmp_path`` at run time, runs ``segscore CMD`` through
the ``cli`` fixture and checks what the spec's row says, with our conventions (DESIGN.md,
"Conventions"; README.md):

- a refusal exits 2 (a usage error too), prints nothing on stdout and writes exactly one line
  on stderr, ``segscore CMD: ...``, that names the offending file when there is one and holds
  the key words of the spec's message;
- a check that ran and found a violation (``check``, ``holdout --verify``) exits 3 with the same
  one-line stderr (its report may go to stdout);
- rows that are not refusals (a null AUC, an override, a warning) exit 0 and say why: a
  ``notes`` entry, or one ``segscore CMD: warning: ...`` line on stderr.

Case ids are ``SPEC:ROW``. A row the code does not yet meet may be registered with ``gap=`` (a
strict xfail whose reason says what differs); none is open now.
Rows that cannot apply here (missing numpy, tifffile or zarr: hard dependencies) are checked
for that premise in ``test_dependency_rows_do_not_apply``.

Which file is "the offending one": the input whose content is refused (the map with NaN, the
unreadable TIFF, the labels of another shape); for a mismatch between two inputs, the one
checked against the other (the control and the compared map against the map, the mask against
the labels, the prediction against the reference); none for option errors (``--inner``,
``--bootstrap``, ``--crop`` without ``--surface-shape``) and for conditions of a combination
(a one-class mask after cropping, cards of two size classes, a window over the cap).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from tests.fibers.helpers import write_target as write_fiber_target
from tests.ink.helpers import segment, write_levels
from tests.objects.helpers import synthetic_pair
from tests.targets.helpers import make_target, reading_map, write_png


@dataclass
class Expect:
    """What one case runs and what the row says must happen."""

    args: list
    code: int = 2
    #: the offending file (a path or its name) the stderr line must name, or None
    file: object = None
    #: key words of the spec's message, each must appear in the stderr line (case-insensitive)
    words: tuple = ()
    #: words the stderr line must not hold (case-sensitive)
    absent: tuple = ()
    #: exit 0 rows: the stderr warning's key words (one line), or () for an empty stderr
    warn: tuple = ()
    #: exit 0 rows: a check of the parsed --json output
    check: Callable | None = None


CASES = []


def case(case_id, *, gap=None):
    """Register a case builder ``fn(tmp_path) -> Expect``; ``gap``: the strict-xfail reason."""

    def deco(fn):
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        CASES.append(pytest.param(fn, id=case_id, marks=marks))
        return fn

    return deco


# ---------------------------------------------------------------------------------------------
# small inputs


def kit_segment(tmp, shape=(60, 80), ink=None, mask=None, mask_shape=None, levels=("2",)):
    """A map (.npy), labels and mask (zarr v3 groups); returns (map, labels, mask)."""
    pred, ink0, mask0 = segment(shape)
    ink = ink0 if ink is None else ink
    mask = mask0 if mask is None else mask
    if mask_shape is not None:
        mask = np.ones(mask_shape, bool)
    mp = tmp / "map.npy"
    np.save(mp, pred)
    lab = write_levels(tmp / "inklabels.zarr", {k: np.asarray(ink, np.uint8) for k in levels})
    msk = write_levels(tmp / "supervision.zarr", {k: np.asarray(mask, np.uint8) for k in levels})
    return mp, Path(lab), Path(msk)


def auc_args(mp, lab, msk, *extra):
    return ["auc", mp, "--labels", lab, "--mask", msk, *extra]


def ink_target(tmp, name="scroll1_20990101000000", **meta):
    folder, ink, _ = make_target(tmp / name, meta=meta or None)
    pred = tmp / "pred.png"
    write_png(pred, reading_map(ink))
    return folder, pred, ink


NON_SCORING = {"enabled": False, "reason": "Marked non-scoring 2026-08-14. Local placement error reaches 1.9 windows."}
FAILING = {"median_residual": 8.07,
           "placement": {"offset_level2_px": 53.3, "offset_mm": 0.51, "passed": False,
                         "gate_threshold_level2_px": 48.0}}

FIBER_SHAPE = (10, 12, 24)


def fiber_target(tmp, name="fibers_tiny_10", size_class=None, tolerance=2.0):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]])),
              (np.array([[6, 9, 3], [6, 9, 15], [2, 9, 18]], float), np.array([[0, 1], [1, 2]]))]
    mask = np.zeros(FIBER_SHAPE, bool)
    mask[4, 3:6, :] = True
    mask[6, 9, 5:] = True
    return write_fiber_target(tmp / name, fibers, mask, size_class=size_class, tolerance=tolerance)


def fiber_card(path, size_class, tolerance=2.0, erl=5.0):
    card = {"target": "t", "prediction": "p", "tolerance": tolerance, "size_class": size_class,
            "metrics": {"erl": erl, "erl_merge_penalized": erl / 2, "tolerance": tolerance}}
    path.write_text(json.dumps(card))
    return path


def holdout_set(tmp, *, drop=(), digest=True, corrupt=False, missing_truth=False, truth_path=None,
                predictions=False):
    """A one-field held-out set under tmp/set (truth/a.tif, images/a.tif, manifest.json)."""
    import hashlib

    import tifffile

    root = tmp / "set"
    (root / "truth").mkdir(parents=True)
    (root / "images").mkdir()
    t, p = synthetic_pair(shape=(48, 48), n=6, seed=3, r=(3, 6))
    tifffile.imwrite(root / "truth" / "a.tif", t)
    tifffile.imwrite(root / "images" / "a.tif", t.astype(np.uint8))
    sha = hashlib.sha256((root / "truth" / "a.tif").read_bytes()).hexdigest()
    if corrupt:
        tifffile.imwrite(root / "truth" / "a.tif", t[::-1].copy())
    if missing_truth:
        (root / "truth" / "a.tif").unlink()
    entry = {"image": "images/a.tif", "truth": truth_path or "truth/a.tif", "sha256": sha if digest else ""}
    manifest = {"name": "toy_holdout", "version": "1.0", "fields": [entry]}
    for k in drop:
        manifest.pop(k)
    if "fields" in drop:
        manifest["fields"] = []
    mpath = root / "manifest.json"
    mpath.write_text(json.dumps(manifest))
    pred_dir = None
    if predictions:
        pred_dir = tmp / "preds"
        pred_dir.mkdir()
        np.save(pred_dir / "a.npy", p)
    return mpath, pred_dir


def tube2d(shape=(40, 40), r=2.0):
    from tests.curvilinear.helpers import disk_line

    m = np.zeros(shape, bool)
    disk_line(m, (4, 20), (36, 20), r)
    disk_line(m, (20, 20), (30, 34), r)
    return m


# ---------------------------------------------------------------------------------------------
# kit-auc: the failure-mode table ("What you see | Why | What to do"), one case per row

@case("kit:usage-error")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(["auc", mp, "--mask", msk], words=("--labels", "required"))


@case("kit:nan-or-inf")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    pred = np.load(mp).astype(np.float32) / 40
    pred[3, 4] = np.nan
    pred[5, 6] = np.inf
    bad = tmp / "nan_map.npy"
    np.save(bad, pred)
    return Expect(auc_args(bad, lab, msk), file=bad, words=("2 NaN or infinite values", "replace them", "0"))


@case("kit:nan-or-inf-control")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    ctl = np.load(mp).astype(np.float32) / 40
    ctl[0, 0] = -np.inf
    bad = tmp / "inf_control.npy"
    np.save(bad, ctl)
    return Expect(auc_args(mp, lab, msk, "--control", bad), file=bad, words=("NaN or infinite", "replace them"))


@case("kit:control-is-map")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--control", mp), file=mp,
                  words=("is the map itself", "reverse-depth map as the control"))


@case("kit:control-is-map-through-a-link")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    link = tmp / "linked_control.npy"
    os.symlink(mp, link)
    return Expect(auc_args(mp, lab, msk, "--control", link), file=link, words=("is the map itself",))


@case("kit:cannot-read-tiff")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    bad = tmp / "broken_map.tif"
    bad.write_bytes(b"II*\x00" + b"\x07" * 64)
    # kit: "cannot read MAP.tif: ..."; ours puts the path first: "MAP.tif: its image data cannot be read; ..."
    return Expect(auc_args(bad, lab, msk), file=bad, words=("cannot be read",))


@case("kit:expected-a-2d-map")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    stack = tmp / "layer_stack.npy"
    np.save(stack, np.stack([np.load(mp)] * 3))
    return Expect(auc_args(stack, lab, msk), file=stack, words=("expected a 2D map", "(3, 60, 80)"))


@case("kit:missing-npy")  # kit: FileNotFoundError traceback, exit 1; ours (DESIGN Conventions): exit 2, one line
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(tmp / "absent_map.npy", lab, msk), file=tmp / "absent_map.npy", words=("no such file",))


@case("kit:cannot-open-zarr")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    notzarr = tmp / "labels_folder"
    notzarr.mkdir()
    (notzarr / "readme.txt").write_text("not a store")
    return Expect(auc_args(mp, notzarr, msk), file=notzarr, words=("cannot open", "as zarr"))


@case("kit:no-level")
def _(tmp):
    mp, lab, msk = kit_segment(tmp, levels=("0", "1"))
    return Expect(auc_args(mp, lab, msk), file=lab, words=("no level '2'", "levels", "'0'", "'1'"))


@case("kit:labels-and-mask-differ-in-shape")
def _(tmp):
    mp, lab, msk = kit_segment(tmp, mask_shape=(60, 81))
    return Expect(auc_args(mp, lab, msk), file=msk,
                  words=("labels (60, 80)", "mask (60, 81)", "differ in shape at level 2"))


@case("kit:scale-differs-between-axes")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    squashed = tmp / "squashed_map.npy"
    np.save(squashed, np.load(mp)[:, ::2])
    return Expect(auc_args(squashed, lab, msk), file=squashed,
                  words=("differ in scale between axes", "not the same grid"))


@case("kit:crop-without-surface-shape")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--crop", 0, 60, 0, 80),
                  words=("a cropped map needs the full surface shape", "surface"))


@case("kit:crop-outside-surface")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--crop", 0, 60, 40, 120, "--surface-shape", 60, 80),
                  words=("crop [0, 60, 40, 120] is outside the 60 x 80 surface",))


@case("kit:crop-does-not-match-map")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--crop", 0, 30, 0, 40, "--surface-shape", 120, 160), file=mp,
                  words=("map shape (60, 80) does not match the window 30 x 40",))


@case("kit:control-shape-differs")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    ctl = tmp / "other_control.npy"
    np.save(ctl, np.zeros((60, 81), np.uint8) + 3)
    return Expect(auc_args(mp, lab, msk, "--control", ctl), file=ctl,
                  words=("control shape (60, 81) differs from the map's (60, 80)",))


@case("kit:compared-map-shape-differs")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    other = tmp / "other_map.npy"
    np.save(other, np.zeros((59, 80), np.uint8) + 3)
    return Expect(auc_args(mp, lab, msk, "--compare", other), file=other,
                  words=("compared map shape (59, 80) differs from the map's (60, 80)",))


@case("kit:inner-leaves-nothing")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--inner", 30), words=("inner 30 leaves nothing of a (60, 80) map",))


@case("kit:too-few-bootstrap-draws")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--bootstrap", 5), words=("use at least 20 bootstrap draws",))


@case("kit:block-under-1-px")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    return Expect(auc_args(mp, lab, msk, "--bootstrap", 20, "--block-px", 0),
                  words=("block size must be at least 1 px",))


@case("kit:no-supervised-pixels")
def _(tmp):
    mp, lab, msk = kit_segment(tmp, mask=np.zeros((60, 80), bool))
    return Expect(auc_args(mp, lab, msk, "--bootstrap", 20), words=("no supervised pixels to resample",))


@case("kit:mask-holds-one-class")
def _(tmp):
    mp, lab, msk = kit_segment(tmp, ink=np.zeros((60, 80), bool))
    return Expect(auc_args(mp, lab, msk, "--bootstrap", 20),
                  words=("the mask holds only one class", "no AUC to resample"))


@case("kit:no-experiment")
def _(tmp):
    mp, lab, msk = kit_segment(tmp)
    root = tmp / "experiments"
    root.mkdir()
    return Expect(auc_args(mp, lab, msk, "--slug", "never-started", "--root", root),
                  file=root / "never-started" / "run.json", words=("no experiment at",))


@case("kit:no-auc-exit-0")
def _(tmp):
    mp, lab, msk = kit_segment(tmp, ink=np.zeros((60, 80), bool))

    def check(r):
        assert r["forward"]["auc"] is None and r["forward"]["ink_px"] == 0 and r["forward"]["background_px"] > 0
        assert "no ink pixel" in r["notes"]["forward.auc"]

    # zarr-python writes no chunk equal to the fill value: the all-zero labels' one chunk is absent
    return Expect(auc_args(mp, lab, msk, "--json"), code=0, check=check,
                  warn=("inklabels.zarr/2: 1 of 1 chunks absent, read as the fill value 0",))


# ---------------------------------------------------------------------------------------------
# ScrollGT: target (score), columns (score-columns), fibers (score-fibers), fibers-aggregate,
# check, placement

@case("scrollgt:target-non-scoring")
def _(tmp):
    folder, pred, _ = ink_target(tmp, scoring=NON_SCORING)
    return Expect(["target", pred, folder], file=folder.name,
                  words=("is marked non-scoring", "Marked non-scoring 2026-08-14", "--allow-non-scoring"))


@case("scrollgt:target-non-scoring-override")
def _(tmp):
    folder, pred, _ = ink_target(tmp, scoring=NON_SCORING)

    def check(r):
        assert r["scoring_enabled"] is False and r["metrics"]["roc_auc"] is not None

    return Expect(["target", pred, folder, "--allow-non-scoring", "--json"], code=0, check=check)


@case("scrollgt:target-failing-placement")
def _(tmp):
    folder, pred, _ = ink_target(tmp, registration=FAILING)
    return Expect(["target", pred, folder], file=folder.name,
                  words=("fails its placement check", "53.3", "48.0 px gate", "--allow-failing-placement"))


@case("scrollgt:target-failing-placement-override")
def _(tmp):
    folder, pred, _ = ink_target(tmp, registration=FAILING)

    def check(r):
        assert r["registration"]["placement_passed"] is False and r["metrics"]["roc_auc"] is not None

    return Expect(["target", pred, folder, "--allow-failing-placement", "--json"], code=0, check=check)


@case("scrollgt:target-overrides-are-independent")
def _(tmp):
    folder, pred, _ = ink_target(tmp, scoring=NON_SCORING, registration=FAILING)
    return Expect(["target", pred, folder, "--allow-non-scoring"], file=folder.name,
                  words=("fails its placement check", "--allow-failing-placement"))


@case("scrollgt:target-prediction-not-over-the-region")
def _(tmp):
    folder, _, ink = ink_target(tmp)
    small = tmp / "small_pred.png"
    write_png(small, reading_map(ink)[:40])
    return Expect(["target", small, folder], file=small,
                  words=("(40, 64)", "differs from the target's (48, 64)", "--origin"))


@case("scrollgt:target-prediction-not-a-probability-map")
def _(tmp):
    folder, _, ink = ink_target(tmp)
    logits = tmp / "logits_pred.npy"
    np.save(logits, (reading_map(ink, dtype=np.float32) * 4 - 2).astype(np.float32))
    return Expect(["target", logits, folder], file=logits, words=("outside [0, 1]",))


@case("scrollgt:target-degenerate-is-null-exit-0")
def _(tmp):
    folder, ink, _ = make_target(tmp / "scroll1_empty", ink_rate=0.0)
    pred = tmp / "pred.png"
    write_png(pred, reading_map(ink))

    def check(r):
        assert r["metrics"]["roc_auc"] is None and "metrics.roc_auc" in r["notes"]

    return Expect(["target", pred, folder, "--json"], code=0, check=check)


@case("scrollgt:columns-prediction-off-the-grid")
def _(tmp):
    from tests.columns.helpers import GRID, make_column_target, reading_prediction

    folder, _ = make_column_target(tmp / "pherc_toy_columns")
    pred = tmp / "shifted_columns.npy"
    np.save(pred, reading_prediction())
    return Expect(["columns", pred, folder, "--origin", 10, 10], file=pred,
                  words=(f"{GRID}", "at origin (10, 10)", "runs past"))


@case("scrollgt:fibers-labels-file-missing")  # ScrollGT: FileNotFoundError on a cold clone; ours: exit 2, one line
def _(tmp):
    t = fiber_target(tmp)
    absent = tmp / "labels.npy"
    return Expect(["fibers", absent, t], file=absent, words=("no such file", "--floor connected_components"))


@case("scrollgt:fibers-no-labels-and-no-floor")
def _(tmp):
    t = fiber_target(tmp)
    return Expect(["score-fibers", t], file=t, words=("no LABELS given", "--floor connected_components"))


@case("scrollgt:fibers-labels-not-shaped-like-the-cube")
def _(tmp):
    t = fiber_target(tmp)
    lab = tmp / "short_labels.npy"
    np.save(lab, np.ones((10, 12, 23), np.int32))
    return Expect(["fibers", lab, t], file=lab, words=("(10, 12, 23)", "differs from the cube's shape (10, 12, 24)"))


@case("scrollgt:fibers-labels-not-integer-ids")
def _(tmp):
    t = fiber_target(tmp)
    lab = tmp / "prob_labels.npy"
    np.save(lab, np.full(FIBER_SHAPE, 0.7, np.float32))
    return Expect(["fibers", lab, t], file=lab, words=("float32", "integer instance ids"))


@case("scrollgt:fibers-aggregate-across-size-classes")
def _(tmp):
    a = fiber_card(tmp / "card_256.json", 256)
    b = fiber_card(tmp / "card_512.json", 512)
    return Expect(["fibers-aggregate", a, b],
                  words=("refusing to aggregate across size classes [256, 512]", "length statistic",
                         "each size class separately"))


@case("scrollgt:fibers-aggregate-across-tolerances")  # ours: the card's tolerance is part of its ERL
def _(tmp):
    a = fiber_card(tmp / "card_t2.json", 256, tolerance=2.0)
    b = fiber_card(tmp / "card_t3.json", 256, tolerance=3.0)
    return Expect(["fibers-aggregate", a, b], words=("refusing to aggregate across tolerances",))


@case("scrollgt:check-window-over-the-cap")
def _(tmp):
    return Expect(["check", "--window-px", 128, "--scan-um", 8.0], code=3,
                  words=("ML window 128 px", "1.024 mm", "exceeds the 0.5 mm cap"))


@case("scrollgt:check-train-predict-overlap")
def _(tmp):
    regions = tmp / "regions.json"
    regions.write_text(json.dumps({"train_regions": [{"y0": 0, "x0": 0, "h": 100, "w": 100},
                                                     {"y0": 500, "x0": 500, "h": 10, "w": 10}],
                                   "predict_region": {"y0": 50, "x0": 50, "h": 100, "w": 100}}))
    return Expect(["check", "--window-px", 64, "--scan-um", 8.0, "--regions-json", regions], code=3,
                  words=("training region 0", "overlaps the predicted region", "zero train/predict overlap"))


@case("scrollgt:placement-probe-over-the-gate-exit-0")  # a probe reports FAILED; the refusal is `target`'s
def _(tmp):
    folder, ink, _ = make_target(tmp / "scroll1_shifted", shape=(64, 64), ink_rate=0.3)
    pred = tmp / "shifted_pred.png"
    write_png(pred, np.roll(reading_map(ink), 6, axis=1))

    def check(r):
        assert r["passed"] is False and r["offset_px"] > 2

    return Expect(["placement", pred, folder, "--gate", 2, "--radius", 12, "--tile-radius", 8, "--json"],
                  code=0, check=check)


# ---------------------------------------------------------------------------------------------
# curvicost: scope and refusals (2D and 3D binary masks, nothing else), voxel size, resolution,
# and what the runnable peer (curvicost 0.3.1) refuses besides

@case("curvicost:probability-map")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    prob = tmp / "prob_pred.npy"
    np.save(prob, tube2d().astype(np.float32) * 0.8)
    return Expect(["curve", prob, "--gt", gt], file=prob, words=("probability map", "threshold it first"))


@case("curvicost:probability-map-as-reference")
def _(tmp):
    gt = tmp / "prob_gt.npy"
    np.save(gt, tube2d().astype(np.float64) * 0.6)
    pred = tmp / "pred.npy"
    np.save(pred, tube2d())
    return Expect(["curve", pred, "--gt", gt], file=gt, words=("probability map", "threshold"))


@case("curvicost:multi-label-image")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    multi = tube2d().astype(np.uint8)
    multi[:20][multi[:20] > 0] = 2
    ml = tmp / "multilabel_pred.npy"
    np.save(ml, multi)
    return Expect(["curve", ml, "--gt", gt], file=ml,
                  words=("3 distinct values", "Multi-label images are out of scope", "extract one structure"))


@case("curvicost:not-2d-or-3d-4d")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    vol4 = tmp / "four_d_pred.npy"
    np.save(vol4, np.stack([np.stack([tube2d()] * 2)] * 2))
    return Expect(["curve", vol4, "--gt", gt], file=vol4, words=("2D or 3D", "(2, 2, 40, 40)"), absent=("1D",))


@case("curvicost:not-2d-or-3d-1d")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    line = tmp / "one_d_pred.npy"
    np.save(line, tube2d()[20])
    return Expect(["curve", line, "--gt", gt], file=line, words=("2D or 3D", "(40,)"))


@case("curvicost:shape-mismatch")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    wide = tmp / "wide_pred.npy"
    np.save(wide, tube2d((40, 44)))
    return Expect(["curve", wide, "--gt", gt], file=wide, words=("(40, 44)", "(40, 40)"))


@case("curvicost:empty-reference")
def _(tmp):
    gt = tmp / "empty_gt.npy"
    np.save(gt, np.zeros((40, 40), np.uint8))
    pred = tmp / "pred.npy"
    np.save(pred, tube2d())
    return Expect(["curve", pred, "--gt", gt], file=gt, words=("reference mask is empty",))


@case("curvicost:unsupported-format")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    odd = tmp / "pred.xyz"
    odd.write_bytes(b"\x00\x01" * 8)
    return Expect(["curve", odd, "--gt", gt], file=odd, words=("format",))


@case("curvicost:anisotropic-voxels-warn-exit-0")
def _(tmp):
    import nibabel

    from tests.curvilinear.helpers import disk_line

    m = np.zeros((16, 24, 24), bool)
    disk_line(m, (2, 12, 12), (13, 12, 12), 2.0)
    disk_line(m, (8, 12, 12), (8, 20, 20), 2.0)
    aff = np.diag([1.0, 1.0, 2.0, 1.0])
    gt = tmp / "aniso_gt.nii.gz"
    nibabel.save(nibabel.Nifti1Image(m.astype(np.uint8), aff), str(gt))

    def check(r):
        assert r["voxel_size"] == [1.0, 1.0, 2.0] and r["spacing_source"] == "given"

    # segscore applies a NIfTI's voxel size (tests/curvilinear/test_spacing.py); curvicost's warning
    # stands where the lengths stay in voxels: --spacing 1 1 1 given over an anisotropic header
    # (--no-all-metrics: the 3D betti_matching's own warning is not this row's)
    return Expect(["curve", gt, "--gt", gt, "--prune-px", 5, "--spacing", 1, 1, 1, "--no-all-metrics", "--json"],
                  code=0, warn=("anisotropic voxels", "resample to isotropic"), check=check)


@case("curvicost:prune-px-outside-1-4-radii-warn-exit-0")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())

    def check(r):
        assert r["prune_radii"] > 4

    return Expect(["curve", gt, "--gt", gt, "--prune-px", 40, "--json"], code=0,
                  warn=("--prune-px 40", "outside 1-4"), check=check)


@case("curvicost:perturb-empty-mask")
def _(tmp):
    empty = tmp / "empty_mask.npy"
    np.save(empty, np.zeros((20, 20), bool))
    return Expect(["perturb", empty, "--operator", "break", "--severity", 0.1, "-o", tmp / "out.npy"], file=empty,
                  words=("empty",))


@case("curvicost:perturb-unknown-operator")
def _(tmp):
    gt = tmp / "gt.npy"
    np.save(gt, tube2d())
    return Expect(["perturb", gt, "--operator", "shatter", "--severity", 0.1, "-o", tmp / "out.npy"],
                  words=("--operator", "invalid choice", "shatter"))


# ---------------------------------------------------------------------------------------------
# spacr.scorecard: manifest and digest rules, and the same-shape rule of the pair

@case("spacr:manifest-without-name")
def _(tmp):
    m, _ = holdout_set(tmp, drop=("name",))
    return Expect(["holdout", m, "--verify"], file=m, words=("declares no name",))


@case("spacr:manifest-without-version")
def _(tmp):
    m, _ = holdout_set(tmp, drop=("version",))
    return Expect(["holdout", m, "--verify"], file=m, words=("declares no version", "compared against anything"))


@case("spacr:manifest-without-fields")
def _(tmp):
    m, _ = holdout_set(tmp, drop=("fields",))
    return Expect(["holdout", m, "--verify"], file=m, words=("declares no fields",))


@case("spacr:manifest-path-not-relative")
def _(tmp):
    m, _ = holdout_set(tmp, truth_path=str(tmp / "set" / "truth" / "a.tif"))
    return Expect(["holdout", m, "--verify"], file=m, words=("is absolute", "relative to the manifest's folder"))


@case("spacr:manifest-path-leaves-the-set")
def _(tmp):
    m, _ = holdout_set(tmp, truth_path="../elsewhere/a.tif")
    return Expect(["holdout", m, "--verify"], file=m, words=("leads out of the manifest's folder",))


@case("spacr:verify-truth-mask-missing")
def _(tmp):
    m, _ = holdout_set(tmp, missing_truth=True)
    return Expect(["holdout", m, "--verify"], code=3, file="truth/a.tif", words=("missing truth mask",))


@case("spacr:verify-no-digest-is-a-finding")
def _(tmp):
    m, _ = holdout_set(tmp, digest=False)
    return Expect(["holdout", m, "--verify"], code=3, file="truth/a.tif", words=("no digest",))


@case("spacr:verify-digest-mismatch")
def _(tmp):
    m, _ = holdout_set(tmp, corrupt=True)
    return Expect(["holdout", m, "--verify"], code=3, file="truth/a.tif", words=("does not match its digest",))


@case("spacr:score-without-digest-warns-exit-0")
def _(tmp):
    m, preds = holdout_set(tmp, digest=False, predictions=True)

    def check(r):
        assert r["digest_problems"] == ["no digest published for truth/a.tif"]
        assert r["holdout"] == "toy_holdout" and r["holdout_version"] == "1.0"

    return Expect(["holdout", m, "--predictions", preds, "--json"], code=0,
                  warn=("warning", "no digest published for truth/a.tif"), check=check)


@case("spacr:score-truth-mask-missing")
def _(tmp):
    m, preds = holdout_set(tmp, missing_truth=True, predictions=True)
    return Expect(["holdout", m, "--predictions", preds], file=tmp / "set" / "truth" / "a.tif",
                  words=("truth mask", "missing"))


@case("spacr:score-prediction-missing")
def _(tmp):
    m, preds = holdout_set(tmp, predictions=True)
    (preds / "a.npy").unlink()
    return Expect(["holdout", m, "--predictions", preds], file=preds / "a.tif",
                  words=("no prediction for truth truth/a.tif",))


@case("spacr:pred-not-the-same-shape-as-truth")
def _(tmp):
    import tifffile

    t, p = synthetic_pair(shape=(48, 48), n=6, seed=3, r=(3, 6))
    tp = tmp / "truth.tif"
    tifffile.imwrite(tp, t)
    pp = tmp / "cropped_pred.npy"
    np.save(pp, p[:, :40])
    return Expect(["objects", tp, pp], file=pp, words=("shape", "(48, 40)", "(48, 48)"))


# ---------------------------------------------------------------------------------------------
# DESIGN.md "Conventions": a missing file is exit 2, one line naming it (never a traceback)

@case("design:missing-file-target")
def _(tmp):
    folder, pred, _ = ink_target(tmp)
    return Expect(["target", tmp / "absent.png", folder], file=tmp / "absent.png", words=("no such file",))


@case("design:missing-file-columns-target")
def _(tmp):
    pred = tmp / "p.npy"
    np.save(pred, np.zeros((4, 4), np.float32))
    return Expect(["columns", pred, tmp / "no_columns_here"], file=tmp / "no_columns_here", words=("no such",))


@case("design:missing-file-placement")
def _(tmp):
    folder, pred, _ = ink_target(tmp)
    return Expect(["placement", tmp / "absent.png", folder], file=tmp / "absent.png", words=("no such file",))


@case("design:missing-file-curve-reference")
def _(tmp):
    pred = tmp / "pred.npy"
    np.save(pred, tube2d())
    return Expect(["curve", pred, "--gt", tmp / "absent_gt.png"], file=tmp / "absent_gt.png", words=("no such file",))


@case("design:missing-file-perturb")
def _(tmp):
    return Expect(["perturb", tmp / "absent.png", "--operator", "break", "--severity", 0.1, "-o", tmp / "o.png"],
                  file=tmp / "absent.png", words=("no such file",))


@case("design:missing-file-objects")
def _(tmp):
    import tifffile

    tp = tmp / "truth.tif"
    tifffile.imwrite(tp, np.zeros((8, 8), np.uint16))
    return Expect(["objects", tp, tmp / "absent_pred.tif"], file=tmp / "absent_pred.tif", words=("no such file",))


@case("design:missing-file-holdout-manifest")
def _(tmp):
    return Expect(["holdout", tmp / "absent.json", "--verify"], file=tmp / "absent.json", words=("no such manifest",))


@case("design:missing-file-fibers-target")
def _(tmp):
    return Expect(["fibers", "--floor", "connected_components", tmp / "absent_cube"], file=tmp / "absent_cube",
                  words=("no such target folder",))


@case("design:missing-file-fibers-aggregate-card")
def _(tmp):
    return Expect(["fibers-aggregate", tmp / "absent_card.json"], file=tmp / "absent_card.json",
                  words=("no such file",))


@case("design:missing-file-check-regions")
def _(tmp):
    return Expect(["check", "--window-px", 64, "--scan-um", 8, "--regions-json", tmp / "absent_regions.json"],
                  file=tmp / "absent_regions.json", words=("no such file",))


# ---------------------------------------------------------------------------------------------
# the runner


def _names(file) -> list[str]:
    """Ways a message may name ``file``: the path as given, or its name."""
    s = os.fspath(file)
    return [s, os.path.basename(s.rstrip("/"))]


@pytest.mark.parametrize("build", CASES)
def test_refusal_matrix(build, tmp_path, cli):
    exp = build(tmp_path)
    code, out, err = cli(*exp.args)
    command = str(exp.args[0])  # as typed: an alias (score-fibers) names itself, as its usage errors do
    assert code == exp.code, (code, out, err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    if exp.code == 0:
        if exp.warn:
            assert len(lines) == 1, err
            assert lines[0].startswith(f"segscore {command}: warning: "), lines[0]
            for w in exp.warn:
                assert w.lower() in lines[0].lower(), (w, lines[0])
        else:
            assert err == "", err
        if exp.check is not None:
            exp.check(json.loads(out))
        return
    if exp.code == 2:
        assert out == "", out
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith(f"segscore {command}: "), line
    if exp.file is not None:
        assert any(n in line for n in _names(exp.file)), (os.fspath(exp.file), line)
    for w in exp.words:
        assert w.lower() in line.lower(), (w, line)
    for w in exp.absent:
        assert w not in line, (w, line)


@pytest.mark.parametrize("dist", [pytest.param("numpy", id="kit:numpy-is-required"),
                                  pytest.param("tifffile", id="kit:tifffile-is-required"),
                                  pytest.param("zarr", id="kit:zarr-is-required")])
def test_dependency_rows_do_not_apply(dist):
    """kit's "X is required for python -m kit auc" rows cannot happen here: numpy, tifffile and
    zarr are hard dependencies of the package (DESIGN.md, "Conventions")."""
    import re
    from importlib.metadata import requires

    hard = [r for r in (requires("segscore") or []) if "extra ==" not in r]
    assert any(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].strip().lower() == dist for r in hard), hard
