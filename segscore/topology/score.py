"""The Vesuvius Challenge surface-detection score (the ``topometrics`` toolkit's leaderboard):

    leaderboard = 0.30 TopoScore + 0.35 SurfaceDice@tau + 0.35 VOI_score

computed on a prediction P and a label volume G of one shape (3D; a 2D image is one slice).

1. **Ignore**: voxels where G equals ``ignore_label`` (default 2) -- or, when ``ignore_mask``
   is given, where it is true *instead* (a float mask as topometrics reads it, ``astype(bool)``:
   NaN and inf ignore) -- take the value 0 in both P and G before anything else. A prediction
   that holds the ignore value while the labels hold none gets a warning: the roles look swapped.
2. **Binarize**: foreground is ``x != 0`` (NaN counts as 0), or ``x > fg_threshold``. A float
   prediction holding values other than 0 and 1 is refused without ``fg_threshold`` (segscore
   will not pick a threshold for you).
3. **TopoScore**: Betti matching (:func:`segscore.metrics.betti.betti_matching`) of ``1 - P``
   and ``1 - G`` (foreground enters first; 6-connected foreground; among simultaneous births
   the lowest C-order cell is the elder, which on binary volumes decides which component is
   essential; essential classes are not counted), on the tiles of ``topo_tiles`` (default
   2 x 2 x 2: halves along each axis, the first half taking the odd voxel, an axis shorter
   than its parts cut into fewer), counts summed over tiles. Per dimension k: m_k matched,
   p_k = m_k + unmatched in P, g_k = m_k + unmatched in G; TopoF1_k = 2 m_k / (p_k + g_k)
   when g_k > 0, 0.5 / (p_k + g_k + 0.5) when g_k = 0 < p_k, null when p_k + g_k = 0.
   TopoScore = sum of ``topo_weights`` (default 0.34, 0.33, 0.33; or a mapping ``{k: w}`` over
   them) times TopoF1_k over the defined dimensions of ``dims`` (default 0, 1, 2: topometrics'
   ``dims``), the weights renormalised over them (all equal if they sum to 0); 1 when none is
   defined. The tiling is part of the definition (the competition's scorer
   tiles in octants); ``topo_tiles=(1, 1, 1)`` gives the whole-volume matching.
4. **SurfaceDice**: DeepMind's surface Dice at ``tolerance`` (default 2.0, in the unit of
   ``spacing``, default 1 per axis) between G and P (:mod:`segscore.topology.surface`); 1 when
   both are empty, 0 when exactly one is.
5. **VOI**: connected components (``voi_connectivity`` 6, 18 or 26, default 26) of each
   binary volume; on the voxels where either is foreground, scikit-image's
   ``variation_of_information(G_labels, P_labels)``: ``voi_split`` is its first value,
   H(P_labels | G_labels) in bits, ``voi_merge`` its second, H(G_labels | P_labels) (the label
   0 of one volume on the other's foreground is a cluster); ``voi_total`` their sum;
   ``voi_score`` = 1 / (1 + alpha total) (``voi_transform="one_over_one_plus"``) or
   exp(-alpha total) (``"exp"``), alpha = ``voi_alpha`` (default 0.3, as the competition's
   scorer passes it; the toolkit function's own default is 1.0). Both empty: 0, 0, 0 and 1.
   (topometrics documents the first value as H(GT|PR); scikit-image defines it as
   H(image1|image0); the values are the same either way.)
6. **Leaderboard**: ``weights`` (default 0.3, 0.35, 0.35) with negative or non-finite ones set
   to 0, renormalised (1/3 each if they sum to 0), over (TopoScore, SurfaceDice, VOI_score),
   clipped to [0, 1] as the competition's Kaggle wrapper clips it (the renormalised weights can
   sum to 1 + 2**-52: a perfect score is 1.0).

**In a loop**: :func:`prepare_surfaces` computes what depends on the truth alone once (ignore
region, foreground, surface corner codes, components); pass its result as ``truth=``.
**Threads**: the tiles' Betti matchings, VOI and surface Dice are tasks on the engine's threads
(:func:`segscore.engine.executor.reduce_windows`), the results folded in a fixed order; tiles
above :data:`MAX_PARALLEL_TILE_VOXELS` run one at a time after VOI and surface Dice (those two side
by side), each tile's matching itself on the threads (its independent steps two at a time,
:func:`segscore.metrics.betti.betti_matching`), with both masks packed 8 voxels to a byte while
they wait. **On a cluster** (``executor=`` a
``distributed.Client``) each tile is one task; when the inputs are paths every term is counted by
the workers window by window and this process reads no voxel (:mod:`segscore.topology.stream`:
surface Dice from per-code surfel counts with a halo of ceil(tau / spacing) + 1 voxels, VOI from
blockwise components and a sparse contingency); with arrays VOI and surface Dice run in the
calling process meanwhile (docs/cluster.md). Surface Dice is computed from the same integer
counts on every path (:func:`segscore.topology.surface.surface_dice_of_counts`).
**Memory per voxel of the volume** (beyond the caller's arrays): the masks 1 byte each; the
ignore region 1 byte while the truth is binarized (kept by a prepared truth where voxels are
ignored); VOI one labelling at a time, 4 bytes, then 4 to 8 bytes per foreground voxel; surface
Dice 1 byte per mask (the corner codes); a tile's Betti matching about 46 bytes per voxel of
the tile on one thread, 72 on two (:mod:`segscore.metrics.betti`), so 72/8 per voxel of the
volume for octants matched one at a time, the masks then held at 1/4 byte. The CLI gives its
files to :func:`surfaces` as paths, so the raw volumes it reads are dropped once binarized.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.engine.executor import budget_words, worker_budget
from segscore.errors import ScoreError

DEFAULT_WEIGHTS = (0.3, 0.35, 0.35)
DEFAULT_TOPO_WEIGHTS = (0.34, 0.33, 0.33)
DEFAULT_TOPO_TILES = (2, 2, 2)
VOI_TRANSFORMS = ("one_over_one_plus", "exp")
DIM_NAMES = ("components", "tunnels", "cavities")


class SurfacesInputError(ScoreError):
    """The volumes or options of ``surfaces`` cannot be scored."""


# ---- steps 1 and 2


def binarize(x, *, threshold=None, ignore=None) -> np.ndarray:
    """Foreground of ``x``: ``x != 0`` (NaN as 0) or ``x > threshold``; voxels of ``ignore``
    take the value 0 first."""
    a = np.asarray(x)
    if a.dtype == np.bool_ and threshold is None:
        fg = a.copy()
    elif threshold is None:
        fg = a != 0
        if a.dtype.kind in "fc":
            fg &= ~np.isnan(a)
    else:
        fg = a > float(threshold)  # NaN > t is False: NaN counts as 0 only when 0 > t is False too
        if a.dtype.kind in "fc" and 0 > float(threshold):
            fg |= np.isnan(a)
    if ignore is not None:
        zero_fg = (0 > float(threshold)) if threshold is not None else False
        fg[ignore] = zero_fg
    return fg


def ignore_mask_of(truth, *, ignore_label=2, ignore_mask=None):
    """The voxels to ignore (the explicit mask wins over the label), or None
    (:func:`segscore.metrics.masks.ignore_region`, shared with ``objects`` and ``curve``)."""
    from segscore.metrics.masks import ignore_region

    return ignore_region(truth, ignore_label=ignore_label, ignore_mask=ignore_mask, error=SurfacesInputError)


# ---- step 3


def axis_cuts(n: int, parts: int) -> list[tuple[int, int]]:
    """``[0, n)`` in ``parts`` runs whose sizes differ by at most one (the first ones longer);
    fewer parts when ``n`` is shorter."""
    parts = max(1, min(int(parts), n if n > 0 else 1))
    base, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def tile_slices(shape, tiles) -> list[tuple[slice, slice, slice]]:
    """The tiles (C order: first axis slowest), empty ones left out."""
    cuts = [axis_cuts(n, t) for n, t in zip(shape, tiles)]
    return [(slice(a0, a1), slice(b0, b1), slice(c0, c1))
            for a0, a1 in cuts[0] for b0, b1 in cuts[1] for c0, c1 in cuts[2]
            if a1 > a0 and b1 > b0 and c1 > c0]


#: tiles of more voxels than this are matched one at a time whatever ``threads`` says (each on the
#: threads): a tile takes about 46 bytes per voxel at its peak on one thread, 72 on two (a 256^3
#: octant of a 512^3 volume: 0.74 GB and 1.15 GB, its RSS sampled every 5 ms; benchmarks/bench_surfaces.py)
MAX_PARALLEL_TILE_VOXELS = 1 << 23


def tile_counts(pred_tile: np.ndarray, gt_tile: np.ndarray, threads: int = 1) -> list[tuple[int, int, int]]:
    """``[(m_k, p_k, g_k) for k in 0, 1, 2]`` of one tile's foregrounds (bool, C-contiguous):
    the Betti matching of ``1 - P`` and ``1 - G``, the prediction first as the competition passes it
    (``threads``: the matching's, :func:`segscore.metrics.betti.betti_matching`)."""
    from segscore.metrics.betti import betti_matching

    m = betti_matching((~pred_tile).view(np.uint8), (~gt_tile).view(np.uint8), threads=threads)
    out = []
    for d in m.dims:
        matched, un_p, un_g = d.counts()
        out.append((matched, matched + un_p, matched + un_g))
    return out


#: bytes a TopoScore tile's task needs per voxel of the tile at its peak on a worker: the Betti
#: matching's ~61 on a 256³ octant of sheets (:data:`MAX_PARALLEL_TILE_VOXELS`) plus the tile's two
#: masks, with the room its scratch takes where persistence pairs are many (105-113 measured on
#: random blobs, docs/cluster.md): a tile that might not fit is refused, never left to be killed
TILE_BYTES_PER_VOXEL = 120


def check_tile_budget(shape, tiles, budget) -> None:
    """Refuse in one line (:class:`SurfacesInputError`) tiles of ``shape`` cut by ``tiles`` whose
    largest needs more than a worker's budget (``(bytes, memory limit)`` of
    :func:`segscore.engine.executor.worker_budget`, or None: no limit) at
    :data:`TILE_BYTES_PER_VOXEL` per voxel: a tile is one task, matched whole, and would only swap
    or pause its worker. The fix names tile counts that fit."""
    def biggest(t):
        return max((int(np.prod([sl.stop - sl.start for sl in s])) for s in tile_slices(shape, t)), default=0)

    voxels = biggest(tiles)
    need = TILE_BYTES_PER_VOXEL * voxels
    if budget is None or need <= budget[0]:
        return
    fit = list(tiles)
    while TILE_BYTES_PER_VOXEL * biggest(fit) > budget[0] and any(f < n for f, n in zip(fit, shape)):
        sizes = [-(-n // f) if f < n else 0 for n, f in zip(shape, fit)]  # cut the longest tile side
        fit[sizes.index(max(sizes))] *= 2
        fit = [min(f, n) for f, n in zip(fit, shape)]
    raise SurfacesInputError(
        f"topo_tiles {' '.join(map(str, tiles))}: the largest TopoScore tile has {voxels} voxels and needs about "
        f"{need} bytes on one worker ({TILE_BYTES_PER_VOXEL} B/voxel), more than {budget_words(budget)}; "
        f"fix: more --topo-tiles (e.g. {' '.join(map(str, fit))}) or workers with more memory")


def _tile_from_files(plan, sl):
    """A tile's counts read on the worker that runs it: ``plan`` is ``(truth, pred, ignore mask or
    None, ignore_label, fg_threshold, two_d)``, the sources opened by path (they pickle as their
    paths); the ignore region and the foregrounds are made as :func:`_prepare` and :func:`_score`
    make them on the whole volume (each voxel on its own)."""
    truth, pred, mask, ignore_label, fg_threshold, two_d = plan
    window = sl[1:] if two_d else sl
    g_raw, p_raw = truth.read(window), pred.read(window)
    m = mask.read(window) if mask is not None else None
    if two_d:
        g_raw, p_raw = g_raw[None], p_raw[None]
        m = m[None] if m is not None else None
    if m is not None and m.dtype.kind in "fc":
        m = m.astype(bool)
    ign = ignore_mask_of(g_raw, ignore_label=ignore_label, ignore_mask=m)
    g = binarize(g_raw, threshold=fg_threshold, ignore=ign)
    p = binarize(p_raw, threshold=fg_threshold, ignore=ign)
    return [tile_counts(np.ascontiguousarray(p), np.ascontiguousarray(g))]


def _tile_of_masks(window):
    """A tile's counts from its two foregrounds, shipped with the task (inputs held in memory)."""
    _, p, g = window
    return [tile_counts(p, g)]


def _add_counts(parts) -> list[tuple[int, int, int]]:
    total = [[0, 0, 0] for _ in range(3)]
    for part in parts:
        for k in range(3):
            for j in range(3):
                total[k][j] += part[k][j]
    return [tuple(t) for t in total]


def topology_counts(pred_fg: np.ndarray, gt_fg: np.ndarray, *, tiles=DEFAULT_TOPO_TILES, threads: int | None = None):
    """``([(m_k, p_k, g_k) for k in 0, 1, 2], number of tiles)``, the counts summed over the
    tiles, matched on the engine's threads (:func:`segscore.engine.reduce_windows`; the sum does
    not depend on their number)."""
    from segscore.engine.executor import default_workers, reduce_windows

    slices = tile_slices(pred_fg.shape, tiles)
    biggest = max((int(np.prod([sl.stop - sl.start for sl in t])) for t in slices), default=0)
    threads = threads or default_workers()
    big = biggest > MAX_PARALLEL_TILE_VOXELS  # one tile at a time, its matching on the threads
    workers = 1 if big else threads

    def one(sl):
        return [tile_counts(np.ascontiguousarray(pred_fg[sl]), np.ascontiguousarray(gt_fg[sl]),
                            threads=threads if big else 1)]

    parts = reduce_windows(one, slices, lambda a, b: a + b, workers=workers) or []
    return _add_counts(parts), len(slices)


def toposcore(counts, topo_weights=DEFAULT_TOPO_WEIGHTS, notes=None, *, dims=(0, 1, 2)):
    """``(TopoScore, [TopoF1_k or None])`` from the summed counts, over the dimensions of ``dims``
    (the others' TopoF1 is None)."""
    f1 = []
    for k, (m, p, g) in enumerate(counts):
        denom = p + g
        if k not in dims:
            f1.append(None)
            if notes is not None:
                notes[f"topoF1_{k}"] = f"dimension {k} is not in dims {list(dims)}: left out of TopoScore"
        elif denom == 0:
            f1.append(None)
            if notes is not None:
                notes[f"topoF1_{k}"] = (f"no {DIM_NAMES[k]} in either volume (p_{k} + g_{k} = 0): "
                                        "the dimension is left out of TopoScore")
        elif g != 0:
            f1.append(2.0 * m / denom)
        else:
            f1.append(0.5 / (denom + 0.5))
    active = [k for k in range(3) if f1[k] is not None]
    if not active:
        return 1.0, f1
    w = np.array([float(topo_weights[k]) for k in active])
    if not np.isfinite(w).all() or w.sum() <= 0:
        w = np.ones(len(active))
    w = w / w.sum()
    return float((w * np.array([f1[k] for k in active])).sum()), f1


# ---- step 5


def _labels(fg: np.ndarray, connectivity: int) -> np.ndarray:
    from segscore.metrics.masks import components

    return components(fg, connectivity)


def _xlogx(counts) -> float:
    c = np.asarray(counts, np.float64)
    c = c[c > 0]
    return math.fsum((c * np.log2(c)).tolist())


def truth_components(gt_fg: np.ndarray, connectivity: int):
    """``(labels at the foreground voxels, areas)``: the components of ``gt_fg`` as VOI needs them,
    the label of each foreground voxel in C order (int32) and the voxels of components 1..n (int64).
    The whole labelling (4 bytes per voxel) lives only while this runs."""
    gl = _labels(gt_fg, connectivity)
    at_fg = gl[gt_fg]
    del gl
    return at_fg, np.bincount(at_fg, minlength=1)[1:].astype(np.int64)


def _voi_counts(t_at_fg, t_area, pred_fg, gt_fg, connectivity):
    """``(pair_n, t_area, p_area, per_t, per_p)``: the overlaps of truth and prediction components
    (voxels in both), each component's voxels and its overlap with the other's components."""
    pl = _labels(pred_fg, connectivity)
    p_area = np.bincount(pl[pred_fg], minlength=1)[1:].astype(np.int64)
    p_on_t = pl[gt_fg]  # the prediction's label on each truth voxel, aligned with t_at_fg
    del pl
    both = p_on_t != 0
    tt = t_at_fg[both].astype(np.int64)
    pp = p_on_t[both].astype(np.int64)
    del p_on_t, both
    n_t, n_p = t_area.size, p_area.size
    stride = n_p + 1
    if (n_t + 1) * stride <= max(1 << 22, 4 * tt.size):  # a dense table is one pass
        table = np.bincount(tt * stride + pp, minlength=(n_t + 1) * stride).reshape(n_t + 1, stride)
        pair_n = table[table > 0]
        per_t = table.sum(axis=1)[1:]
        per_p = table.sum(axis=0)[1:]
    else:
        keys, pair_n = np.unique(tt * stride + pp, return_counts=True)
        per_t = np.bincount(keys // stride, weights=pair_n, minlength=n_t + 1)[1:].astype(np.int64)
        per_p = np.bincount(keys % stride, weights=pair_n, minlength=stride)[1:].astype(np.int64)
    return pair_n.astype(np.int64), t_area, p_area, per_t.astype(np.int64), per_p.astype(np.int64)


def _voi_score(total: float, alpha: float, transform: str) -> float:
    return math.exp(-alpha * total) if transform == "exp" else 1.0 / (1.0 + alpha * total)


def _voi(t_at_fg, t_area, pred_fg, gt_fg, connectivity, alpha, transform) -> dict:
    if t_area.size == 0 and not pred_fg.any():
        return _voi_of_counts(None, None, None, None, None, alpha, transform)
    return _voi_of_counts(*_voi_counts(t_at_fg, t_area, pred_fg, gt_fg, connectivity), alpha, transform)


def _voi_of_counts(pair_n, t_area, p_area, per_t, per_p, alpha, transform) -> dict:
    """VOI from the counts of :func:`_voi_counts` (None when both volumes are empty): the one
    arithmetic of the whole-volume and the streamed paths. Each sum of x log x is a ``math.fsum``
    of one term per count, so the order of the counts changes nothing."""
    if t_area is None:
        return {"voi_split": 0.0, "voi_merge": 0.0, "voi_total": 0.0, "voi_score": 1.0}
    t_on_0 = t_area - per_t  # a truth component on the prediction's background
    p_on_0 = p_area - per_p
    n = int(t_area.sum() + p_area.sum() - pair_n.sum())
    cells = _xlogx(pair_n) + _xlogx(t_on_0) + _xlogx(p_on_0)
    rows = _xlogx(t_area) + _xlogx([p_on_0.sum()])  # truth components, and truth's 0 on the prediction
    cols = _xlogx(p_area) + _xlogx([t_on_0.sum()])
    split = max(0.0, (rows - cells) / n)  # H(P | G): scikit-image's first value
    merge = max(0.0, (cols - cells) / n)  # H(G | P)
    total = split + merge
    return {"voi_split": split, "voi_merge": merge, "voi_total": total,
            "voi_score": _voi_score(total, alpha, transform)}


def voi_counts_of_table(t, p, n, n_t, n_p):
    """:func:`_voi_counts`' ``(pair_n, t_area, p_area, per_t, per_p)`` from a sparse contingency
    table of the voxels where either volume is foreground: ``t``, ``p`` (int64) the truth and
    prediction labels of each pair (0: background), ``n`` its voxels; ``n_t``, ``n_p`` the labels."""
    t, p, n = (np.asarray(x, np.int64) for x in (t, p, n))
    both = (t > 0) & (p > 0)
    t_area = np.zeros(n_t + 1, np.int64)
    np.add.at(t_area, t, n)
    p_area = np.zeros(n_p + 1, np.int64)
    np.add.at(p_area, p, n)
    per_t = np.zeros(n_t + 1, np.int64)
    np.add.at(per_t, t[both], n[both])
    per_p = np.zeros(n_p + 1, np.int64)
    np.add.at(per_p, p[both], n[both])
    return n[both], t_area[1:], p_area[1:], per_t[1:], per_p[1:]


def voi(pred_fg: np.ndarray, gt_fg: np.ndarray, *, connectivity: int = 26, alpha: float = 0.3,
        transform: str = "one_over_one_plus") -> dict:
    """``voi_split, voi_merge, voi_total, voi_score`` (see the module docstring).

    Memory beyond the masks: one labelling at a time (4 bytes per voxel), then 4 to 8 bytes per
    foreground voxel. The overlaps are counted in NumPy (a dense table of truth x prediction
    components when it is small, else a sort of the overlapping voxels' pairs)."""
    t_at_fg, t_area = truth_components(gt_fg, connectivity)
    return _voi(t_at_fg, t_area, pred_fg, gt_fg, connectivity, alpha, transform)


# ---- the options


def _check_options(tolerance, spacing, voi_connectivity, voi_alpha, voi_transform, weights, topo_weights, topo_tiles):
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise SurfacesInputError(f"tolerance {tolerance!r}: give a finite number >= 0 (in the spacing's unit)")
    from segscore.metrics.masks import check_connectivity

    check_connectivity(voi_connectivity, 3, SurfacesInputError, "voi_connectivity")
    if not (math.isfinite(voi_alpha) and voi_alpha >= 0):
        raise SurfacesInputError(f"voi_alpha {voi_alpha!r}: give a finite number >= 0")
    if voi_transform not in VOI_TRANSFORMS:
        raise SurfacesInputError(f"voi_transform {voi_transform!r}: give one of {', '.join(VOI_TRANSFORMS)}")
    if len(weights) != 3:
        raise SurfacesInputError("weights takes three numbers (TopoScore, surface Dice, VOI score)")
    if len(topo_tiles) != 3 or any(int(t) != t or t < 1 for t in topo_tiles):
        raise SurfacesInputError(f"topo_tiles {tuple(topo_tiles)!r}: give three whole numbers >= 1")


def _dims(dims) -> tuple:
    try:
        out = tuple(sorted({int(d) for d in dims}))
    except (TypeError, ValueError):
        raise SurfacesInputError(f"dims {dims!r}: give homology dimensions among 0, 1, 2") from None
    if not out or any(d not in (0, 1, 2) for d in out) or any(float(d) != int(d) for d in dims):
        raise SurfacesInputError(f"dims {dims!r}: give one or more homology dimensions among 0, 1, 2")
    return out


def _topo_weights(topo_weights, dims) -> tuple:
    """Per dimension 0, 1, 2: a mapping ``{dim: weight}`` merged over the defaults, three numbers
    (index = dimension), or one number per dimension of ``dims`` (in its order), as topometrics'
    ``TopoScore`` reads its ``weights``."""
    from collections.abc import Mapping

    def num(x, what):
        try:
            return float(x)
        except (TypeError, ValueError):
            raise SurfacesInputError(f"topo_weights: {what} {x!r} is not a number") from None

    if isinstance(topo_weights, Mapping):
        out = list(DEFAULT_TOPO_WEIGHTS)
        for k, v in topo_weights.items():
            if k not in (0, 1, 2):
                raise SurfacesInputError(f"topo_weights: key {k!r}; give weights of dimensions 0, 1, 2")
            out[int(k)] = num(v, f"the weight of dimension {k}")
        return tuple(out)
    seq = [num(x, "weight") for x in topo_weights]
    if len(seq) == 3:
        return tuple(seq)
    if len(seq) == len(dims):
        out = [0.0, 0.0, 0.0]
        for k, w in zip(dims, seq):
            out[k] = w
        return tuple(out)
    raise SurfacesInputError(f"topo_weights {tuple(seq)!r}: give three numbers (dimensions 0, 1, 2), one per "
                             f"dimension of dims {list(dims)}, or a mapping {{dimension: weight}}")


def _weights(w) -> tuple:
    w = [0.0 if (not math.isfinite(float(x)) or float(x) < 0) else float(x) for x in w]
    s = sum(w)
    if s <= 0:
        return (1 / 3, 1 / 3, 1 / 3)
    return tuple(x / s for x in w)


def _as_volume(x, name):
    if isinstance(x, (str,)) or hasattr(x, "__fspath__"):
        from segscore.io.readers import open_labels

        with open_labels(x, what=name, ndims=(2, 3)) as source:
            return source.read_all(), True
    a = np.asarray(x)
    if a.ndim not in (2, 3):
        raise SurfacesInputError(f"{name}: a volume of shape {a.shape}; give a 3D volume (or a 2D slice)")
    return a, False


def _check_prediction(p_raw, fg_threshold, name="prediction"):
    """A float prediction without ``fg_threshold`` must hold only 0 and 1 (NaN counts as 0)."""
    if fg_threshold is not None or p_raw.dtype.kind not in "fc":
        return
    bad = (p_raw != 0) & (p_raw != 1) & ~np.isnan(p_raw)
    if bad.any():
        v = p_raw[bad].flat[0]
        raise SurfacesInputError(
            f"{name}: float values other than 0.0 and 1.0 (e.g. {v:g}): this looks like a probability map; "
            "give fg_threshold (foreground is value > T) or threshold it first "
            "(segscore will not pick a threshold for you)")


# ---- the prepared truth


class PreparedSurfaces:
    """A truth made ready to score many predictions against (:func:`prepare_surfaces`): its
    ignore region, binary foreground, corner codes (surface Dice) and components (VOI), with the
    options they depend on. Pass it back as ``surfaces(truth=prepared, pred=...)``.

    Memory: 2 bytes per voxel (foreground and corner codes), 1 more where voxels are ignored,
    and 4 bytes per foreground voxel (its component)."""

    __slots__ = ("shape", "two_d", "spacing", "ignore", "n_ignored", "fg", "codes", "components",
                 "options", "warnings", "foreground")

    def __init__(self, **fields):
        for k in self.__slots__:
            setattr(self, k, fields.get(k))

    def __repr__(self) -> str:
        shape = self.shape[1:] if self.two_d else self.shape
        return (f"PreparedSurfaces(shape={tuple(shape)}, foreground={self.foreground}, "
                f"ignored={self.n_ignored}, options={self.options})")


#: the options a prepared truth fixes, and their defaults in :func:`surfaces`
TRUTH_OPTIONS = {"ignore_label": 2, "ignore_mask": None, "fg_threshold": None, "spacing": None,
                 "voi_connectivity": 26, "topo_tiles": DEFAULT_TOPO_TILES}


def prepare_surfaces(truth, *, ignore_label=2, ignore_mask=None, fg_threshold=None, spacing=None,
                     voi_connectivity=26, topo_tiles=DEFAULT_TOPO_TILES) -> PreparedSurfaces:
    """``truth`` (the labels; an array or a path) made ready for many :func:`surfaces` calls, as
    curvicost's ``prepare_reference``: what depends on the truth alone is computed once (the
    ignore region, the binary foreground, its surface corner codes and its components). The
    options are :func:`surfaces`' of the same names; a prepared truth keeps them.
    """
    return _prepare(truth, ignore_label=ignore_label, ignore_mask=ignore_mask, fg_threshold=fg_threshold,
                    spacing=spacing, voi_connectivity=voi_connectivity, topo_tiles=topo_tiles, codes=True)


def _spacing_of(spacing, ndim) -> tuple:
    """``(spacing per axis of the 3D volume scored, warnings)`` of an input of ``ndim`` axes."""
    warnings: list[str] = []
    if spacing is None:
        sp = (1.0, 1.0, 1.0)
    else:
        sp = tuple(float(s) for s in (spacing if np.ndim(spacing) else [spacing] * ndim))
        if len(sp) != ndim or not all(math.isfinite(s) and s > 0 for s in sp):
            raise SurfacesInputError(f"spacing {spacing!r}: give {ndim} positive numbers, one per axis")
        if ndim == 2:
            sp = (1.0,) + sp
        if any(s != 1.0 for s in sp):
            warnings.append(f"spacing {sp[-ndim:]} applied: the surface tolerance is in its unit")
    if ndim == 2:
        warnings.append("a 2D image is scored as a volume of one slice")
    return sp, warnings


def _ignored_warning(n_ignored, by_mask, ignore_label) -> list:
    if not n_ignored:
        return []
    what = "the ignore mask" if by_mask else f"labels == {ignore_label}"
    return [f"{n_ignored} voxels ignored ({what}): background in both volumes"]


def _swapped_warning(label) -> str:
    return (f"the prediction holds the ignore value {label:g} and the labels hold none: are truth "
            "and pred swapped? (truth= takes the labels, pred= the prediction)")


def _prepare(truth, *, ignore_label, ignore_mask, fg_threshold, spacing, voi_connectivity, topo_tiles, codes):
    from segscore.metrics.masks import check_connectivity

    check_connectivity(voi_connectivity, 3, SurfacesInputError, "voi_connectivity")
    topo_tiles = tuple(int(t) if float(t).is_integer() else t for t in topo_tiles)
    if len(topo_tiles) != 3 or any(int(t) != t or t < 1 for t in topo_tiles):
        raise SurfacesInputError(f"topo_tiles {tuple(topo_tiles)!r}: give three whole numbers >= 1")
    if fg_threshold is not None and not (isinstance(fg_threshold, (int, float)) and math.isfinite(fg_threshold)):
        raise SurfacesInputError(f"fg_threshold {fg_threshold!r}: give a finite number (foreground is value > T)")
    g_raw, _ = _as_volume(truth, "labels")
    two_d = g_raw.ndim == 2
    sp, warnings = _spacing_of(spacing, g_raw.ndim)
    if two_d:
        g_raw = g_raw[None]
    mask = None
    if ignore_mask is not None:
        mask = np.asarray(ignore_mask)
        if mask.dtype.kind in "fc":  # as topometrics reads it (astype(bool)): NaN and inf ignore too
            mask = mask.astype(bool)
        if two_d:
            mask = mask[None]
    ign = ignore_mask_of(g_raw, ignore_label=ignore_label, ignore_mask=mask)
    n_ignored = int(ign.sum()) if ign is not None else 0
    warnings += _ignored_warning(n_ignored, ignore_mask is not None, ignore_label)
    if ign is not None and not n_ignored:
        ign = None
    g = binarize(g_raw, threshold=fg_threshold, ignore=ign)
    del g_raw
    comps = truth_components(g, voi_connectivity)
    code_grid = None
    if codes:
        from segscore.topology.surface import corner_grid

        code_grid = corner_grid(g)
    options = {"ignore_label": ignore_label, "ignore_mask": ignore_mask is not None, "fg_threshold": fg_threshold,
               "spacing": list(sp), "voi_connectivity": voi_connectivity, "topo_tiles": list(topo_tiles)}
    return PreparedSurfaces(shape=g.shape, two_d=two_d, spacing=sp, ignore=ign, n_ignored=n_ignored, fg=g,
                            codes=code_grid, components=comps, options=options, warnings=warnings,
                            foreground=int(np.count_nonzero(g)))


def _check_prepared(prep, given) -> None:
    """Refuse a truth option given with a prepared truth that differs from the prepared one."""
    for name, value in given.items():
        default = TRUTH_OPTIONS[name]
        if name == "ignore_mask":
            if value is not None:
                raise SurfacesInputError("ignore_mask: give it to prepare_surfaces (the prepared truth holds its "
                                         "ignore region), not with a prepared truth")
            continue
        kept = prep.options[name]
        same = value == default or _same_option(name, value, kept, prep)
        if not same:
            raise SurfacesInputError(f"{name}={value!r}: the truth was prepared with {name}={kept!r}; "
                                     f"prepare it again with prepare_surfaces(truth, {name}=...)")


def _same_option(name, value, kept, prep) -> bool:
    if name == "spacing":
        sp = tuple(float(s) for s in (value if np.ndim(value) else [value] * (2 if prep.two_d else 3)))
        if prep.two_d:
            sp = (1.0,) + sp
        return list(sp) == list(kept)
    if name == "topo_tiles":
        return [int(t) for t in value] == list(kept)
    return value == kept


# ---- the score


def surfaces(truth=None, pred=None, *, ignore_label=2, ignore_mask=None, fg_threshold=None, tolerance=2.0,
             spacing=None, voi_connectivity=26, voi_alpha=0.3, voi_transform="one_over_one_plus",
             weights=DEFAULT_WEIGHTS, topo_weights=DEFAULT_TOPO_WEIGHTS, topo_tiles=DEFAULT_TOPO_TILES,
             dims=(0, 1, 2), threads: int | None = None, executor=None, tile_rows: int | None = None,
             tile_shape=None) -> dict:
    """The surface-detection score of ``pred`` against ``truth`` (the labels; arrays or paths, or
    a truth from :func:`prepare_surfaces`, whose options then hold: a different ``ignore_label``,
    ``fg_threshold``, ``spacing``, ``voi_connectivity`` or ``topo_tiles`` is refused).

    Returns a dict: ``leaderboard, toposcore, topoF1_0, topoF1_1, topoF1_2, surface_dice,
    voi_score, voi_total, voi_split, voi_merge``, ``topology`` (``dim0|dim1|dim2``:
    ``matched``, ``pred`` = p_k, ``gt`` = g_k), ``shape``, ``ignored_voxels``,
    ``foreground_pred``, ``foreground_gt``, ``tiles``, ``params``, ``notes`` and ``warnings``.
    See the module docstring for the definition.

    ``dims`` (topometrics' ``dims``): the homology dimensions TopoScore weighs (the others' TopoF1
    is null, with a note); ``topo_weights``: three numbers, one per dimension of ``dims``, or a
    mapping ``{dimension: weight}`` over the defaults. ``leaderboard`` is clipped to [0, 1], as the
    competition's Kaggle wrapper clips it (a perfect score is 1.0, not 1.0000000000000002).
    A float prediction holding values other than 0 and 1 needs ``fg_threshold``. ``threads``: the
    engine's threads (default: the CPUs, at most 8); no result depends on it.

    ``executor``: where TopoScore's tiles are matched, one task per tile, the counts folded in
    tile order (:func:`segscore.engine.executor.reduce_windows`): None (the engine's threads,
    beside VOI and surface Dice) or a ``distributed.Client``. With a client, when ``truth``,
    ``pred`` (and ``ignore_mask``, which may then be a path too) are paths, each task reads its
    own tile from the files on its worker; else the tiles' foregrounds travel with the tasks.
    With a client and files (paths, or file and zarr sources of :mod:`segscore.io.sources`, which
    travel as their paths), surface Dice, VOI and the counts are computed by the workers too,
    window by window (bands of ``tile_rows`` slices; default about 16 M voxels), and this process
    reads no voxel (:mod:`segscore.topology.stream`; the same JSON for any ``tile_rows``); with
    arrays they are computed here on the whole volumes while the tiles run. Files with
    ``tile_rows`` and no client take the same streamed path on this process's threads (a pair
    larger than memory: windows, never the whole volumes). ``tile_shape`` (one length per axis of
    the inputs), instead of ``tile_rows``: the windows are boxes of that shape, tiling the volume
    as a grid (a slice too large for one worker: a whole scroll); files only, as ``tile_rows``.
    A tile needing more than a worker's budget (:data:`TILE_BYTES_PER_VOXEL` per voxel; the
    budget: its ``memory_limit`` up to distributed's pause threshold, less the worker's own
    baseline) is refused (:func:`check_tile_budget`), and so are streamed windows that need more
    (:func:`segscore.topology.stream.check_window_budget`)."""
    if truth is None or pred is None:
        raise SurfacesInputError("surfaces needs truth= (the labels) and pred= (the prediction)")
    weights = tuple(weights)
    dims = _dims(dims)
    topo_w = _topo_weights(topo_weights, dims)
    tiles_opt = tuple(int(t) for t in topo_tiles) if all(float(t).is_integer() for t in topo_tiles) \
        else tuple(topo_tiles)
    _check_options(tolerance, spacing, voi_connectivity, voi_alpha, voi_transform, weights, topo_w, tiles_opt)
    if tile_shape is not None and tile_rows is not None:
        raise SurfacesInputError(f"tile_rows {tile_rows} and tile_shape {' '.join(map(str, tile_shape))}: give one "
                                 "(--tile-rows cuts slices, --tile-shape boxes)")
    on_cluster = executor is not None and not isinstance(executor, str)
    if on_cluster:  # refused before any voxel is read
        check_tile_budget(_shape3(truth), tiles_opt, worker_budget(executor))
    if (on_cluster or tile_rows is not None or tile_shape is not None) and _on_disk(truth) and _on_disk(pred) \
            and (ignore_mask is None or _on_disk(ignore_mask)):
        # every term counted by the workers (or threads), window by window: no voxel read here
        return _score_streamed(truth, pred, ignore_mask, ignore_label=ignore_label, fg_threshold=fg_threshold,
                               spacing=spacing, voi_connectivity=voi_connectivity, topo_tiles=tiles_opt,
                               tolerance=float(tolerance), voi_alpha=float(voi_alpha), voi_transform=voi_transform,
                               weights=weights, topo_weights=topo_w, dims=dims, threads=threads, executor=executor,
                               tile_rows=tile_rows, tile_shape=tile_shape)
    if ignore_mask is not None and _is_path(ignore_mask):
        ignore_mask, _ = _as_volume(ignore_mask, "ignore mask")
    if isinstance(truth, PreparedSurfaces):
        _check_prepared(truth, {"ignore_label": ignore_label, "ignore_mask": ignore_mask,
                                "fg_threshold": fg_threshold, "spacing": spacing,
                                "voi_connectivity": voi_connectivity, "topo_tiles": tiles_opt})
        prep, own = truth, False
    else:
        prep = _prepare(truth, ignore_label=ignore_label, ignore_mask=ignore_mask, fg_threshold=fg_threshold,
                        spacing=spacing, voi_connectivity=voi_connectivity, topo_tiles=tiles_opt, codes=False)
        own = True
    return _score(prep, pred, own=own, tolerance=float(tolerance), voi_alpha=float(voi_alpha),
                  voi_transform=voi_transform, weights=weights, topo_weights=topo_w, dims=dims, threads=threads,
                  executor=executor)


def _shape3(x) -> tuple:
    """The shape of an input as scored (a 2D image as one slice), from a file's header."""
    if isinstance(x, PreparedSurfaces):
        return tuple(x.shape)
    if _is_path(x):
        from segscore.io.readers import open_labels

        with open_labels(x, what="labels", ndims=(2, 3)) as source:
            shape = tuple(source.shape)
    else:
        shape = tuple(np.shape(x))
    return (1,) + shape if len(shape) == 2 else shape


def _is_path(x) -> bool:
    return isinstance(x, str) or hasattr(x, "__fspath__")


def _on_disk(x) -> bool:
    """A path, or a source its workers can reopen by path (a file or a zarr store; not an array
    in this process's memory)."""
    if _is_path(x):
        return True
    from segscore.io.sources import ArraySource, DaskSource, Source

    return isinstance(x, Source) and not isinstance(x, (ArraySource, DaskSource))


def _tiles_on(executor, slices, p, g):
    """The tiles' counts (a list in tile order), one task per tile on ``executor``, each shipped its
    tile of ``p`` and ``g`` (files take the streamed path, :func:`_score_streamed`, whose tasks read
    their own tiles)."""
    import operator

    from segscore.engine.executor import reduce_windows

    windows = [(sl, np.ascontiguousarray(p[sl]), np.ascontiguousarray(g[sl])) for sl in slices]
    return reduce_windows(_tile_of_masks, windows, operator.add, executor=executor) or []


def _score(prep, pred, *, own, tolerance, voi_alpha, voi_transform, weights, topo_weights, dims, threads,
           executor=None) -> dict:
    from segscore.engine.executor import default_workers, reduce_windows, side_by_side
    from segscore.topology.surface import corner_grid, surface_dice_of_codes

    opts = prep.options
    fg_threshold = opts["fg_threshold"]
    p_raw, _ = _as_volume(pred, "prediction")
    shape_in = prep.shape[1:] if prep.two_d else prep.shape
    if p_raw.shape != tuple(shape_in):
        raise SurfacesInputError(f"prediction of shape {p_raw.shape} and labels of shape {tuple(shape_in)} differ; "
                                 "score a prediction on the labels' grid")
    _check_prediction(p_raw, fg_threshold)
    warnings = list(prep.warnings)
    label = opts["ignore_label"]
    if (prep.ignore is None and not opts["ignore_mask"] and label is not None
            and bool(np.any(p_raw == label))):
        warnings.append(_swapped_warning(label))
    p = binarize(p_raw[None] if prep.two_d else p_raw, threshold=fg_threshold, ignore=prep.ignore)
    del p_raw
    if own:  # a truth prepared for this call alone: what is used is dropped as soon as it is
        prep.ignore = None
    g = prep.fg
    threads = threads or default_workers()

    slices = tile_slices(p.shape, opts["topo_tiles"])
    biggest = max((int(np.prod([sl.stop - sl.start for sl in t])) for t in slices), default=0)

    def sd():
        cp = corner_grid(p)
        cg = prep.codes if prep.codes is not None else corner_grid(g)
        return surface_dice_of_codes(cg, cp, tolerance=tolerance, spacing=prep.spacing)

    def vo():
        return _voi(*prep.components, p, g, opts["voi_connectivity"], voi_alpha, voi_transform)

    counts_parts, sd_value, v = [], None, None
    if executor is not None:
        # the tiles are tasks on the executor (one each); VOI and surface Dice run here meanwhile
        counts_parts, sd_value, v = side_by_side(
            [lambda: _tiles_on(executor, slices, p, g), sd, vo], threads=threads)
    elif biggest <= MAX_PARALLEL_TILE_VOXELS:
        # every pass a task on the engine's threads. VOI and surface Dice go between the first
        # tiles: on an empty numba cache their kernels compile (holding the GIL) while a tile's
        # matching runs (releasing it); with a warm cache the order changes only the balance
        tasks = [("tile", sl) for sl in slices]
        tasks[1:1] = [("voi", None)]
        tasks[3:3] = [("sd", None)]

        def run(task):
            kind, sl = task
            if kind == "tile":
                return [(kind, tile_counts(np.ascontiguousarray(p[sl]), np.ascontiguousarray(g[sl])))]
            return [(kind, vo() if kind == "voi" else sd())]

        for kind, value in reduce_windows(run, tasks, lambda a, b: a + b, workers=threads):
            if kind == "tile":
                counts_parts.append(value)
            elif kind == "voi":
                v = value
            else:
                sd_value = value
    else:
        # big tiles: surface Dice beside VOI (their scratch together, ~6 bytes per voxel, is less
        # than one big tile's matching), then the tiles one at a time, each matched on the threads;
        # the masks wait for the tiles packed 8 voxels to a byte
        v, sd_value = side_by_side([vo, sd], threads=threads)
        if own:
            prep.components = None
        n_fg_p = int(np.count_nonzero(p))
        bits_p = np.packbits(p, axis=-1)
        bits_g = np.packbits(g, axis=-1) if own else None
        nz = p.shape[2]
        del p
        if own:
            prep.fg = g = None

        def unpack(bits, sl):
            return np.ascontiguousarray(np.unpackbits(bits[sl[0], sl[1]], axis=-1, count=nz)[:, :, sl[2]]).view(np.bool_)

        for sl in slices:
            tp = unpack(bits_p, sl)
            tg = unpack(bits_g, sl) if own else np.ascontiguousarray(prep.fg[sl])
            counts_parts.append(tile_counts(tp, tg, threads=threads))
            del tp, tg
        p = None
    fg_pred = int(np.count_nonzero(p)) if p is not None else n_fg_p
    return _result(counts_parts, len(slices), sd_value, v, shape_in=shape_in, n_ignored=prep.n_ignored,
                   fg_pred=fg_pred, fg_gt=prep.foreground, opts=opts, spacing=prep.spacing, tolerance=tolerance,
                   voi_alpha=voi_alpha, voi_transform=voi_transform, weights=weights, topo_weights=topo_weights,
                   dims=dims, warnings=warnings)


def _result(counts_parts, n_tiles, sd_value, v, *, shape_in, n_ignored, fg_pred, fg_gt, opts, spacing, tolerance,
            voi_alpha, voi_transform, weights, topo_weights, dims, warnings) -> dict:
    """The result dict of both paths (whole volume, streamed) from their terms."""
    fg_threshold = opts["fg_threshold"]
    counts = _add_counts(counts_parts)
    notes: dict = {}
    topo, f1 = toposcore(counts, topo_weights, notes, dims=dims)
    sd_value = 1.0 if sd_value is None else sd_value
    w = _weights(weights)
    board = min(1.0, max(0.0, w[0] * topo + w[1] * sd_value + w[2] * v["voi_score"]))
    return {
        "leaderboard": board, "toposcore": topo, "topoF1_0": f1[0], "topoF1_1": f1[1], "topoF1_2": f1[2],
        "surface_dice": sd_value, "voi_score": v["voi_score"], "voi_total": v["voi_total"],
        "voi_split": v["voi_split"], "voi_merge": v["voi_merge"],
        "topology": {f"dim{k}": {"matched": counts[k][0], "pred": counts[k][1], "gt": counts[k][2]}
                     for k in range(3)},
        "shape": list(shape_in), "ignored_voxels": n_ignored,
        "foreground_pred": fg_pred, "foreground_gt": fg_gt,
        "tiles": n_tiles,
        "params": {"ignore_label": opts["ignore_label"], "ignore_mask": opts["ignore_mask"],
                   "fg_threshold": fg_threshold, "tolerance": tolerance, "spacing": list(spacing),
                   "voi_connectivity": opts["voi_connectivity"], "voi_alpha": voi_alpha,
                   "voi_transform": voi_transform, "weights": list(w), "topo_weights": list(topo_weights),
                   "topo_tiles": list(opts["topo_tiles"]),
                   # only when not all three, so the recorded outputs of the default keep their fields
                   **({"dims": list(dims)} if tuple(dims) != (0, 1, 2) else {})},
        "notes": notes, "warnings": warnings,
    }


def _score_streamed(truth, pred, mask, *, ignore_label, fg_threshold, spacing, voi_connectivity, topo_tiles,
                    tolerance, voi_alpha, voi_transform, weights, topo_weights, dims, threads, executor,
                    tile_rows=None, tile_shape=None, windows=None) -> dict:
    """:func:`_score` of three paths (``mask`` None or a path) without reading a voxel here: every
    term is counted per window by the workers of ``executor`` (:mod:`segscore.topology.stream`);
    the same JSON as the whole-volume path for any windows (``tile_rows`` slices each, boxes of
    ``tile_shape``, or ``windows``: 3D boxes tiling the volume as a grid)."""
    import functools
    import operator

    from segscore.engine.executor import reduce_windows, side_by_side
    from segscore.topology import stream
    from segscore.topology.surface import surface_dice_of_counts

    if fg_threshold is not None and not (isinstance(fg_threshold, (int, float)) and math.isfinite(fg_threshold)):
        raise SurfacesInputError(f"fg_threshold {fg_threshold!r}: give a finite number (foreground is value > T)")
    with stream.opened(truth, pred, mask) as (ts, ps, ms):
        shape_in = tuple(ts.shape)
        if tuple(ps.shape) != shape_in:
            raise SurfacesInputError(f"prediction of shape {tuple(ps.shape)} and labels of shape {shape_in} differ; "
                                     "score a prediction on the labels' grid")
        if ms is not None and tuple(ms.shape) != shape_in:
            raise SurfacesInputError(f"ignore mask: shape {tuple(ms.shape)} differs from the truth's {shape_in}; "
                                     "give the ignore mask on the truth's grid")
        two_d = len(shape_in) == 2
        sp, warnings = _spacing_of(spacing, len(shape_in))
        shape3 = (1,) + shape_in if two_d else shape_in
        label = ignore_label if mask is None else None
        inputs = stream.Inputs(ts, ps, ms, label, fg_threshold, two_d, shape3)
        if windows is None and tile_shape is not None:
            windows = stream.boxes3(shape3, tile_shape, len(shape_in))
        windows = windows if windows is not None else stream.bands3(shape3, tile_rows)
        on_cluster = executor is not None and not isinstance(executor, str)
        if on_cluster:  # refused before any voxel is read
            stream.check_window_budget(windows, shape3, worker_budget(executor))
        c = stream.streamed_counts(inputs, windows, tolerance=tolerance, spacing=sp, executor=executor,
                                   threads=threads)
        if c["bad"] is not None:
            v = c["bad"]
            raise SurfacesInputError(
                f"prediction: float values other than 0.0 and 1.0 (e.g. {v:g}): this looks like a probability map; "
                "give fg_threshold (foreground is value > T) or threshold it first "
                "(segscore will not pick a threshold for you)")
        fg_g, fg_p, n_ignored = c["n"]
        warnings += _ignored_warning(n_ignored, mask is not None, ignore_label)
        if not n_ignored and mask is None and ignore_label is not None and c["label"]:
            warnings.append(_swapped_warning(ignore_label))
        opts = {"ignore_label": ignore_label, "ignore_mask": mask is not None, "fg_threshold": fg_threshold,
                "voi_connectivity": voi_connectivity, "topo_tiles": list(topo_tiles)}
        slices = tile_slices(shape3, topo_tiles)
        plan = (ts, ps, ms, label, fg_threshold, two_d)
        biggest = max((int(np.prod([sl.stop - sl.start for sl in t])) for t in slices), default=0)
        # on threads, tiles above MAX_PARALLEL_TILE_VOXELS are matched one at a time, as on the
        # whole-volume path, and after VOI rather than beside it: streaming must not cost more memory
        tile_workers = None if on_cluster else 1 if biggest > MAX_PARALLEL_TILE_VOXELS else threads

        def tiles():
            return reduce_windows(functools.partial(_tile_from_files, plan), slices, operator.add,
                                  executor=executor, workers=tile_workers) or []

        def vo():
            if not fg_g and not fg_p:
                return _voi_of_counts(None, None, None, None, None, voi_alpha, voi_transform)
            counts = stream.streamed_voi(inputs, windows, connectivity=voi_connectivity, executor=executor,
                                         threads=threads)
            return _voi_of_counts(*counts, voi_alpha, voi_transform)

        if on_cluster:
            counts_parts, v = side_by_side([tiles, vo], threads=2)
        else:
            v = vo()
            counts_parts = tiles()
    return _result(counts_parts, len(slices), surface_dice_of_counts(c["hist"], sp), v, shape_in=shape_in,
                   n_ignored=n_ignored, fg_pred=fg_p, fg_gt=fg_g, opts=opts, spacing=sp, tolerance=tolerance,
                   voi_alpha=voi_alpha, voi_transform=voi_transform, weights=weights, topo_weights=topo_weights,
                   dims=dims, warnings=warnings)
