"""The three shipped ScrollGT fiber cubes: every published floor and oracle reproduced.

ERL to 0.01, coverage and precision to 1e-4, splits, merges and counts exactly (the
published values are rounded as printed, so equality of the rounded rows is required).
Skips with a reason when ../shared/data is absent.
"""

from __future__ import annotations

import pytest

from segscore.fibers.floors import recompute_floors
from segscore.fibers.target import load_target

CUBES = ["fibers_s1_00497_01497_03997_256", "fibers_s5_03997_01497_03997_256", "fibers_s5_06494_01994_03994_512"]


@pytest.fixture(scope="module", params=CUBES)
def cube(request, shared_data):
    path = shared_data / "scrollgt" / request.param
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    target = load_target(path)
    return target, recompute_floors(target)


def test_published_floors_and_oracle_reproduced(cube):
    target, rows = cube
    published = target.meta["floors"]
    assert set(rows) == {k for k in published if k == "oracle" or k.startswith("floor_")}
    for key, row in rows.items():
        pub = published[key]
        for field, value in pub.items():
            if field in ("erl", "erl_merge_penalized"):
                assert row[field] == pytest.approx(value, abs=0.0051), (key, field)
            elif field in ("coverage", "precision"):
                assert row[field] == pytest.approx(value, abs=0.000051), (key, field)
            else:
                assert row[field] == value, (key, field)


def test_target_reader_matches_meta(cube):
    target, _ = cube
    gt = target.meta["ground_truth"]
    assert target.n_fibers == gt["n_fibers_scored"]
    assert target.n_fibers_total == gt["n_fibers"]
    assert target.mask.mean() == pytest.approx(target.meta["mask"]["density"], abs=1e-6)
    hi = [s - 1 for s in target.shape]
    inb = ((target.coords >= 0) & (target.coords <= hi)).all(axis=1).sum()
    assert inb == gt["n_nodes_in_bounds"]


def test_cli_floor_card_on_a_real_cube(cli, shared_data):
    import json

    path = shared_data / "scrollgt" / CUBES[1]
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    code, out, err = cli("score-fibers", "--floor", "connected_components", path, "--json")
    assert code == 0, err
    card = json.loads(out)
    meta = json.loads((path / "meta.json").read_text())
    assert card["metrics"] == meta["floors"]["floor_connected_components"]
    assert card["floors_source"] == "published" and card["below_baseline"] is False
    assert card["class_oracle_erl"] == meta["floors"]["oracle"]["erl"]
    assert set(card["floors"]) == {"floor_single_instance", "floor_connected_components",
                                   "floor_voxel_instances", "floor_random_instances"}
    assert card["oracle"] == meta["floors"]["oracle"]
    code, out, _ = cli("fibers", "--floor", "single_instance", path)
    assert code == 0
    # single instance: raw ERL 184.22 beats connected components (182.22); its penalized twin is 0.00
    assert out.splitlines()[-1] == ("ERL 184.22 is not below the connected-components floor (182.22); "
                                    "merge-penalized ERL 0.00")
    assert "tolerance 2 voxels" in out
