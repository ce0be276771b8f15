"""Fiber metrics against the slow reference on synthetic cubes, and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.fibers.score import score_labels
from segscore.fibers.target import load_target
from tests.fibers.helpers import fiber_list, random_fibers, rasterize_reference, score_reference, scored, write_target

ROUND = {"erl": 2, "erl_merge_penalized": 2, "coverage": 4, "precision": 4, "gt_length": 1}


def _check(row, ref):
    for key, value in ref.items():
        if value is None:
            assert row[key] is None, key
        elif key in ROUND:
            assert row[key] == pytest.approx(value, abs=0.51 * 10 ** -ROUND[key]), key
        else:
            assert row[key] == value, key


def _ref_fibers(target):
    import numpy as np

    with np.load(f"{target.path}/skeleton.npz", allow_pickle=False) as z:
        return scored(fiber_list(z["coords"], z["edges"], z["fiber_offsets"], z["edge_offsets"]), target.shape)


@pytest.mark.parametrize("seed", range(12))
def test_random_cubes_match_reference(tmp_path, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(8, 16, 3))
    fibers = random_fibers(rng, shape, int(rng.integers(1, 8)))
    mask = rng.random(shape) < 0.2
    target = load_target(write_target(tmp_path / "t", fibers, mask))
    ref_fibers = _ref_fibers(target)
    truth = rasterize_reference(ref_fibers, shape)
    candidates = {
        "random": ((rng.random(shape) < 0.25) * rng.integers(1, 6, shape)).astype(np.int32),
        "truth": truth,
        "truth_split": np.where(truth > 0, truth * 2 + (np.indices(shape)[2] > shape[2] // 2), 0),
        "truth_merged": np.where(truth > 0, 1 + (truth > 2), 0).astype(np.uint8),
        "sparse": ((rng.random(shape) < 0.02) * rng.integers(1, 100, shape)).astype(np.int64),
        "empty": np.zeros(shape, np.int16),
    }
    for tol in (0.0, 1.0, 2.0):
        for name, labels in candidates.items():
            _check(score_labels(target, labels, tolerance=tol), score_reference(ref_fibers, labels, tol))


def _line_target(tmp_path, fibers, shape=(8, 8, 24)):
    return load_target(write_target(tmp_path / "line", fibers, np.zeros(shape, bool)))


def test_straight_fiber_worked_example(tmp_path):
    # one fiber along x from 2 to 20 (length 18) at z=y=4
    t = _line_target(tmp_path, [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))])
    lab = np.zeros(t.shape, np.int32)
    lab[4, 4, :] = 7
    row = score_labels(t, lab)
    # 36 samples of 0.5 (x = 2 .. 19.5): the end node itself is not sampled
    assert row["gt_length"] == 18.0 and row["erl"] == 18.0 and row["erl_merge_penalized"] == 18.0
    # sampled voxels x = 2 .. 20 (19.5 rounds half to even, to 20); within 2 of them: x = 0 .. 22 of 24
    assert (row["splits"], row["merges"], row["coverage"], row["precision"]) == (0, 0, 1.0, round(23 / 24, 4))
    # cut it in two instances at x = 11: runs 9 (x 2..10.5, samples to 10.5 round to <= 10) and 9
    lab[4, 4, 11:] = 8
    row = score_labels(t, lab)
    assert row["splits"] == 1 and row["n_pred_instances"] == 2
    # a gap of background wider than the tolerance cuts too and is not covered
    lab[...] = 0
    lab[4, 4, :8] = 7
    lab[4, 4, 14:] = 7
    row = score_labels(t, lab)
    assert row["splits"] == 1 and row["merges"] == 0 and row["coverage"] < 1


def test_merge_penalty_and_denominator(tmp_path):
    fibers = [(np.array([[2, 2, 2], [2, 2, 12]], float), np.array([[0, 1]])),
              (np.array([[6, 6, 2], [6, 6, 6]], float), np.array([[0, 1]]))]
    t = _line_target(tmp_path, fibers, shape=(9, 9, 16))
    lab = np.zeros(t.shape, np.int32)
    lab[2, 2, :] = 1
    lab[6, 6, :] = 1  # one instance over both fibers
    row = score_labels(t, lab)
    assert row["merges"] == 1 and row["merged_instances"] == 1
    assert row["erl"] == pytest.approx((100 + 16) / 14, abs=0.005)
    assert row["erl_merge_penalized"] == 0.0
    lab[6, 6, :] = 2
    row = score_labels(t, lab)
    assert (row["merges"], row["erl_merge_penalized"]) == (0, row["erl"])


def test_tolerance_edges(tmp_path):
    t = _line_target(tmp_path, [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))], shape=(9, 9, 24))
    for dz, dy, covered in [(2, 0, True), (0, 2, True), (1, 1, True), (2, 1, False), (3, 0, False)]:
        lab = np.zeros(t.shape, np.uint8)
        lab[4 + dz, 4 + dy, :] = 5
        row = score_labels(t, lab)
        assert (row["coverage"] == 1.0) is covered, (dz, dy)
        assert (row["precision"] > 0) is covered, (dz, dy)
    # equidistant instances on either side: scipy's tie-break (smaller y wins over smaller z)
    lab = np.zeros(t.shape, np.uint8)
    lab[4, 3, :] = 1
    lab[3, 4, :] = 2
    lab[5, 4, 10:] = 3
    row = score_labels(t, lab)
    assert row["splits"] == 0 and row["n_pred_instances"] == 3


def test_out_of_bounds_nodes_are_skipped_not_cut(tmp_path):
    # the fiber leaves the cube (x < 0) and comes back: one run, and the outside part adds no length
    c = np.array([[4, 4, 6], [4, 4, -4], [4, 5, -4], [4, 5, 6]], float)
    t = _line_target(tmp_path, [(c, np.array([[0, 1], [1, 2], [2, 3]]))])
    lab = np.zeros(t.shape, np.int32)
    lab[4, 4:6, :] = 3
    row = score_labels(t, lab)
    # inside: x = 6 .. -0.5 on the way out (-0.5 rounds to 0) and -0.5 .. 5.5 on the way back
    assert row["splits"] == 0 and row["gt_length"] == 7.0 + 6.5 and row["coverage"] == 1.0


def test_fibers_with_fewer_than_two_inside_nodes_are_not_scored(tmp_path):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]])),
              (np.array([[4, 4, 2], [4, 4, 40]], float), np.array([[0, 1]])),
              (np.array([[-5, 4, 2], [-4, 4, 40]], float), np.array([[0, 1]]))]
    t = _line_target(tmp_path, fibers)
    assert t.n_fibers == 1 and t.n_fibers_total == 3


def test_degenerate_metrics_are_null_with_a_note(tmp_path):
    t = _line_target(tmp_path, [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))])
    row = score_labels(t, np.zeros(t.shape, np.int32))
    assert row["erl"] is None and row["erl_merge_penalized"] is None and row["precision"] is None
    assert row["coverage"] == 0.0 and set(row["notes"]) == {"erl", "erl_merge_penalized", "precision"}


@pytest.mark.parametrize("bad, msg", [
    (np.zeros((8, 8, 23), np.int32), "shape"),
    (np.zeros((8, 8, 24), np.float32), "float32"),
    (np.zeros((8, 8, 24), bool), "bool"),
    (np.full((8, 8, 24), -1, np.int32), "negative"),
])
def test_bad_labels_refused(tmp_path, bad, msg):
    t = _line_target(tmp_path, [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))])
    with pytest.raises(ScoreError, match=msg):
        score_labels(t, bad)


def test_aggregate_accepts_scrollgt_cards_without_a_tolerance():
    from segscore.errors import ScoreError
    from segscore.fibers.card import aggregate_fiber_scores

    def card(erl, size=256, tol=None):
        c = {"size_class": size, "metrics": {"erl": erl, "erl_merge_penalized": erl}}
        if tol is not None:
            c["tolerance"] = tol
        return c

    out = aggregate_fiber_scores([card(10.0), card(20.0), card(None)])
    assert out["erl_mean"] == 10.0 and out["tolerance"] is None and out["n_null_erl"] == 1
    assert aggregate_fiber_scores([card(10.0, tol=2.0), card(20.0)])["tolerance"] == 2.0
    with pytest.raises(ScoreError, match="across tolerances"):
        aggregate_fiber_scores([card(1.0, tol=2.0), card(1.0, tol=3.0)])
    with pytest.raises(ScoreError, match="size class"):
        aggregate_fiber_scores([card(1.0), card(1.0, size=512)])
    with pytest.raises(ScoreError, match=r"card 1: size_class is None"):
        aggregate_fiber_scores([card(1.0), {"metrics": {"erl": 1.0}}])


@pytest.mark.parametrize("field, value, needle", [
    ("tolerance", 1e9, "tolerance is 1000000000.0; it should be a number from 0 to 64"),
    ("tolerance", "2", "tolerance is '2'"), ("tolerance", -1, "from 0 to 64"),
    ("size_class", 2.5, "size_class is 2.5; it should be a whole number"),
    ("ground_truth", [1], "ground_truth is [1]; it should be an object"),
    ("shape", [8, 8], "shape is [8, 8]; it should be a list of 3 items"),
])
def test_a_fiber_meta_field_of_the_wrong_type_is_named(tmp_path, field, value, needle):
    import json

    from segscore.errors import ScoreError
    from segscore.fibers.target import load_target
    from tests.fibers.helpers import random_fibers, write_target

    rng = np.random.default_rng(0)
    shape = (12, 12, 12)
    folder = write_target(tmp_path / "t", random_fibers(rng, shape, 3), np.ones(shape, bool))
    meta = json.loads((folder / "meta.json").read_text())
    meta[field] = value
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ScoreError, match="meta.json: ") as err:
        load_target(folder)
    assert needle in str(err.value) and "\n" not in str(err.value)
