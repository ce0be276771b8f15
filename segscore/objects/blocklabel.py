"""Connected components of an image too large for one process, built from blocks joined on faces.

:func:`blockwise_labels` labels every block of a rectilinear grid on its own (one engine task per
block: :func:`segscore.metrics.masks.components`, the whole-volume labeller), keeps each block's six
faces, and joins neighbouring blocks (across a face, an edge or a corner, as the connectivity
allows) in the engine's merges, in a tree on dask, a running fold on threads: a merge pairs the
labels of touching voxels of one class (:func:`segscore.kernels.blocklabel.face_pairs`) and lets go
of the faces of blocks whose neighbours are all in. What reaches the caller is small: per block its
label count, each label's class and first voxel, and the pairs. A union-find over the pairs
(:func:`segscore.kernels.blocklabel.join_pairs`) then gives each block a lookup from its labels to
the final ones. This is dask-image's ``label`` (offset, face adjacency, components, relabel) without
its whole-graph step; the graph here is the face table only.

The numbering is the whole-volume one, exactly (:func:`segscore.metrics.masks.components`): class by
class in increasing class value, within a class in C order of each component's first voxel (as
``scipy.ndimage.label``), so it depends on neither the blocks nor the workers; tests pin it.

The labels are read back through :class:`segscore.io.computed.ComputedSource`, which relabels a
block when a window needs it (``BlockLabels.source``): the labels are never held whole.
Memory: a task holds its block's values and labels (the source's dtype plus 4 bytes per voxel,
and the labeller's scratch), the faces of the blocks whose neighbours are not all in (a layer of
blocks on threads), and the caller 24 bytes per block label plus 16 per face pair.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from segscore.errors import ScoreError

#: the 26 neighbour directions of a block in the grid (3D; a 2D image is one plane of blocks)
_DIRECTIONS = [e for e in itertools.product((-1, 0, 1), repeat=3) if any(e)]


def _as_values(block, name):
    from segscore.objects.table import as_labels

    return as_labels(block, name)


def _cuts_of(windows, shape3):
    """Each axis's block boundaries of ``windows`` (3D), and the windows in raster order of the grid;
    ScoreError unless they tile the image as a rectilinear grid."""
    cuts = []
    for axis, n in enumerate(shape3):
        edges = sorted({int(w[axis].start) for w in windows} | {int(w[axis].stop) for w in windows})
        if edges[0] != 0 or edges[-1] != n:
            raise ScoreError(f"blocks along axis {axis} cover {edges[0]}..{edges[-1]}, not the image's 0..{n}")
        cuts.append(np.asarray(edges, np.int64))
    cells = {tuple((int(w[a].start), int(w[a].stop)) for a in range(3)) for w in windows}
    grid = [list(zip(c[:-1].tolist(), c[1:].tolist())) for c in cuts]
    if len(cells) != len(windows) or len(windows) != int(np.prod([len(g) for g in grid])) or \
            any(cell not in cells for cell in itertools.product(*grid)):
        raise ScoreError("the blocks do not tile the image as a grid (every axis cut at the same places)")
    return cuts


@dataclass
class _Blocks:
    """The recipe of one block's values and labels (picklable: what a dask worker receives)."""

    source: object
    cuts: tuple
    connectivity: int
    planar: bool
    prepare: object = None

    @property
    def grid(self):
        return tuple(len(c) - 1 for c in self.cuts)

    def window3(self, index):
        return tuple(slice(int(c[i]), int(c[i + 1])) for c, i in zip(self.cuts, index))

    def values(self, index, raw=None):
        """Block ``index``'s class values (3D; uint8 for a bool mask)."""
        w = self.window3(index)
        if raw is None:
            raw = self.source.read(w[1:] if self.planar else w)
        v = np.asarray(self.prepare(raw) if self.prepare is not None else _as_values(raw, self.source.name))
        if v.dtype == np.bool_:
            v = v.view(np.uint8)
        return v.reshape(tuple(s.stop - s.start for s in w))

    def labels(self, values):
        from segscore.metrics.masks import components

        v = values[0] if self.planar else values
        if v.size and v.max() <= 1:  # a binary block: no classes to find (np.unique sorts the block)
            v = v.view(np.bool_) if v.dtype.itemsize == 1 else v != 0
        lab = components(v, self.connectivity)
        return lab.reshape(values.shape)


@dataclass
class _Relabel:
    """``compute(index)`` of the labels' :class:`~segscore.io.computed.ComputedSource`."""

    blocks: _Blocks
    lookups: dict
    dtype: object

    def __call__(self, index):
        v = self.blocks.values(index)
        lab = self.blocks.labels(v)
        out = self.lookups[index][lab].astype(self.dtype, copy=False)
        return out[0] if self.blocks.planar else out


class BlockLabels:
    """The result of :func:`blockwise_labels`: ``count`` components; ``face_pairs`` (K, 2) int64 the
    joined pairs (provisional ids: a block's labels offset by the labels of the blocks before it in
    raster order, from 0); ``source`` the labels as a source; ``read(window)`` one window of them."""

    def __init__(self, source, count, face_pairs, cuts):
        self.source = source
        self.count = int(count)
        self.face_pairs = face_pairs
        self.cuts = cuts

    @property
    def shape(self):
        return self.source.shape

    def read(self, window):
        return self.source.read(window)

    def read_all(self):
        return self.source.read_all()


def _leaves(tree):
    """The items of a tree of lists (``[left, right, items]``), left to right, without recursion."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if len(node) == 3 and isinstance(node[0], list) and isinstance(node[1], list):
            stack.extend((node[2], node[1], node[0]))
        else:
            for item in node:
                yield item


def _neighbours(index, grid):
    for e in _DIRECTIONS:
        h = tuple(i + d for i, d in zip(index, e))
        if all(0 <= x < n for x, n in zip(h, grid)):
            yield e, h


def _slab(faces, e):
    """The labels and values of a block's voxels touching its neighbour in direction ``e``."""
    k0 = next(k for k in range(3) if e[k])
    lab, val = faces[k0][0 if e[k0] < 0 else 1]
    cut = tuple(slice(None) if k == k0 or not e[k] else (slice(0, 1) if e[k] < 0 else slice(-1, None))
                for k in range(3))
    return np.ascontiguousarray(lab[cut]), np.ascontiguousarray(val[cut])


@functools.lru_cache(maxsize=None)
def _offsets(e, rank):
    """Displacements within the slabs from a voxel of the block below to the voxels of the block
    ``e`` away that it touches under ``rank`` (0 on the crossed axes)."""
    out = []
    for d in itertools.product((-1, 0, 1), repeat=3):
        if any(e[k] and d[k] != e[k] for k in range(3)) or not 0 < np.count_nonzero(d) <= rank:
            continue
        out.append(tuple(0 if e[k] else d[k] for k in range(3)))
    return np.asarray(out, np.int64).reshape(-1, 3)


def _pairs(lower, upper, e, rank):
    """Face pairs (labels of ``lower``, labels of ``upper``) of two blocks, ``upper`` ``e`` away."""
    from segscore.kernels.blocklabel import face_pairs

    offs = _offsets(e, rank)
    if not len(offs):
        return None
    la, va = _slab(lower["faces"], e)
    lb, vb = _slab(upper["faces"], tuple(-x for x in e))
    pa = np.empty(la.size * len(offs), np.int64)
    pb = np.empty_like(pa)
    k = face_pairs(la, va, lb, vb, offs, pa, pb)
    if not k:
        return None
    pairs = np.unique(np.stack([pa[:k], pb[:k]], axis=1), axis=0)
    return pairs


def blockwise_labels(source, *, connectivity, windows=None, halo=0, tile_rows=None, executor=None, threads=None,
                     progress=None, name=None, prepare=None) -> BlockLabels:
    """The connected components of each class of ``source`` (a 2D or 3D source of class values, a
    binary or semantic mask) built block by block (module docstring): the same labels as
    :func:`segscore.metrics.masks.components` on the whole image, whatever the blocks and workers.

    ``connectivity``: 4 or 8 in 2D; 6, 18 or 26 in 3D. ``windows``: the blocks, tiling the image as a
    grid (default: bands of ``tile_rows`` positions of axis 0, else of about 16 M voxels).
    ``halo``: the rows beyond its blocks a reader of the labels reads (each block's first and last
    ``halo`` rows are kept once relabelled, so a neighbour's rim is not relabelled again).
    ``prepare``: a picklable callable turning a block read from ``source`` into class values (default:
    the block as non-negative integer ids, :func:`segscore.objects.table.as_labels`). ``executor``,
    ``threads``, ``progress``: as :func:`segscore.engine.reduce`. ``name``: the labels' source name.
    """
    from segscore.engine import check_options, reduce
    from segscore.engine.plan import plan_bands
    from segscore.io.computed import ComputedSource
    from segscore.kernels.blocklabel import block_summary, join_pairs, roots
    from segscore.metrics.masks import check_connectivity
    from segscore.objects.tiles import TILE_PX

    shape = tuple(int(n) for n in source.shape)
    if len(shape) not in (2, 3):
        raise ScoreError(f"{source.name}: components of shape {shape}; expected a 2D or 3D image")
    rank = check_connectivity(connectivity, len(shape))
    engine = check_options(tile_rows=tile_rows, halo=halo, executor=executor, threads=threads)
    planar = len(shape) == 2
    shape3 = (1,) + shape if planar else shape
    if windows is None:
        per_row = max(int(np.prod(shape[1:], dtype=np.int64)), 1)
        windows = plan_bands(shape, tile_rows=tile_rows or max(1, TILE_PX // per_row, 4 * int(halo)))
    windows3 = [((slice(0, 1),) + tuple(w)) if planar else tuple(w) for w in windows]
    if any(n == 0 for n in shape3):
        windows3 = []
    cuts = _cuts_of(windows3, shape3) if windows3 else tuple(np.asarray([0, n], np.int64) for n in shape3)
    blocks = _Blocks(source, tuple(cuts), int(connectivity), planar, prepare)
    grid = blocks.grid
    flat = {idx: i for i, idx in enumerate(itertools.product(*(range(n) for n in grid)))}
    order = list(flat)  # raster order of the grid
    big = int(np.prod(shape, dtype=np.int64)) >= 2 ** 31
    origin_of = {idx: np.asarray([int(c[i]) for c, i in zip(cuts, idx)], np.int64) for idx in order}
    shape_arr = np.asarray(shape3, np.int64)

    def reach(j, side):
        """The raster index of block ``j``'s first (``side`` -1) or last (+1) neighbour (or itself)."""
        return flat[tuple(min(max(i + side, 0), n - 1) for i, n in zip(j, grid))]

    def task(tile, raw):
        index = order[tile.index]
        v = blocks.values(index, raw)
        lab = blocks.labels(v)
        n = int(lab.max(initial=0))
        first = np.full(n + 1, -1, np.int64)
        cls = np.zeros(n + 1, np.uint64)
        block_summary(lab, v, origin_of[index], shape_arr, first, cls)
        faces = [((lab.take([0], axis=k), v.take([0], axis=k)), (lab.take([-1], axis=k), v.take([-1], axis=k)))
                 for k in range(3)]
        rec = {"n": n, "first": first[1:], "cls": cls[1:], "faces": faces, "reach": (reach(index, -1), reach(index, 1))}
        # closed: records whose faces are let go; closed and pairs are trees of pairs of lists
        # (flattened at the end), so a merge costs what its open faces cost, not the blocks so far
        return {"lo": tile.index, "hi": tile.index + 1, "open": {index: rec}, "closed": [], "pairs": []}

    def merge(a, b):
        pairs = []
        for j, rec in b["open"].items():
            for e, h in _neighbours(j, grid):
                other = a["open"].get(h)
                if other is None:
                    continue
                p = _pairs(other, rec, tuple(-x for x in e), rank)  # from h (earlier in raster order) to j
                if p is not None:
                    pairs.append((h, j, p))
        lo, hi = a["lo"], b["hi"]
        still, closed = {}, []
        for j, rec in itertools.chain(a["open"].items(), b["open"].items()):
            if lo <= rec["reach"][0] and rec["reach"][1] < hi:  # every neighbour is in (the range is contiguous)
                closed.append((j, {**rec, "faces": None, "reach": None}))
            else:
                still[j] = rec
        return {"lo": lo, "hi": hi, "open": still, "closed": [a["closed"], b["closed"], closed],
                "pairs": [a["pairs"], b["pairs"], pairs]}

    if windows3:
        wins = [blocks.window3(idx) for idx in order]
        wins = [w[1:] for w in wins] if planar else wins
        out = reduce(lambda w: (source.read(w),), task, merge, windows=wins, progress=progress, **engine)
        recs = dict(_leaves(out["closed"]))
        recs.update(out["open"])
        found = list(_leaves(out["pairs"]))
    else:
        recs, found = {}, []
    # offsets of each block's labels in one provisional numbering (raster order of the grid)
    counts = np.asarray([recs[idx]["n"] for idx in order] if windows3 else [], np.int64)
    offset = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    start = {idx: int(offset[i]) for i, idx in enumerate(order)}
    total = int(offset[-1])
    if found:
        gp = np.concatenate([np.stack([p[:, 0] - 1 + start[h], p[:, 1] - 1 + start[j]], axis=1)
                             for h, j, p in found])
        gp = np.unique(gp, axis=0)
    else:
        gp = np.zeros((0, 2), np.int64)
    parent = np.arange(total, dtype=np.int64)
    join_pairs(parent, np.ascontiguousarray(gp[:, 0]), np.ascontiguousarray(gp[:, 1]))
    root = np.empty(total, np.int64)
    roots(parent, root)
    first = np.concatenate([recs[idx]["first"] for idx in order]) if total else np.zeros(0, np.int64)
    cls = np.concatenate([recs[idx]["cls"] for idx in order]) if total else np.zeros(0, np.uint64)
    lowest = np.full(total, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(lowest, root, first)
    heads = np.flatnonzero(root == np.arange(total))
    ranked = heads[np.lexsort((lowest[heads], cls[heads]))]
    number = np.zeros(total, np.int64)
    number[ranked] = np.arange(1, ranked.size + 1)
    final = number[root]
    dtype = np.int64 if big else np.int32
    lookups = {idx: np.concatenate([[0], final[start[idx]:start[idx] + recs[idx]["n"]]]).astype(dtype)
               for idx in order} if windows3 else {}
    relabel = _Relabel(blocks, lookups, dtype)
    cuts_src = tuple(cuts[1:]) if planar else tuple(cuts)
    labels = ComputedSource(_Planar(relabel) if planar else relabel, cuts_src, dtype,
                            name or f"<components of {source.name}>", rim=int(halo),
                            keep=max(16, 4 * int(threads or 2)), closer=getattr(source, "close", None))
    return BlockLabels(labels, int(heads.size), gp, cuts)


@dataclass
class _Planar:
    """A 2D image's block recipe, indexed by its two axes."""

    relabel: _Relabel

    def __call__(self, index):
        return self.relabel((0,) + tuple(index))


def blockwise_components(truth, pred, connectivity, *, halo=0, tile_rows=None, executor=None, threads=None,
                         progress=None):
    """``(truth labels, prediction labels, warnings)`` as :func:`segscore.objects.metrics.prepare_masks`
    with ``components`` returns them, the labels as sources computed block by block
    (:func:`blockwise_labels`) in bands of the objects pass's tiles: nothing is held whole."""
    from segscore.engine.executor import default_workers
    from segscore.io.readers import open_labels
    from segscore.metrics.masks import check_connectivity
    from segscore.objects.tiles import label_tiles

    ts = open_labels(truth, name="truth")
    ps = open_labels(pred, name="prediction")
    if ts.shape != ps.shape:
        ts.close()
        ps.close()
        raise ScoreError(f"{ps.name} {ps.shape} and {ts.name} {ts.shape} are different shapes; "
                         "score a prediction on its truth's grid")
    check_connectivity(connectivity, len(ts.shape))
    windows = label_tiles(ts.shape, halo, tile_rows=tile_rows, in_memory=False, executor=executor, threads=threads)
    out = []
    for src in (ts, ps):
        out.append(blockwise_labels(src, connectivity=connectivity, windows=windows, halo=halo, executor=executor,
                                    threads=threads or default_workers(), progress=progress, name=src.name).source)
    return out[0], out[1], [f"instances are the {connectivity}-connected components of each class of both images"]


def wants_blockwise(truth, pred, executor) -> bool:
    """Whether ``components`` are built block by block (:func:`blockwise_components`): when an
    input is not an array in memory (a path, a memory map, zarr, dask, a source) or the executor is
    a ``distributed.Client``; arrays in memory on this process are labelled whole (faster there)."""
    if executor is not None and not isinstance(executor, str):
        return True
    return not all(isinstance(x, np.ndarray) and not isinstance(x, np.memmap) for x in (truth, pred))
