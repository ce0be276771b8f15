"""Build a fiber target folder from WEBKNOSSOS ``.nml`` traces and a reference fiber mask.

The folder is the one :func:`segscore.fibers.target.load_target` reads (and ScrollGT's
``score-fibers`` too): ``skeleton.npz`` (every traced fiber, nodes ``z, y, x`` in cube voxels,
edges as global node indices, in file order), ``mask.npz`` (the mask packed with
``numpy.packbits``) and ``meta.json`` (shape, origin, tolerance, size class, fiber counts and
a convention check). No floors are published: ``segscore fibers`` computes them from the
target itself when it scores.

Origin rule: ``origin=`` (``--origin Z Y X``) when given; otherwise every ``.nml`` file's name
must give the cube (``<scroll>_<z>_<y>_<x>_<size>``, see :mod:`segscore.io.nml`), all files
the same cube, whose size must match the mask's shape.

The folder is written whole into a temporary folder beside it, checked by reading it back,
then renamed into place; an existing non-empty folder is replaced only with ``force``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError
from segscore.fibers.target import MAX_TOLERANCE

DEFAULT_TOLERANCE = 2.0
#: the meta.json bound on the tolerance (segscore.fibers.target)
_UNITS_UM = {"micrometer": 1.0, "micrometre": 1.0, "um": 1.0, "µm": 1.0, "nanometer": 1e-3, "nanometre": 1e-3,
             "nm": 1e-3}


def nml_files(nml) -> list[Path]:
    """The ``.nml`` files of ``nml``: the file itself, or a folder's ``*.nml`` sorted by name."""
    p = Path(nml)
    if p.is_dir():
        files = sorted((f for f in p.iterdir() if f.is_file() and f.suffix.lower() == ".nml"), key=lambda f: f.name)
        if not files:
            raise ScoreError(f"{p}: holds no .nml file; give the folder of the cube's WEBKNOSSOS skeletons "
                             f"(or one .nml file)")
        return files
    if not p.exists():
        raise InputFileError(f"{p}: no such file or folder; give a folder of WEBKNOSSOS .nml skeletons or one .nml")
    if p.suffix.lower() != ".nml":
        raise ScoreError(f"{p}: not an .nml file; give a folder of WEBKNOSSOS .nml skeletons or one .nml")
    return [p]


def read_mask(path) -> np.ndarray:
    """The reference fiber mask at ``path`` as bool ``(Z, Y, X)``.

    A ``.npz`` is read as a fiber target's ``mask.npz`` (``packed`` bits and ``shape``); any
    other file (``.npy``, TIFF, zarr, ...) as a volume, where a non-zero integer is fiber and a
    float volume must hold only 0 and 1 (a probability map is refused: threshold it first).
    """
    name = os.fspath(path)
    if not os.path.exists(name):
        raise InputFileError(f"{name}: no such file or folder; give the reference fiber mask of the cube "
                             f"(.npy, .tif, zarr, or a target's mask.npz)")
    if name.lower().endswith(".npz"):
        return _packed_mask(Path(name))
    from segscore.io.readers import open_labels

    source = open_labels(name, what="fiber mask", ndims=(3,))
    try:
        arr = np.asarray(source.read_all())
    finally:
        source.close()
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "f":
        if not np.all((arr == 0) | (arr == 1)):
            raise ScoreError(f"{name}: a float fiber mask holding values other than 0 and 1; threshold the "
                             f"probability map first (ScrollGT's mask is fiber_hz_vt at P >= 0.5)")
        return arr == 1
    return arr != 0


def _packed_mask(path: Path) -> np.ndarray:
    from segscore.fibers.target import _read_mask
    from segscore.io.targets import read_npz

    with read_npz(path) as npz:
        for key in ("packed", "shape"):
            if key not in npz.files:
                raise ScoreError(f"{path}: no '{key}' array; a packed fiber mask holds 'packed' and 'shape' "
                                 f"(or give the mask as .npy or .tif)")
        raw = np.asarray(npz["shape"])
    if raw.shape != (3,) or raw.dtype.kind not in "iu" or np.any(raw < 1):
        raise ScoreError(f"{path}: its 'shape' array is {raw.tolist()!r}, not three positive whole numbers; "
                         f"restore the mask file")
    return _read_mask(path, tuple(int(v) for v in raw))


def _voxel_size_um(scale, unit):
    if scale is None or unit is None or unit.strip().lower() not in _UNITS_UM:
        return None
    return tuple(float(v) * _UNITS_UM[unit.strip().lower()] for v in scale)


def _cube_from_names(files):
    """The one cube every file name gives; refused when a name gives none or another."""
    from segscore.io.nml import NAME_RULE, cube_from_name

    cubes = []
    for f in files:
        cube = cube_from_name(f)
        if cube is None:
            raise ScoreError(f"{f}: the file name gives no cube origin; {NAME_RULE}, or pass --origin Z Y X")
        cubes.append(cube)
    first = cubes[0]
    for f, cube in zip(files, cubes):
        if (cube.origin_zyx, cube.size) != (first.origin_zyx, first.size):
            raise ScoreError(f"{f}: its name gives the {cube.size}^3 cube at z, y, x {cube.origin_zyx}, but "
                             f"{files[0].name} gives the {first.size}^3 cube at {first.origin_zyx}; a target is one "
                             f"cube: give the files of one cube, or pass --origin Z Y X")
    return first


def _check_size(first, files, mask_name, shape) -> None:
    """The size a file name gives must be the mask's on every axis."""
    if any(s != first.size for s in shape):
        region = (" (a villa annotation name gives the annotated region; the dataset's cube around it is larger: "
                  "fibers_s5_06500z_02000y_04000x_500 lies in cube s5_06494_01994_03994_512)"
                  if first.form == "region" else "")
        raise ScoreError(f"{files[0]}: its name gives a {first.size}^3 cube at z, y, x {first.origin_zyx}, but the "
                         f"mask {mask_name} is shaped {tuple(shape)}{region}; give the mask of that cube, or pass "
                         f"--origin Z Y X")


def _check_out(out: Path, force: bool, inputs) -> bool:
    """Refuse an ``out`` that cannot be written; True when it exists and will be replaced."""
    if out.exists() and not out.is_dir():
        raise ScoreError(f"{out}: is a file, not a folder; give a new or empty folder for the target")
    if not out.is_dir() or not any(out.iterdir()):
        return False
    if not force:
        raise ScoreError(f"{out}: already holds files; give a new or empty folder, or pass --force to replace it")
    root = out.resolve()
    for p in inputs:
        rp = Path(p).resolve()
        if rp == root or root in rp.parents:
            raise ScoreError(f"{out}: holds the input {p}, which replacing the folder would delete; write the "
                             f"target to another folder")
    return True


def _write_array_file(path: Path, **arrays) -> None:
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)
        fh.flush()
        os.fsync(fh.fileno())


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _place(tmp: Path, out: Path, replace: bool) -> None:
    """Rename the finished ``tmp`` folder to ``out`` (an existing ``out`` moved aside first
    when ``replace``, and restored if the rename fails)."""
    if out.is_dir() and not any(out.iterdir()):
        out.rmdir()
    if not out.exists():
        try:
            os.rename(tmp, out)
        except OSError:
            if out.exists():  # someone wrote there meanwhile
                raise ScoreError(f"{out}: appeared while the target was built; give a new or empty folder, or "
                                 f"pass --force to replace it") from None
            raise
        return
    if not replace:
        raise ScoreError(f"{out}: appeared while the target was built; give a new or empty folder, or pass --force "
                         f"to replace it")
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def build_target(nml, mask, out, *, origin=None, tolerance: float = DEFAULT_TOLERANCE, shape=None,
                 force: bool = False) -> dict:
    """Write the fiber target folder ``out`` from the traces ``nml`` (a folder of ``.nml`` files
    or one file) and the reference fiber ``mask`` (the truth is the traces; the mask is what
    every floor labels); return a summary (``notes`` always present).

    ``origin`` (z, y, x) overrides the file names' origin; ``shape`` (z, y, x), when given,
    must be the mask's; ``tolerance`` (voxels) goes to meta.json. Refused (ScoreError): a
    malformed ``.nml``, names without or with different cubes, a cube size other than the
    mask's, an empty mask, traces with no fiber of two nodes inside the cube (a wrong origin),
    and an existing non-empty ``out`` unless ``force``.
    """
    import math

    from segscore._version import __version__
    from segscore.io.nml import check_origin, read_nml
    from segscore.io.results import dumps

    tol = float(tolerance)
    if not math.isfinite(tol) or not 0 <= tol <= MAX_TOLERANCE:
        raise ScoreError(f"tolerance {tolerance!r}: give a distance in voxels from 0 to {MAX_TOLERANCE:g}")
    given_out = os.fspath(out)
    out = Path(out)
    files = nml_files(nml)
    replace = _check_out(out, force, [nml, mask])
    given_origin = None if origin is None else check_origin(origin)
    cube = None if given_origin is not None else _cube_from_names(files)  # before a large mask is read
    cube_shape = None
    if shape is not None:
        try:
            cube_shape = tuple(int(v) for v in shape)
        except (TypeError, ValueError):
            cube_shape = ()
        if len(cube_shape) != 3 or min(cube_shape) < 1 or list(cube_shape) != [float(v) for v in shape]:
            raise ScoreError(f"shape {shape!r}: give three positive whole numbers z, y, x")

    vol = read_mask(mask)
    mask_name = os.fspath(mask)
    if cube_shape is not None and tuple(vol.shape) != cube_shape:
        raise ScoreError(f"{mask_name}: shaped {tuple(vol.shape)}, but --shape gives {cube_shape}; give the mask "
                         f"of the cube, or drop --shape")
    cube_shape = tuple(int(v) for v in vol.shape)
    n_mask = int(np.count_nonzero(vol))
    if n_mask == 0:
        raise ScoreError(f"{mask_name}: the fiber mask holds no fiber voxel; give the cube's reference mask")
    if cube is not None:
        _check_size(cube, files, mask_name, cube_shape)
    org = given_origin if given_origin is not None else cube.origin_zyx

    skeletons = [read_nml(f, origin=org) for f in files]
    sizes = {tuple(s.scale_zyx) + (s.scale_unit,) for s in skeletons if s.scale_zyx is not None}
    if len(sizes) > 1:
        raise ScoreError(f"{nml}: the .nml files state different voxel sizes {sorted(map(str, sizes))}; "
                         f"a target is one cube with one voxel size")
    scale = next((s for s in skeletons if s.scale_zyx is not None), None)
    scale_um = _voxel_size_um(scale.scale_zyx, scale.scale_unit) if scale else None

    read_warnings = [w for s in skeletons for w in s.warnings]  # dangling edges dropped, empty files
    trees = [t for s in skeletons for t in s.trees if len(t.node_ids)]
    n_empty = sum(len(s.trees) for s in skeletons) - len(trees)
    if not trees:
        raise ScoreError(f"{nml}: no tree has a node; {'the files hold' if len(files) > 1 else 'it holds'} "
                         f"no traced fiber: give the cube's traced skeletons")
    coords = np.concatenate([t.coords for t in trees])
    counts = np.array([len(t.node_ids) for t in trees], np.int64)
    f_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    e_off = np.concatenate([[0], np.cumsum([len(t.edges) for t in trees])]).astype(np.int64)
    edges = np.concatenate([t.edges + f_off[i] for i, t in enumerate(trees)]).reshape(-1, 2)
    hi = np.asarray(cube_shape, np.float64) - 1
    inb = np.all((coords >= 0) & (coords <= hi), axis=1)
    n_in = np.add.reduceat(inb.astype(np.int64), f_off[:-1])
    n_scored = int(np.count_nonzero(n_in > 1))
    if n_scored == 0:
        where = "the file names'" if given_origin is None else "the given"
        raise ScoreError(f"{nml}: no fiber has two nodes inside the {cube_shape} cube at {where} origin z, y, x "
                         f"{org} ({int(inb.sum())} of {len(coords)} nodes inside); the origin is wrong or the traces "
                         f"belong to another cube: check the file names or --origin Z Y X")
    idx = np.rint(coords[inb]).astype(np.int64)
    landing = float(vol[idx[:, 0], idx[:, 1], idx[:, 2]].mean())
    density = n_mask / float(vol.size)

    coords32 = coords.astype(np.float32)
    stored = coords32 if np.array_equal(coords32.astype(np.float64), coords) else coords
    edge_dtype = np.int32 if len(coords) < 2 ** 31 else np.int64
    arrays = dict(coords=stored, edges=edges.astype(edge_dtype), fiber_offsets=f_off, edge_offsets=e_off,
                  fiber_ids=np.array([t.id for t in trees], np.int64),
                  fiber_names=np.array([t.name for t in trees], dtype=str),
                  origin_zyx=np.asarray(org, np.int64), shape=np.asarray(cube_shape, np.int64))
    if scale_um is not None:
        arrays["scale_um"] = np.asarray(scale_um, np.float64)

    target_id = out.name
    size_class = int(cube_shape[0]) if len(set(cube_shape)) == 1 else int(max(cube_shape))
    rounded = {"landing": round(landing, 6), "density": round(density, 6),
               "enrichment": round(landing / density, 6), "inb": round(float(inb.mean()), 6)}
    meta = {
        "target_id": target_id,
        "family": "fiber_connectivity",
        **({"cube": cube.stem} if cube is not None else {}),
        "shape": list(cube_shape),
        "origin_zyx": list(org),
        "origin_source": "file name" if given_origin is None else "given (--origin)",
        **({"voxel_size_um": scale_um[0]} if scale_um is not None and len(set(scale_um)) == 1 else {}),
        "tolerance": tol,
        "size_class": size_class,
        "ground_truth": {
            "source_files": [f.name for f in files],
            "n_fibers": len(trees),
            "n_fibers_scored": n_scored,
            "n_nodes": int(len(coords)),
            "n_nodes_in_bounds": int(inb.sum()),
            "n_trees_without_nodes": int(n_empty),
            "note": "NML nodes are x, y, z in absolute scroll voxels; stored as z, y, x minus origin_zyx. A fiber "
                    "is scored when two or more of its nodes lie inside the cube (0 <= c <= shape - 1); trees "
                    "without nodes are left out.",
        },
        "mask": {"source_file": os.path.basename(mask_name.rstrip("/")), "density": rounded["density"]},
        "convention_check": {
            "measured_node_landing_rate_on_scoring_mask": rounded["landing"],
            "scoring_mask_density": rounded["density"],
            "landing_enrichment_vs_chance": rounded["enrichment"],
            "in_bounds_node_fraction": rounded["inb"],
        },
        "built_by": f"segscore {__version__} fibers-target",
    }

    step = "folder"
    try:  # a folder that cannot take the target is named as given, not by the temporary folder
        out.parent.mkdir(parents=True, exist_ok=True)
        step = "create"
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as exc:
        from segscore.io.results import OutputFileError

        raise OutputFileError(given_out, step, exc) from None
    try:
        _write_array_file(tmp / "skeleton.npz", **arrays)
        _write_array_file(tmp / "mask.npz", packed=np.packbits(vol.ravel(), bitorder="big"),
                          shape=np.asarray(cube_shape, np.int64))
        _write_text(tmp / "meta.json", dumps(meta) + "\n")
        from segscore.fibers.target import load_target

        check = load_target(tmp)  # the folder reads back as the scorer reads it
        if check.n_fibers != n_scored or check.shape != cube_shape:
            raise RuntimeError(f"the written target reads back with {check.n_fibers} scored fibers and shape "
                               f"{check.shape}, not {n_scored} and {cube_shape}")
        _place(tmp, out, replace)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

    return {
        "target": str(out),
        "target_id": target_id,
        "files": [str(f) for f in files],
        "origin_zyx": list(org),
        "origin_source": meta["origin_source"],
        "shape": list(cube_shape),
        "tolerance": tol,
        "size_class": size_class,
        "n_fibers": len(trees),
        "n_fibers_scored": n_scored,
        "n_trees_without_nodes": int(n_empty),
        "n_nodes": int(len(coords)),
        "n_nodes_in_bounds": int(inb.sum()),
        "n_edges": int(len(edges)),
        "mask_density": density,
        "node_landing_rate": landing,
        "landing_enrichment": landing / density,
        "replaced": bool(replace),
        "notes": {},
        "warnings": read_warnings + (
            [f"nodes inside the cube land on the mask only {landing / density:.1f}x as often as chance; "
             "check the origin (file names or --origin Z Y X) and that the mask is this cube's"]
            if landing / density < LOW_ENRICHMENT else []),
    }


#: below this landing enrichment the summary warns that the origin may be wrong (the shipped
#: ScrollGT cubes measure 13.6x to 16.4x)
LOW_ENRICHMENT = 2.0


def format_summary(result: dict) -> str:
    """The text the command prints: what was built, from what, and how to score it."""
    z, y, x = result["origin_zyx"]
    n_files = len(result["files"])
    lines = [
        f"fiber target {result['target']} ({'replaced' if result['replaced'] else 'written'}) from {n_files} .nml "
        f"file{'s' if n_files != 1 else ''}, origin z {z}, y {y}, x {x} ({result['origin_source']})",
        f"cube {tuple(result['shape'])}, size class {result['size_class']}, tolerance {result['tolerance']:g} "
        f"voxels: {result['n_fibers']} fibers, {result['n_fibers_scored']} scored (two or more nodes inside the "
        f"cube); {result['n_nodes']} nodes ({result['n_nodes_in_bounds']} inside), {result['n_edges']} edges",
        f"mask density {result['mask_density']:.4f}; nodes inside the cube landing on the mask "
        f"{result['node_landing_rate']:.4f} ({result['landing_enrichment']:.1f}x chance)",
    ]
    if result["n_trees_without_nodes"]:
        lines.append(f"note: {result['n_trees_without_nodes']} tree(s) without nodes left out")
    lines.append(f"score a labelling: segscore fibers LABELS {result['target']}")
    return "\n".join(lines)
