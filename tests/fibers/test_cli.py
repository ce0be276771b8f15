"""`segscore fibers` / `score-fibers` / `fibers-aggregate` through the CLI, refusals included."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.fibers.helpers import write_target

SHAPE = (10, 12, 24)
PUBLISHED = {"erl": 5.0, "erl_merge_penalized": 4.0, "coverage": 0.5, "precision": 0.25, "splits": 1,
             "merges": 0, "merged_instances": 0, "n_gt_fibers": 2, "n_pred_instances": 3, "gt_length": 30.0,
             "pred_length": 100.0, "tolerance": 2.0}


@pytest.fixture
def target(tmp_path):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]])),
              (np.array([[6, 9, 3], [6, 9, 15], [2, 9, 18]], float), np.array([[0, 1], [1, 2]]))]
    mask = np.zeros(SHAPE, bool)
    mask[4, 3:6, :] = True
    mask[6, 9, 5:] = True
    floors = {"oracle": dict(PUBLISHED, erl=9.0), "floor_connected_components": dict(PUBLISHED),
              "tracer_strict_relink": dict(PUBLISHED)}
    return write_target(tmp_path / "fibers_tiny_10", fibers, mask, floors=floors)


@pytest.fixture
def labels(tmp_path):
    lab = np.zeros(SHAPE, np.int32)
    lab[4, 4, :] = 1
    lab[6, 9, :] = 2
    p = tmp_path / "labels.npy"
    np.save(p, lab)
    return p


def test_score_npy_json(cli, target, labels):
    code, out, err = cli("fibers", labels, target, "--json")
    assert code == 0, err
    card = json.loads(out)
    assert list(card) == ["target", "prediction", "split", "tolerance", "size_class", "class_oracle_erl",
                          "metrics", "floors", "oracle", "floors_source", "below_baseline", "cannot_rank", "notes",
                          "warnings"]
    assert card["notes"] == {} and "notes" not in card["metrics"]
    assert card["prediction"] == "labels.npy" and card["floors_source"] == "published"
    assert set(card["floors"]) == {"floor_connected_components"}  # ScrollGT's card: floors only
    assert card["oracle"] == dict(PUBLISHED, erl=9.0)  # the oracle beside them
    assert card["class_oracle_erl"] == 9.0
    assert card["metrics"]["splits"] == 0 and card["metrics"]["merges"] == 0
    assert card["below_baseline"] is False


def test_alias_text_and_json_out(cli, target, labels, tmp_path):
    out_file = tmp_path / "card.json"
    code, out, err = cli("score-fibers", labels, target, "--json-out", out_file)
    assert code == 0, err
    assert "erl_pen" in out and "tolerance 2" in out and "floor_connected_components" in out
    assert json.loads(out_file.read_text())["metrics"]["n_gt_fibers"] == 2


def test_tif_and_zarr_labels(cli, target, labels, tmp_path):
    import tifffile
    import zarr

    lab = np.load(labels)
    tifffile.imwrite(tmp_path / "l.tif", lab)
    z = zarr.create_array(str(tmp_path / "l.zarr"), shape=lab.shape, dtype=lab.dtype, chunks=(5, 6, 8))
    z[:] = lab
    ref = json.loads(cli("fibers", labels, target, "--json")[1])["metrics"]
    for p in (tmp_path / "l.tif", tmp_path / "l.zarr"):
        code, out, err = cli("fibers", p, target, "--json")
        assert code == 0, err
        assert json.loads(out)["metrics"] == ref


def test_floor_recompute(cli, target):
    code, out, err = cli("fibers", "--floor", "connected_components", target, "--recompute-floors", "--json")
    assert code == 0, err
    card = json.loads(out)
    assert card["floors_source"] == "recomputed"
    assert list(card["floors"]) == ["floor_single_instance", "floor_connected_components",
                                    "floor_voxel_instances", "floor_random_instances"]
    assert card["metrics"] == card["floors"]["floor_connected_components"]
    assert card["oracle"]["merges"] == 0 and card["oracle"]["coverage"] == 1.0
    assert card["class_oracle_erl"] == 9.0  # published; the recomputed oracle row is beside the floors
    code, out, _ = cli("fibers", "--floor", "oracle", target, "--recompute-floors", "--json")
    assert json.loads(out)["metrics"] == json.loads(out)["oracle"]
    code, out, _ = cli("fibers", "--floor", "connected_components", target, "--recompute-floors")
    assert code == 0 and any(line.startswith("oracle ") for line in out.splitlines())
    code, out2, _ = cli("fibers", "--floor", "connected_components", target, "--json")
    assert json.loads(out2)["metrics"] == card["metrics"]  # scored on the fly == recomputed row


def test_aggregate(cli, target, labels, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    cli("fibers", labels, target, "--json-out", a)
    cli("fibers", "--floor", "single_instance", target, "--json-out", b)
    code, out, err = cli("fibers-aggregate", a, b, "--json")
    assert code == 0, err
    agg = json.loads(out)
    ca, cb = json.loads(a.read_text()), json.loads(b.read_text())
    assert agg["n"] == 2 and agg["size_class"] == 10
    assert agg["erl_mean"] == pytest.approx((ca["metrics"]["erl"] + cb["metrics"]["erl"]) / 2)
    code, out, err = cli("fibers-aggregate", a, b)
    assert code == 0 and "tolerance 2 voxels" in out and "merge-penalized" in out
    cb["size_class"] = 512
    b.write_text(json.dumps(cb))
    code, out, err = cli("fibers-aggregate", a, b)
    assert code == 2 and "size class" in err and "length" in err and err.count("\n") == 1
    cb["size_class"], cb["tolerance"] = 10, 3.0
    b.write_text(json.dumps(cb))
    code, out, err = cli("fibers-aggregate", a, b)
    assert code == 2 and "tolerance" in err


def _refusal(cli, *args, want):
    code, out, err = cli(*args)
    assert code == 2, (code, err)
    assert err.startswith("segscore ") and err.count("\n") == 1, err
    assert want in err, err
    return err


def test_refusals(cli, target, labels, tmp_path):
    np.save(tmp_path / "wrong.npy", np.zeros((10, 12, 23), np.int32))
    _refusal(cli, "fibers", tmp_path / "wrong.npy", target, want="(10, 12, 24)")
    np.save(tmp_path / "float.npy", np.zeros(SHAPE, np.float32))
    _refusal(cli, "fibers", tmp_path / "float.npy", target, want="float32")
    np.save(tmp_path / "neg.npy", np.full(SHAPE, -2, np.int16))
    _refusal(cli, "fibers", tmp_path / "neg.npy", target, want="negative")
    np.save(tmp_path / "obj.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    _refusal(cli, "fibers", tmp_path / "obj.npy", target, want="obj.npy")
    _refusal(cli, "fibers", tmp_path / "missing.npy", target, want="missing.npy")
    _refusal(cli, "fibers", target, want="--floor connected_components")
    _refusal(cli, "fibers", labels, target, "--floor", "oracle", want="not both")
    _refusal(cli, "fibers", labels, tmp_path / "nowhere", want="nowhere")
    (target / "mask.npz").unlink()
    _refusal(cli, "fibers", labels, target, want="mask.npz")
    code, _, err = cli("fibers", "--floor", "bogus", target)
    assert code == 2 and "bogus" in err
    _refusal(cli, "fibers-aggregate", tmp_path / "nocard.json", want="nocard.json")
    (tmp_path / "x.json").write_text("{}")
    _refusal(cli, "fibers-aggregate", tmp_path / "x.json", want="not a fiber scorecard")


def test_out_of_sync_target_refused(cli, tmp_path, labels):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    t = write_target(tmp_path / "bad", fibers, np.zeros(SHAPE, bool),
                     extra_meta={"ground_truth": {"n_fibers_scored": 5}})
    _refusal(cli, "fibers", labels, t, want="n_fibers_scored")
    t2 = write_target(tmp_path / "bad2", fibers, np.zeros(SHAPE, bool), extra_meta={"shape": [1, 2, 3]})
    _refusal(cli, "fibers", labels, t2, want="shape")


def test_floors_of_another_scoring_version_refused(cli, tmp_path, labels):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    floors = {"floor_connected_components": dict(PUBLISHED)}
    t = write_target(tmp_path / "v2", fibers, np.zeros(SHAPE, bool), floors=floors,
                     extra_meta={"floors_scoring_version": 2})
    _refusal(cli, "fibers", labels, t, want="--recompute-floors")
    code, out, err = cli("fibers", labels, t, "--recompute-floors", "--json")
    assert code == 0, err


def test_object_fiber_names_never_unpickled(tmp_path):
    from segscore.fibers.target import load_target

    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    t = load_target(write_target(tmp_path / "t", fibers, np.zeros(SHAPE, bool), names=True))
    assert t.n_fibers == 1


def test_bad_labels_refused_before_floors_are_recomputed(cli, target, tmp_path, monkeypatch):
    from segscore.fibers import floors

    def boom(*a, **k):
        raise AssertionError("floors computed before the labels were checked")

    monkeypatch.setattr(floors, "recompute_floors", boom)
    np.save(tmp_path / "wrong.npy", np.zeros((3, 3, 3), np.int32))
    _refusal(cli, "fibers", tmp_path / "wrong.npy", target, "--recompute-floors", want="(10, 12, 24)")
