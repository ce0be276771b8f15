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
    shutil.copy(f / "truth.tif", f / "preds" / "a_mask.tif")
    (f / "regions.json").write_text(json.dumps({
        "train_regions": [{"y0": 0, "x0": 0, "h": 100, "w": 120, "volume": "v"}],
        "predict_region": {"y0": 200, "x0": 200, "h": 60, "w": 80, "volume": "v"}}))
    np.save(f / "gt.npy", gt.astype(np.uint8))
    _quietly(["run", "init", "--root", str(f / "ledger"), "exp"])
    cards = f / "cards"
    cards.mkdir(exist_ok=True)
    for k in (1, 2):
        np.save(f / f"fl{k}.npy", (rng.random(shape) < 0.1 * k).astype(np.int32))
        _quietly(["fibers", str(f / f"fl{k}.npy"), str(ftgt), "--json-out", str(cards / f"card{k}.json")])
    (f / "keep").mkdir(exist_ok=True)
    (f / "outdir").mkdir(exist_ok=True)
    from tests.fibers.test_fibers_target import CUBE, FIBERS, ORIGIN, nml_text, tiny_mask

    (f / "nml").mkdir(exist_ok=True)
    (f / "nml" / f"{CUBE}.nml").write_text(nml_text(FIBERS, ORIGIN))
    np.save(f / "fiber_mask.npy", tiny_mask())
    _quietly(["audit", str(f / "gt.png"), str(f / "gt.npy"), "--severities", "0.2", "--radius-scales", "0.85",
              "--boundary-fracs", "0.05", "--n-boot", "20", "--no-redraw-floor", "--quiet", "--include-cases",
              "--json-out", str(f / "audit_cases.json")])
    return {"regions": f / "regions.json", "gt_npy": f / "gt.npy", "ledger": f / "ledger", "cards": cards,
            "keep": f / "keep", "outdir": f / "outdir", "nml": f / "nml", "fiber_mask": f / "fiber_mask.npy",
            "audit_cases": f / "audit_cases.json",
            "map": f / "map.tif", "rev": f / "rev.tif", "labels": f / "labels.zarr", "mask": f / "mask.zarr",
            "ink_target": tgt, "ink_pred": f / "ink_pred.png", "col_target": ctgt, "col_pred": f / "col_pred.npy",
            "gt": f / "gt.png", "pred": f / "pred.png", "truth": f / "truth.tif", "objpred": f / "objpred.npy",
            "fiber_target": ftgt, "fiber_labels": f / "fiber_labels.npy", "manifest": hold / "manifest.json",
            "preds": f / "preds"}


def _quietly(argv):
    import contextlib
    import io

    from segscore.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    assert code == 0, argv


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
        "fibers-aggregate": ["fibers-aggregate", s(Path(p["cards"]) / "card1.json"), s(Path(p["cards"]) / "card2.json")],
        "check": ["check", "--window-px", "64", "--scan-um", "7.91", "--regions-json", s(p["regions"])],
        "perturb": ["perturb", s(p["gt_npy"]), "--operator", "break", "--severity", "0.2",
                    "-o", s(Path(p["outdir"]) / "out.npy")],
        "run": ["run", "show", "--root", s(p["ledger"]), "exp"],
        "demo": ["demo", "--keep", s(p["keep"]), "--bootstrap", "0"],
        "fibers-target": ["fibers-target", s(p["nml"]), s(p["fiber_mask"]), "--out",
                          s(Path(p["outdir"]) / "built_target"), "--force"],
        "audit": ["audit", s(p["gt"]), s(p["gt_npy"]), "--severities", "0.2", "--radius-scales", "0.85",
                  "--boundary-fracs", "0.05", "--n-boot", "20", "--no-redraw-floor", "--quiet"],
        "profile": ["profile", s(p["pred"]), "--gt", s(p["gt"]), "--seeds", "1", "--quiet"],
    }


#: numeric options of each command a case may give a bad value (with the count of values each takes)
OPTIONS = {
    "auc": [("--bootstrap", 1), ("--block-px", 1), ("--seed", 1), ("--tile-rows", 1), ("--threads", 1),
            ("--inner", 1), ("--surface-shape", 2), ("--crop", 4)],
    "target": [("--seed", 1), ("--tile-rows", 1), ("--threads", 1), ("--origin", 2)],
    "placement": [("--radius", 1), ("--gate", 1), ("--tile-radius", 1), ("--threshold", 1), ("--origin", 2)],
    "columns": [("--seed", 1), ("--tile-rows", 1), ("--origin", 2)],
    "curve": [("--prune-px", 1)],
    "objects": [("--iou", 1), ("--tolerances", 2), ("--minimum-overlap", 1), ("--tile-rows", 1), ("--threads", 1)],
    "holdout": [("--iou", 1), ("--tolerances", 1)],
    "fibers": [],
    "fibers-aggregate": [],
    "check": [("--window-px", 1), ("--scan-um", 1)],
    "perturb": [("--severity", 1), ("--seed", 1), ("--prune-px", 1)],
    "run": [],
    "demo": [("--seed", 1)],
    "fibers-target": [("--origin", 3), ("--tolerance", 1), ("--shape", 3)],
    "audit": [("--prune-px", 1), ("--seeds", 1), ("--n-boot", 1), ("--min-units", 1), ("--min-cases", 1),
              ("--severities", 1), ("--radius-scales", 1), ("--threads", 1)],
    "profile": [("--prune-px", 1), ("--seed", 1), ("--seeds", 1), ("--threads", 1)],
}
BAD_VALUES = ["nan", "inf", "-inf", "-1", "0", "-0", "1e308", "x", "", "99999999999999999999", "0.5", "-2.5"]


def damage_option(argv: list, command: str, rng) -> str:
    """Give one numeric option a bad value (appended: the last occurrence wins in argparse)."""
    name, count = OPTIONS[command][int(rng.integers(len(OPTIONS[command])))]
    values = [BAD_VALUES[int(rng.integers(len(BAD_VALUES)))] for _ in range(count)]
    argv += [name, *values]
    return f"{name} {' '.join(values)}"


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


def _read_any(path: Path) -> np.ndarray:
    """The array a valid input file holds (a small stand-in when it cannot be read)."""
    try:
        if path.suffix == ".npy":
            return np.load(path)
        if path.suffix in (".tif", ".tiff"):
            import tifffile

            return tifffile.imread(path)
        from PIL import Image

        return np.asarray(Image.open(path))
    except Exception:  # noqa: BLE001 - a file damaged before: any array will do
        return np.zeros((8, 8), np.uint8)


def _npy_header_lie(path: Path, a: np.ndarray) -> None:
    """A .npy whose header declares a huge shape over a few bytes of data."""
    import numpy.lib.format as fmt

    with open(path, "wb") as fh:
        fmt.write_array_header_1_0(fh, {"descr": fmt.dtype_to_descr(a.dtype), "fortran_order": False,
                                        "shape": (1 << 20, 1 << 20)})
        fh.write(a.tobytes()[:64])


def damage_format(path: Path, rng) -> str:
    """Rewrite a file as a valid file of odd properties, or as another format under its name:
    .npy (object, structured, big-endian, Fortran order, float16, 0-d, a lying header), TIFF
    (16-bit, float, int64, several pages, tiled and compressed, RGB), PNG (16-bit, palette,
    RGBA, 1-bit, grey with alpha), or the bytes of another format."""
    import io

    import tifffile
    from PIL import Image

    a = _read_any(path)
    if a.ndim > 2:
        a = a.reshape(a.shape[0], -1) if a.ndim == 3 and path.suffix != ".npy" else a
    variants = {
        ".npy": ["object", "structured", "big-endian", "fortran", "float16", "0-d", "header-lie", "png-bytes"],
        ".tif": ["uint16", "float32", "int64", "pages", "tiled-zlib", "rgb", "png-bytes", "npy-bytes"],
        ".png": ["png16", "palette", "rgba", "1-bit", "la", "tif-bytes", "npy-bytes", "interlaced"],
    }[".tif" if path.suffix == ".tiff" else path.suffix]
    how = variants[int(rng.integers(len(variants)))]
    a8 = np.clip(a, 0, 255).astype(np.uint8) if a.dtype.kind in "biuf" else np.zeros(a.shape, np.uint8)
    buf = io.BytesIO()
    if how == "object":
        np.save(path, np.array([a, "x"], dtype=object), allow_pickle=True)
    elif how == "structured":
        np.save(path, np.zeros(a.shape, dtype=[("a", "<i4"), ("b", "<f4")]))
    elif how == "big-endian":
        np.save(path, a.astype(a.dtype.newbyteorder(">")) if a.dtype.itemsize > 1 else a.astype(">f8"))
    elif how == "fortran":
        np.save(path, np.asfortranarray(a))
    elif how == "float16":
        np.save(path, a.astype(np.float16))
    elif how == "0-d":
        np.save(path, np.array(1, a.dtype))
    elif how == "header-lie":
        _npy_header_lie(path, a)
    elif how in ("uint16", "float32", "int64"):
        tifffile.imwrite(path, a.astype(how) * (257 if how == "uint16" else 1))
    elif how == "pages":
        with tifffile.TiffWriter(path) as tw:
            tw.write(a8)
            tw.write(np.zeros((3, 5), np.uint8))
    elif how == "tiled-zlib":
        tile = (16, 16) if a.ndim == 2 else None
        tifffile.imwrite(path, a, tile=tile, compression="zlib")
    elif how == "rgb":
        tifffile.imwrite(path, np.stack([a8] * 3, axis=-1) if a8.ndim == 2 else a8, photometric="rgb")
    elif how == "png-bytes":
        Image.fromarray(a8 if a8.ndim == 2 else a8.reshape(a8.shape[0], -1)).save(buf, format="PNG")
        path.write_bytes(buf.getvalue())
    elif how == "npy-bytes":
        np.save(buf, a)
        path.write_bytes(buf.getvalue())
    elif how == "tif-bytes":
        tifffile.imwrite(buf, a)
        path.write_bytes(buf.getvalue())
    else:  # PNG variants
        g = a8 if a8.ndim == 2 else a8[..., 0]
        img = {"png16": lambda: Image.fromarray(g.astype(np.uint16) * 257),
               "palette": lambda: Image.fromarray(g).convert("P"),
               "rgba": lambda: Image.fromarray(np.stack([g, g, g, np.full_like(g, 200)], axis=-1), "RGBA"),
               "1-bit": lambda: Image.fromarray(g > 127),
               "la": lambda: Image.fromarray(np.stack([g, np.full_like(g, 255)], axis=-1), "LA"),
               "interlaced": lambda: Image.fromarray(g)}[how]()
        img.save(path, format="PNG", **({"interlace": 1} if how == "interlaced" else {}))
    return f"{how} {path.name}"


def damage_xml(path: Path, rng) -> str:
    """Remove or garble one attribute of an XML file, drop an element, or add a declaration."""
    import re

    text = path.read_text()
    attrs = list(re.finditer(r'(\w+)="([^"]*)"', text))
    how = int(rng.integers(5))
    if how == 0 and attrs:
        m = attrs[int(rng.integers(len(attrs)))]
        bad = ["", "nan", "inf", "x", "-1e308", "1e308", "0x10", "1 2"][int(rng.integers(8))]
        text = text[: m.start(2)] + bad + text[m.end(2):]
        what = f"{m.group(1)}={bad!r}"
    elif how == 1 and attrs:
        m = attrs[int(rng.integers(len(attrs)))]
        text = text[: m.start()] + text[m.end():]
        what = f"no {m.group(1)}"
    elif how == 2:
        tags = list(re.finditer(r"<(node|edge|thing|nodes|edges)\b[^>]*/>", text))
        if tags:
            m = tags[int(rng.integers(len(tags)))]
            text = text[: m.start()] + text[m.end():]
        what = "an element dropped"
    elif how == 3:
        text = text.replace("<things>", '<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">]><things>', 1)
        what = "an entity declaration"
    else:
        text = text.replace("</things>", "", 1)
        what = "unclosed"
    path.write_text(text)
    return f"{what} in {path.name}"


def damage_nifti(path: Path, rng):
    """Write the array of ``path`` as a NIfTI beside it, damaged; returns (new path, what)."""
    import gzip

    import nibabel

    a = _read_any(path).astype(np.uint8)
    how = ["truncated-gz", "flipped-gz", "zero-dim", "negative-dim", "short-nii", "valid-gz", "4d", "nan-scale"][
        int(rng.integers(8))]
    gz = how.endswith("-gz") or how in ("zero-dim", "negative-dim", "4d", "nan-scale")
    out = path.with_name(path.stem + (".nii.gz" if gz else ".nii"))
    img = nibabel.Nifti1Image(a[..., None, None] if how == "4d" else a, np.eye(4))
    nibabel.save(img, out)
    data = out.read_bytes()
    if how == "truncated-gz":
        data = data[: len(data) * 2 // 3]
    elif how == "flipped-gz":
        buf = bytearray(data)
        for _ in range(8):
            buf[int(rng.integers(20, len(buf)))] ^= 0xFF
        data = bytes(buf)
    elif how in ("zero-dim", "negative-dim"):
        raw = bytearray(gzip.decompress(data))
        dim = np.frombuffer(bytes(raw[40:56]), "<i2").copy()
        dim[2] = 0 if how == "zero-dim" else -5
        raw[40:56] = dim.tobytes()
        data = gzip.compress(bytes(raw))
    elif how == "nan-scale":  # scl_slope (bytes 112-116 of the header) infinite
        raw = bytearray(gzip.decompress(data))
        raw[112:116] = np.float32(np.inf).tobytes()
        data = gzip.compress(bytes(raw))
    elif how == "short-nii":
        data = data[: len(data) - 7]
    out.write_bytes(data)
    return out, f"{how} {out.name}"


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
    "auc": [("map", "bytes"), ("map", "format"), ("rev", "format"), ("rev", "bytes"), ("labels", "bytes"), ("mask", "bytes"), ("labels", "zarrjson"),
            ("map", "npyarray")],
    "target": [("ink_pred", "bytes"), ("ink_pred", "format"), ("ink_target", "format"), ("ink_target", "bytes"), ("ink_target", "metajson")],
    "placement": [("ink_pred", "bytes"), ("ink_pred", "format"), ("ink_target", "metajson")],
    "columns": [("col_pred", "npyarray"), ("col_pred", "format"), ("col_target", "format"), ("col_pred", "bytes"), ("col_target", "metajson"),
                ("col_target", "columnsjson"), ("col_target", "bytes")],
    "curve": [("pred", "bytes"), ("gt", "bytes"), ("pred", "format"), ("gt", "format"), ("gt", "nifti")],
    "objects": [("truth", "bytes"), ("truth", "format"), ("objpred", "format"), ("objpred", "npyarray"), ("objpred", "bytes")],
    "holdout": [("manifest", "json"), ("preds", "bytes"), ("preds", "format"), ("manifest", "format")],
    "fibers": [("fiber_labels", "npyarray"), ("fiber_labels", "format"), ("fiber_target", "bytes"), ("fiber_labels", "bytes"), ("fiber_target", "metajson"),
               ("fiber_target", "bytes")],
    "fibers-aggregate": [("cards", "cardjson"), ("cards", "bytes")],
    "check": [("regions", "json"), ("regions", "bytes")],
    "perturb": [("gt_npy", "npyarray"), ("gt_npy", "format"), ("gt_npy", "nifti"), ("gt_npy", "bytes"), ("outdir", "occupied")],
    "run": [("ledger", "runjson"), ("ledger", "bytes"), ("ledger", "file")],
    "demo": [("keep", "occupied"), ("keep", "file")],
    "fibers-target": [("nml", "bytes"), ("nml", "xml"), ("fiber_mask", "npyarray"), ("fiber_mask", "bytes"),
                      ("fiber_mask", "format"), ("outdir", "occupied")],
    "audit": [("gt", "bytes"), ("gt", "format"), ("gt_npy", "npyarray"), ("gt", "nifti"), ("audit_cases", "json")],
    "profile": [("pred", "bytes"), ("pred", "format"), ("gt", "bytes"), ("gt", "format"), ("gt", "nifti")],
}


def _apply(p: dict, name: str, how: str, rng) -> str:
    path = Path(p[name])
    if how == "bytes":
        return damage_bytes(path, rng)
    if how == "format":
        root = path.parent if path.suffix == ".json" else path  # a manifest: the set's files beside it
        files = [q for q in _files_of(root) if q.suffix in (".npy", ".tif", ".tiff", ".png")]
        return damage_format(files[int(rng.integers(len(files)))], rng)
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
    if how == "nifti":
        p[name], what = damage_nifti(path, rng)
        return what
    if how == "xml":
        return damage_xml(next(path.glob("*.nml")), rng)
    if how == "runjson":
        return damage_json(path / "exp" / "run.json", rng)
    if how == "cardjson":
        return damage_json(path / f"card{1 + int(rng.integers(2))}.json", rng)
    if how == "occupied":
        if (path / "out.npy").is_file():
            (path / "out.npy").unlink()
        (path / "out.npy").mkdir(exist_ok=True)
        (path / "MAP.tif").write_bytes(b"someone else's map")
        return "occupied folder"
    if how == "file":
        shutil.rmtree(path)
        path.write_bytes(b"a file")
        return "a file where a folder belongs"
    if how == "zarrjson":
        metas = [q for q in path.rglob("*") if q.name in ("zarr.json", ".zarray")]
        return damage_json(metas[int(rng.integers(len(metas)))], rng)
    raise ValueError(how)


def cases(root: Path, n: int, seed: int = 0):
    """``n`` damaged invocations ``(label, argv, folder)``. Only the damaged input is copied into
    the case's own folder (``folder``, which a refusal must name); the others are read from the
    shared valid copy. A case of option damage has ``folder`` None (a usage error names the option)."""
    rng = np.random.default_rng(seed)
    base = Path(root) / "valid"
    paths = build(base)
    names = sorted(INPUTS)
    for i in range(n):
        command = names[i % len(names)]
        here = Path(root) / f"case{i}"
        p = dict(paths)
        if OPTIONS[command] and rng.random() < 0.25:
            argv = commands(p)[command]
            what = damage_option(argv, command, rng)
            folder = None
        else:
            name, how = INPUTS[command][int(rng.integers(len(INPUTS[command])))]
            src = Path(paths[name])
            here.mkdir(parents=True)
            dst = here / src.name
            if name == "manifest":  # a held-out set is its folder: the manifest names files beside it
                shutil.copytree(src.parent, here / src.parent.name)
                src = dst = here / src.parent.name / src.name
            if src == dst:
                pass
            elif src.is_dir():
                shutil.copytree(src, dst)
            else:
                shutil.copy2(src, dst)
                if how == "npyarray" and src.suffix != ".npy":
                    shutil.copy2(src.with_suffix(".npy"), dst.with_suffix(".npy"))
            p[name] = dst
            what = _apply(p, name, how, rng)
            what = f"{name} {what}"
            argv = commands(p)[command] if name != "audit_cases" else \
                ["audit", "--cases", str(p["audit_cases"]), "--n-boot", "20", "--quiet"]
            folder = str(here)
        yield f"{command}: {what}", argv + (["--json"] if command not in ("run",) else []), folder
