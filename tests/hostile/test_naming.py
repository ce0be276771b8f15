"""Refusals name the file, and JSON inputs are recognised by their full schema: fiber meta.json
floors and oracle, fiber scorecards, a .npy header with a negative shape."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.hostile import bombs
from tests.hostile.bombs import one_line as _one_line




@pytest.mark.parametrize("floors, needle", [
    ({"oracle": 5}, "floors.oracle is 5; it should be an object"),
    ({"oracle": {"erl": "long"}}, "floors.oracle.erl is 'long'; it should be a number"),
    ({"oracle": {"erl": -3.0}}, "floors.oracle.erl is -3.0"),
    ({"floor_single_instance": {"coverage": 2.0}}, "floors.floor_single_instance.coverage is 2.0"),
    ({"floor_connected_components": {"merges": 1.5}}, "floors.floor_connected_components.merges is 1.5"),
    ({"floor_random_instances": [1, 2]}, "floors.floor_random_instances is [1, 2]"),
])
def test_a_fiber_meta_floor_of_the_wrong_type_is_named(cli, tmp_path, floors, needle):
    from tests.fibers.helpers import random_fibers, write_target

    rng = np.random.default_rng(0)
    shape = (12, 12, 12)
    folder = write_target(tmp_path / "t", random_fibers(rng, shape, 3), np.ones(shape, bool))
    meta = json.loads((folder / "meta.json").read_text())
    meta["floors"] = floors
    (folder / "meta.json").write_text(json.dumps(meta))
    before = bombs.digests([folder / "meta.json"])
    line = _one_line(cli, ["fibers", "--floor", "single_instance", folder], folder / "meta.json")
    assert needle in line, line
    assert bombs.digests([folder / "meta.json"]) == before


def test_fibers_aggregate_recognises_a_card_by_its_full_schema(cli, inputs, tmp_path):
    card = tmp_path / "card.json"
    code, _, err = cli("fibers", "--floor", "single_instance", inputs["fiber_target"], "--json-out", card)
    assert code == 0, err
    good = json.loads(card.read_text())
    impostor = tmp_path / "impostor.json"
    impostor.write_text(json.dumps({"metrics": {}, "size_class": good["size_class"]}))
    line = _one_line(cli, ["fibers-aggregate", card, impostor], impostor)
    assert "not a fiber scorecard" in line
    for change, needle in (
            (lambda c: c["metrics"].pop("erl"), "its metrics have no erl"),
            (lambda c: c["metrics"].update(erl="12"), "metrics.erl is '12'"),
            (lambda c: c["metrics"].pop("erl_merge_penalized"), "its metrics have no erl_merge_penalized"),
            (lambda c: c["metrics"].update(coverage=1.5), "metrics.coverage is 1.5"),
            (lambda c: c.update(floors={"oracle": {"erl": None, "precision": "x"}}), "floors.oracle.precision"),
            (lambda c: c.update(floors=[]), "floors is []"),
            (lambda c: c.update(target=7), "target is 7"),
            (lambda c: c.pop("prediction"), "no prediction")):
        bad = json.loads(card.read_text())
        change(bad)
        impostor.write_text(json.dumps(bad))
        assert needle in _one_line(cli, ["fibers-aggregate", card, impostor], impostor)
    code, out, err = cli("fibers-aggregate", card, card, "--json")
    assert code == 0 and json.loads(out)["n"] == 2


def test_a_negative_npy_shape_is_blamed_on_the_file(cli, inputs, tmp_path):
    from segscore.io.readers import read_image

    a = np.ascontiguousarray(read_image(inputs["map"]))
    path = tmp_path / "neg.npy"
    np.save(path, a)
    raw = path.read_bytes()
    shape = f"({a.shape[0]}, {a.shape[1]})".encode()
    assert shape in raw
    path.write_bytes(raw.replace(shape, f"({-a.shape[0]}, {a.shape[1]})".encode().ljust(len(shape))))
    for argv in (["auc", path, "--labels", inputs["labels"], "--mask", inputs["mask"]],
                 ["auc", path, "--labels", inputs["labels"], "--mask", inputs["mask"], "--surface-shape", "40", "50"],
                 ["objects", path, inputs["objpred"]]):
        line = _one_line(cli, argv, path)
        assert "negative" in line and "--surface-shape" not in line, line


def test_objects_surface_refusals_name_the_file(cli, inputs, tmp_path):
    frac = tmp_path / "frac.npy"
    np.save(frac, np.load(inputs["objpred"]).astype(np.float64) + 0.5)
    line = _one_line(cli, ["objects", inputs["truth"], frac, "--surface"], frac)
    assert "fractional" in line
