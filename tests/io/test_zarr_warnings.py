"""Absent zarr chunks reach the results of `auc`, `target` and `objects` (their top-level
``warnings`` list and stderr), and intact stores give results byte-identical to the same arrays
read from .npy files (only ``files`` differs)."""

import json
import os

import numpy as np
import pytest

from tests.ink.helpers import segment, write_levels
from tests.objects.helpers import synthetic_pair
from tests.targets.helpers import make_target, reading_map

zarr = pytest.importorskip("zarr")


def write(path, data, chunks, fill_value=0):
    """A zarr v3 array holding every chunk (none absent unless a test removes it)."""
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, fill_value=fill_value,
                            config={"write_empty_chunks": True})
    arr[...] = data
    return str(path)


def run_json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out), err


def same_but_files(a: dict, b: dict, names=("files",)) -> bool:
    """Byte-identical JSON but for the fields naming the input files."""
    from segscore.io.results import dumps

    a, b = dict(a), dict(b)
    for name in names:
        a.pop(name, None), b.pop(name, None)
    return dumps(a) == dumps(b)


def test_target_with_a_zarr_prediction(cli, tmp_path):
    folder, ink, _ = make_target(tmp_path / "t1")
    pred = reading_map(ink)
    np.save(tmp_path / "p.npy", pred)
    write(tmp_path / "p.zarr", pred, (16, 16))
    want, _ = run_json(cli, "target", tmp_path / "p.npy", folder, "--no-floors")
    got, err = run_json(cli, "target", tmp_path / "p.zarr", folder, "--no-floors")
    assert got["warnings"] == [] and err == "" and same_but_files(got, want, ("prediction",))
    os.remove(tmp_path / "p.zarr" / "c" / "1" / "2")
    got, err = run_json(cli, "target", tmp_path / "p.zarr", folder, "--no-floors")
    line = f"{tmp_path / 'p.zarr'}: 1 of 12 chunks absent, read as the fill value 0"
    assert got["warnings"] == [line] and err == f"segscore target: warning: {line}\n"
    assert got["metrics"] != want["metrics"]


def test_objects_with_zarr_labels(cli, tmp_path):
    truth, pred = synthetic_pair((64, 80), n=12, seed=3, r=(3, 7))
    np.save(tmp_path / "t.npy", truth)
    np.save(tmp_path / "p.npy", pred)
    write(tmp_path / "t.zarr", truth, (16, 16))
    write_levels(tmp_path / "p.zarr", {"0": pred}, zarr_format=2, chunks=(16, 32))
    want, _ = run_json(cli, "objects", tmp_path / "t.npy", tmp_path / "p.npy", "--tile-rows", "9")
    got, err = run_json(cli, "objects", tmp_path / "t.zarr", tmp_path / "p.zarr/0", "--tile-rows", "9")
    absent_p = 12 - len([p for p in (tmp_path / "p.zarr" / "0").iterdir() if not p.name.startswith(".")])
    lines = [f"{tmp_path / 'p.zarr/0'}: {absent_p} of 12 chunks absent, read as the fill value 0"] if absent_p else []
    assert got["warnings"] == lines and same_but_files({**got, "warnings": []}, {**want, "warnings": []})
    os.remove(tmp_path / "t.zarr" / "c" / "0" / "0")
    os.remove(tmp_path / "t.zarr" / "c" / "3" / "4")
    got, err = run_json(cli, "objects", tmp_path / "t.zarr", tmp_path / "p.zarr/0")
    line = f"{tmp_path / 't.zarr'}: 2 of 20 chunks absent, read as the fill value 0"
    assert got["warnings"][0] == line and f"segscore objects: warning: {line}\n" in err


def test_auc_labels_and_map_from_zarr(cli, tmp_path):
    pred, ink, mask = segment((70, 90), seed=5)
    np.save(tmp_path / "MAP.npy", pred)
    write(tmp_path / "MAP.zarr", pred, (16, 16))
    for name, plane in (("inklabels.zarr", ink), ("supervision.zarr", mask)):
        zarr.open_group(str(tmp_path / name), mode="w", zarr_format=3)
        write(tmp_path / name / "2", plane.astype(np.uint8), (16, 16))
    labels = ["--labels", tmp_path / "inklabels.zarr", "--mask", tmp_path / "supervision.zarr", "--bootstrap", "20"]
    want, _ = run_json(cli, "auc", tmp_path / "MAP.npy", *labels)
    got, err = run_json(cli, "auc", tmp_path / "MAP.zarr", *labels)
    assert want["warnings"] == got["warnings"] == [] and err == "" and same_but_files(got, want)
    os.remove(tmp_path / "inklabels.zarr" / "2" / "c" / "1" / "1")
    os.remove(tmp_path / "MAP.zarr" / "c" / "0" / "5")
    got, err = run_json(cli, "auc", tmp_path / "MAP.zarr", *labels)
    lines = [f"{tmp_path / 'MAP.zarr'}: 1 of 30 chunks absent, read as the fill value 0",
             f"{tmp_path / 'inklabels.zarr'}/2: 1 of 30 chunks absent, read as the fill value 0"]
    assert sorted(got["warnings"]) == lines and sorted(err.splitlines()) == [
        f"segscore auc: warning: {line}" for line in lines]


def test_the_api_reports_them_too(tmp_path):
    """The Python API's result carries the warnings (once each, also through nested API calls);
    a zarr array passed in is read through the same wrapper."""
    import segscore.ink.auc as auc

    pred, ink, mask = segment((40, 40), seed=2)
    write(tmp_path / "ink.zarr", ink.astype(np.uint8), (8, 8))
    write(tmp_path / "mask.zarr", mask.astype(np.uint8), (8, 8))
    os.remove(tmp_path / "ink.zarr" / "c" / "0" / "0")
    result = auc.score_files(pred, str(tmp_path / "ink.zarr"), str(tmp_path / "mask.zarr"), level=None)
    assert result["warnings"] == [f"{tmp_path / 'ink.zarr'}: 1 of 25 chunks absent, read as the fill value 0"]
    arr = zarr.open_array(str(tmp_path / "ink.zarr"), mode="r")
    result = auc.score_array(pred, arr, mask)
    assert result["warnings"] == ["<ink labels>: 1 of 25 chunks absent, read as the fill value 0"]
