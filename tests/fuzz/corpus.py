"""Seeded malformed invocations of every command, for the fuzz test and ``benchmarks/fuzz.py``.

``build(folder)`` writes one valid input of each kind (an ink segment, an ink target, a column
target, curvilinear masks, label images, a fiber target, a held-out set) under ``folder``;
``cases(folder, n, seed)`` yields ``n`` invocations ``(label, argv)``, each one valid call with
one input damaged: a file truncated, corrupted, emptied or replaced by another format, an
array of the wrong dtype, shape or values (NaN, inf, complex, zero-size, one pixel), a zarr
store with broken metadata or chunks, a meta.json or manifest with a field removed or of the
wrong type. The same seed gives the same invocations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np


def build(folder: Path) -> dict:
    """Valid inputs of every kind; returns their paths by name."""
    import tifffile

    from tests.columns.helpers import make_column_target
    from tests.curvilinear.helpers import vessel_tree
    from tests.fibers.helpers import random_fibers, write_target
    from tests.ink.helpers import segment, write_levels
    from tests.objects.helpers import synthetic_pair
    from tests.targets.helpers import make_target, reading_map, write_png

    f = Path(folder)
    f.mkdir(parents=True, exist_ok=True)
    pred, ink, mask = segment((40, 50), seed=1)
    tifffile.imwrite(f / "map.tif", pred)
    tifffile.imwrite(f / "rev.tif", pred[::-1].copy())
    np.save(f / "map.npy", pred)
    write_levels(f / "labels.zarr", {"2": ink.astype(np.uint8)})
    write_levels(f / "mask.zarr", {"2": mask.astype(np.uint8)})
    tgt, tink, _ = make_target(f / "ink_target")
    write_png(f / "ink_pred.png", reading_map(tink))
    ctgt, _ = make_column_target(f / "col_target")
    np.save(f / "col_pred.npy", np.random.default_rng(2).random((260, 700)).astype(np.float32))
    gt = vessel_tree((64, 64), seed=3)
    write_png(f / "gt.png", gt.astype(np.uint8) * 255)
    write_png(f / "pred.png", np.roll(gt, 1, axis=1).astype(np.uint8) * 255)
    t, p = synthetic_pair(shape=(48, 48), n=8, seed=4)
    tifffile.imwrite(f / "truth.tif", t.astype(np.uint16))
    np.save(f / "objpred.npy", p.astype(np.int32))
    rng = np.random.default_rng(5)
    shape = (16, 16, 16)
    ftgt = write_target(f / "fiber_target", random_fibers(rng, shape, 3), np.ones(shape, bool))
    np.save(f / "fiber_labels.npy", (rng.random(shape) < 0.2).astype(np.int32))
    hold = f / "holdout"
    hold.mkdir(exist_ok=True)
    shutil.copy(f / "truth.tif", hold / "a_mask.tif")
    (hold / "a.tif").write_bytes(b"image")
    import hashlib

    digest = hashlib.sha256((hold / "a_mask.tif").read_bytes()).hexdigest()
    (hold / "manifest.json").write_text(json.dumps({"name": "s", "version": "1", "fields": [
        {"image": "a.tif", "truth": "a_mask.tif", "sha256": digest}]}))
    (f / "preds").mkdir(exist_ok=True)
    shutil.copy(f / "truth.tif", f / "preds" / "a.tif")
    return {"map": f / "map.tif", "rev": f / "rev.tif", "labels": f / "labels.zarr", "mask": f / "mask.zarr",
            "ink_target": tgt, "ink_pred": f / "ink_pred.png", "col_target": ctgt, "col_pred": f / "col_pred.npy",
            "gt": f / "gt.png", "pred": f / "pred.png", "truth": f / "truth.tif", "objpred": f / "objpred.npy",
            "fiber_target": ftgt, "fiber_labels": f / "fiber_labels.npy", "manifest": hold / "manifest.json",
            "preds": f / "preds"}


def commands(p: dict) -> dict:
    """One valid invocation per command, as argv lists (paths from :func:`build`)."""
    s = str
    return {
        "auc": ["auc", s(p["map"]), "--labels", s(p["labels"]), "--mask", s(p["mask"]), "--control", s(p["rev"])],
        "target": ["target", s(p["ink_pred"]), s(p["ink_target"]), "--no-floors"],
        "placement": ["placement", s(p["ink_pred"]), s(p["ink_target"])],
        "columns": ["columns", s(p["col_pred"]), s(p["col_target"]), "--no-floors"],
        "curve": ["curve", s(p["pred"]), "--gt", s(p["gt"])],
        "objects": ["objects", s(p["truth"]), s(p["objpred"])],
        "holdout": ["holdout", s(p["manifest"]), "--predictions", s(p["preds"])],
        "fibers": ["fibers", s(p["fiber_labels"]), s(p["fiber_target"])],
    }


# ------------------------------------------------------------------ damage

def _files_of(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(q for q in path.rglob("*") if q.is_file())
    return [path]


def damage_bytes(path: Path, rng) -> str:
    """Truncate, corrupt, empty or garble one file of ``path`` (a file or a folder)."""
    files = _files_of(path)
    target = files[int(rng.integers(len(files)))]
    data = target.read_bytes()
    how = ["truncate", "flip", "empty", "garbage", "half"][int(rng.integers(5))]
    if how == "truncate" and data:
        data = data[: int(rng.integers(0, len(data)))]
    elif how == "half":
        data = data[: len(data) // 2]
    elif how == "flip" and data:
        buf = bytearray(data)
        for _ in range(int(rng.integers(1, 16))):
            buf[int(rng.integers(len(buf)))] ^= int(rng.integers(1, 256))
        data = bytes(buf)
    elif how == "empty":
        data = b""
    else:
        data = bytes(rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8))
    target.write_bytes(data)
    return f"{how} {target.name}"


ARRAYS = {
    "nan": lambda a: np.where(np.arange(a.size).reshape(a.shape) % 7 == 0, np.nan, a.astype(np.float64)),
    "inf": lambda a: np.where(np.arange(a.size).reshape(a.shape) % 5 == 0, np.inf, a.astype(np.float64)),
    "-inf": lambda a: np.full(a.shape, -np.inf),
    "complex": lambda a: a.astype(np.complex64),
    "bool": lambda a: a > 0,
    "1d": lambda a: a.reshape(-1),
    "4d": lambda a: a.reshape((1, 1) + a.shape)[..., None].repeat(2, axis=-1),
    "zero-size": lambda a: np.zeros((0,) + a.shape[1:], a.dtype),
    "one-pixel": lambda a: a.reshape(-1)[:1].reshape((1,) * a.ndim),
    "negative": lambda a: -np.abs(a.astype(np.int64)) - 1,
    "huge": lambda a: np.full(a.shape, 1e300),
    "float-labels": lambda a: a.astype(np.float64) + 0.5,
    "uint64-max": lambda a: np.full(a.shape, np.iinfo(np.uint64).max, np.uint64),
    "other-shape": lambda a: np.zeros(tuple(n + 3 for n in a.shape), a.dtype),
}


def damage_array(path: Path, rng) -> str:
    """Replace a ``.npy`` by an array of another dtype, shape or values."""
    a = np.load(path)
    name = sorted(ARRAYS)[int(rng.integers(len(ARRAYS)))]
    np.save(path, ARRAYS[name](a))
    return name


def damage_json(path: Path, rng) -> str:
    """Remove a field of a JSON file, give it the wrong type, or break the file."""
    try:
        doc = json.loads(path.read_text())
    except ValueError:
        doc = {}
    how = int(rng.integers(6))
    if how == 0:
        path.write_text("{not json")
        return "invalid json"
    if how == 1:
        path.write_text(json.dumps([doc]))
        return "not an object"
    leaves = []

    def walk(node, trail):
        if isinstance(node, dict):
            for k, v in node.items():
                leaves.append(trail + (k,))
                walk(v, trail + (k,))
        elif isinstance(node, list) and node and isinstance(node[0], dict):
            walk(node[0], trail + (0,))

    walk(doc, ())
    if not leaves:
        path.write_text("null")
        return "null"
    trail = leaves[int(rng.integers(len(leaves)))]
    parent = doc
    for k in trail[:-1]:
        parent = parent[k]
    bad = [None, "x", -1, 1e308, [], {}, True, [1, 2, 3]][int(rng.integers(8))]
    if how == 2:
        del parent[trail[-1]]
        path.write_text(json.dumps(doc))
        return f"removed {'.'.join(map(str, trail))}"
    parent[trail[-1]] = bad
    path.write_text(json.dumps(doc))
    return f"{'.'.join(map(str, trail))} = {bad!r}"


#: what each command's inputs are, and how each can be damaged
INPUTS = {
    "auc": [("map", "bytes"), ("rev", "bytes"), ("labels", "bytes"), ("mask", "bytes"), ("labels", "zarrjson"),
            ("map", "npyarray")],
    "target": [("ink_pred", "bytes"), ("ink_target", "bytes"), ("ink_target", "metajson")],
    "placement": [("ink_pred", "bytes"), ("ink_target", "metajson")],
    "columns": [("col_pred", "npyarray"), ("col_pred", "bytes"), ("col_target", "metajson"),
                ("col_target", "columnsjson"), ("col_target", "bytes")],
    "curve": [("pred", "bytes"), ("gt", "bytes")],
    "objects": [("truth", "bytes"), ("objpred", "npyarray"), ("objpred", "bytes")],
    "holdout": [("manifest", "json"), ("preds", "bytes")],
    "fibers": [("fiber_labels", "npyarray"), ("fiber_labels", "bytes"), ("fiber_target", "metajson"),
               ("fiber_target", "bytes")],
}


def _apply(p: dict, name: str, how: str, rng) -> str:
    path = Path(p[name])
    if how == "bytes":
        return damage_bytes(path, rng)
    if how == "npyarray":
        path_npy = path if path.suffix == ".npy" else path.with_suffix(".npy")
        if path.suffix != ".npy":
            p[name] = path_npy
        return damage_array(path_npy, rng)
    if how == "json":
        return damage_json(path, rng)
    if how == "metajson":
        return damage_json(path / "meta.json", rng)
    if how == "columnsjson":
        return damage_json(path / "columns.json", rng)
    if how == "zarrjson":
        metas = [q for q in path.rglob("*") if q.name in ("zarr.json", ".zarray")]
        return damage_json(metas[int(rng.integers(len(metas)))], rng)
    raise ValueError(how)


def cases(root: Path, n: int, seed: int = 0):
    """``n`` damaged invocations ``(label, argv)``, each in its own copy of the inputs."""
    rng = np.random.default_rng(seed)
    base = Path(root) / "valid"
    paths = build(base)
    names = sorted(INPUTS)
    for i in range(n):
        command = names[i % len(names)]
        name, how = INPUTS[command][int(rng.integers(len(INPUTS[command])))]
        here = Path(root) / f"case{i}"
        shutil.copytree(base, here)
        p = {k: here / Path(v).relative_to(base) for k, v in paths.items()}
        what = _apply(p, name, how, rng)
        argv = commands(p)[command] + ["--json"]
        yield f"{command}: {name} {what}", argv
