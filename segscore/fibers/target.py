"""Read a ScrollGT fiber target directory: ``skeleton.npz``, ``mask.npz``, ``meta.json``.

- ``skeleton.npz``: ``coords`` (N, 3) float32 z, y, x in cube voxels; ``edges`` (E, 2) with
  *global* node indices; ``fiber_offsets`` (F + 1) into the nodes and ``edge_offsets``
  (F + 1) into the edges; ``fiber_ids``; ``fiber_names`` is an object array and is skipped
  (the file is read with ``allow_pickle=False``, so it is never unpickled).
- ``mask.npz``: ``packed`` (``numpy.packbits``, big-endian bit order) and ``shape``; the bits
  are trimmed to the shape.
- ``meta.json``: tolerance, size class, split, the published floors and oracle.

A node is in bounds when ``0 <= c <= shape - 1`` on its float coordinates; fibers with fewer
than two in-bounds nodes are not scored (ScrollGT's filter, which its published floors use).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError
from segscore.io.paths import check_readable

#: the largest fiber tolerance, in voxels, a target or a card may state (the ball of offsets grows
#: as its cube: beyond this it is a damaged file, not a tolerance)
MAX_TOLERANCE = 64.0

FILES = ("skeleton.npz", "mask.npz", "meta.json")
SKELETON_KEYS = ("coords", "edges", "fiber_offsets", "edge_offsets", "fiber_ids")


@dataclass
class FiberTarget:
    """One fiber target, with only its scored fibers kept.

    ``coords`` holds every node (float64); ``edges`` (global node indices) and
    ``edge_offsets`` (F + 1) and ``node_start``/``node_stop`` (F) describe the scored fibers only, in stored order.
    """

    path: str
    meta: dict
    shape: tuple[int, int, int]
    coords: np.ndarray
    edges: np.ndarray
    edge_offsets: np.ndarray
    node_start: np.ndarray
    node_stop: np.ndarray
    fiber_ids: np.ndarray
    n_fibers_total: int
    _mask: np.ndarray | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.meta.get("target_id") or os.path.basename(os.path.normpath(self.path)))

    @property
    def n_fibers(self) -> int:
        return len(self.fiber_ids)

    @property
    def tolerance(self) -> float:
        tol = self.meta.get("tolerance")
        return 2.0 if tol is None else float(tol)

    @property
    def size_class(self) -> int:
        size = self.meta.get("size_class")
        return int(self.shape[0]) if size is None else int(size)

    @property
    def mask(self) -> np.ndarray:
        """The reference mask, bool (Z, Y, X), unpacked on first use."""
        if self._mask is None:
            self._mask = _read_mask(Path(self.path) / "mask.npz", self.shape)
        return self._mask


def _meta_fields():
    """The meta.json fields a fiber target may carry (io.schema); the tolerance's bound keeps
    the search ball small (a 64-voxel ball has 1.1 M offsets)."""
    from segscore.io.schema import Field

    return (
        Field("tolerance", (float,), lo=0, hi=MAX_TOLERANCE),
        Field("size_class", (int,), lo=1),
        Field("shape", (list,), length=3, items=int, lo=1),
        Field("target_id", (str,)),
        Field("split", (str,)),
        Field("floors", (dict,)),
        Field("ground_truth", (dict,)),
        Field("ground_truth.n_fibers_scored", (int,), lo=0),
        Field("floors_scoring_version", (str, int)),
    )


#: the metrics row of a published floor or oracle (meta.json ``floors.NAME``) and of a card:
#: (field, types, lo, hi)
ROW_FIELDS = (("erl", (float,), 0, None), ("erl_merge_penalized", (float,), 0, None), ("coverage", (float,), 0, 1),
              ("precision", (float,), 0, 1), ("splits", (int,), 0, None), ("merges", (int,), 0, None),
              ("merged_instances", (int,), 0, None), ("n_pred_instances", (int,), 0, None))


def row_fields(prefix: str):
    """The schema fields (io.schema) of a metrics row at ``prefix`` (``floors.oracle``, ``metrics``)."""
    from segscore.io.schema import Field

    return tuple(Field(f"{prefix}.{name}", types, lo=lo, hi=hi) for name, types, lo, hi in ROW_FIELDS)


def _floor_fields(meta: dict):
    """The fields of every published floor and the oracle in ``meta`` (``floors.oracle``,
    ``floors.floor_*``): each an object whose metrics are numbers of the right kind, or null."""
    from segscore.io.schema import Field

    floors = meta.get("floors") if isinstance(meta.get("floors"), dict) else {}
    out = []
    for key in floors:
        if key == "oracle" or str(key).startswith("floor_"):
            out.append(Field(f"floors.{key}", (dict,)))
            if isinstance(floors[key], dict):
                out.extend(row_fields(f"floors.{key}"))
    return tuple(out)


def _npz(path: Path):
    from segscore.io.targets import read_npz

    return read_npz(path)


_REBUILD = "rebuild the target with `segscore fibers-target`"


def _cube_shape(value, path: Path) -> tuple[int, int, int]:
    """A ``shape`` array of a target's npz as (Z, Y, X); refused unless three positive whole numbers."""
    a = np.asarray(value)
    whole = a.dtype.kind in "iu" or (a.dtype.kind == "f" and bool(np.all(np.isfinite(a))) and bool(np.all(a == np.round(a))))
    if a.ndim != 1 or a.size != 3 or not whole or bool(np.any(a < 1)):
        shown = a.tolist() if a.size <= 8 else f"an array of shape {a.shape}"
        raise ScoreError(f"{path}: 'shape' is {shown} ({a.dtype}); a fiber target's shape is three positive whole "
                         f"numbers (Z, Y, X): {_REBUILD}")
    return tuple(int(v) for v in a)


def _read_mask(path: Path, shape) -> np.ndarray:
    with _npz(path) as npz:
        for key in ("packed", "shape"):
            if key not in npz.files:
                raise ScoreError(f"{path}: no '{key}' array; a fiber mask holds 'packed' and 'shape'")
        mshape = _cube_shape(npz["shape"], path)
        if mshape != tuple(shape):
            raise ScoreError(f"{path}: mask shape {mshape} differs from the target's shape {tuple(shape)}")
        packed = npz["packed"]
    n = int(np.prod(mshape, dtype=np.int64))
    if packed.dtype != np.uint8:
        raise ScoreError(f"{path}: 'packed' holds {packed.dtype} values, not the uint8 bytes numpy.packbits "
                         f"writes; {_REBUILD}")
    if packed.ndim != 1:
        raise ScoreError(f"{path}: 'packed' is a {packed.ndim}D array of shape {packed.shape}, not the flat "
                         f"numpy.packbits of the whole {mshape} cube; {_REBUILD}")
    if packed.size != (n + 7) // 8:  # more bytes: a larger cube's mask under a rewritten shape
        raise ScoreError(f"{path}: 'packed' holds {packed.size} bytes; the {mshape} cube of its 'shape' packs "
                         f"into {(n + 7) // 8}; {_REBUILD}")
    bits = np.unpackbits(packed, count=n, bitorder="big")
    return bits.view(bool).reshape(mshape)


def load_target(path) -> FiberTarget:
    """Read a target directory; refuse a missing file or inconsistent arrays (ScoreError)."""
    root = Path(path)
    if not root.is_dir():
        raise InputFileError(f"{path}: no such target folder; give a fiber target directory "
                             f"holding {', '.join(FILES)}")
    for name in FILES:
        check_readable(root / name, f"target's {name}")
        if not (root / name).is_file():
            raise InputFileError(f"{root / name}: missing; a fiber target directory holds {', '.join(FILES)}")
    from segscore.io.schema import validate
    from segscore.io.targets import read_meta

    meta = validate(read_meta(root, required=True), _meta_fields(), root / "meta.json")
    validate(meta, _floor_fields(meta), root / "meta.json")

    skel_path = root / "skeleton.npz"
    with _npz(skel_path) as npz:
        missing = [k for k in SKELETON_KEYS if k not in npz.files]
        if missing:
            raise ScoreError(f"{skel_path}: missing arrays {missing}; a fiber skeleton holds {list(SKELETON_KEYS)}")
        arrays = {k: npz[k] for k in SKELETON_KEYS}  # fiber_names (object dtype) is never loaded
        file_shape = _cube_shape(npz["shape"], skel_path) if "shape" in npz.files else None
        with _npz(root / "mask.npz") as mnpz:
            if "shape" not in mnpz.files:
                raise ScoreError(f"{root / 'mask.npz'}: no 'shape' array; a fiber mask holds 'packed' and 'shape'")
            shape = _cube_shape(mnpz["shape"], root / "mask.npz")
    if meta.get("shape") is not None and tuple(int(v) for v in meta["shape"]) != shape:
        raise ScoreError(f"{root}: meta.json shape {tuple(meta['shape'])} differs from mask.npz shape {shape}")
    if file_shape is not None and file_shape != shape:
        raise ScoreError(f"{skel_path}: shape {file_shape} differs from mask.npz shape {shape}")

    coords = np.asarray(arrays["coords"], dtype=np.float64)
    edges = np.asarray(arrays["edges"]).astype(np.int64)
    f_off = np.asarray(arrays["fiber_offsets"]).astype(np.int64)
    e_off = np.asarray(arrays["edge_offsets"]).astype(np.int64)
    ids = np.asarray(arrays["fiber_ids"]).astype(np.int64)
    nf = len(ids)
    ok = (coords.ndim == 2 and coords.shape[1] == 3 and edges.ndim == 2 and edges.shape[1] == 2
          and f_off.shape == (nf + 1,) and e_off.shape == (nf + 1,)
          and f_off[0] == 0 and e_off[0] == 0 and f_off[-1] == len(coords) and e_off[-1] == len(edges)
          and np.all(np.diff(f_off) >= 0) and np.all(np.diff(e_off) >= 0))
    if not ok:
        raise ScoreError(f"{skel_path}: coords/edges/offsets are inconsistent ({len(coords)} nodes, "
                         f"{len(edges)} edges, {nf} fibers); restore the target's skeleton.npz")
    if not np.all(np.isfinite(coords)):
        raise ScoreError(f"{skel_path}: coords hold NaN or infinite values")
    # edges are global node indices: each fiber's edges must stay inside its own nodes
    owner_lo = np.repeat(f_off[:-1], np.diff(e_off))
    owner_hi = np.repeat(f_off[1:], np.diff(e_off))
    if len(edges) and (np.any(edges < owner_lo[:, None]) or np.any(edges >= owner_hi[:, None])):
        raise ScoreError(f"{skel_path}: an edge joins nodes outside its own fiber; edges must hold "
                         f"global node indices within the fiber's fiber_offsets range")

    hi = np.asarray(shape, dtype=np.float64) - 1
    inb = np.all((coords >= 0) & (coords <= hi), axis=1)
    n_in = np.add.reduceat(inb.astype(np.int64), f_off[:-1]) if len(coords) else np.zeros(nf, np.int64)
    n_in = np.where(np.diff(f_off) > 0, n_in, 0)
    scored = np.flatnonzero(n_in > 1)

    expected = (meta.get("ground_truth") or {}).get("n_fibers_scored")
    if expected is not None and int(expected) != len(scored):
        raise ScoreError(f"{root}: {len(scored)} fibers have two or more in-bounds nodes but meta.json's "
                         f"ground_truth.n_fibers_scored is {expected}; skeleton.npz and meta.json are out of sync")

    sel_edges = [edges[e_off[i]:e_off[i + 1]] for i in scored]
    edge_counts = np.array([len(e) for e in sel_edges], dtype=np.int64)
    return FiberTarget(
        path=str(root),
        meta=meta,
        shape=shape,
        coords=np.ascontiguousarray(coords),
        edges=np.ascontiguousarray(np.concatenate(sel_edges) if len(sel_edges) else np.zeros((0, 2), np.int64)),
        edge_offsets=np.concatenate([[0], np.cumsum(edge_counts)]).astype(np.int64),
        node_start=np.ascontiguousarray(f_off[scored]),
        node_stop=np.ascontiguousarray(f_off[scored + 1]),
        fiber_ids=ids[scored],
        n_fibers_total=nf,
    )
