"""Score an instance labelling against a fiber target: ERL, merges, splits, coverage, precision.

Definitions (ScrollGT's ``score_tracing``, read for its definitions):

- each scored ground-truth fiber is resampled every 0.5 voxel along its edges, in stored edge
  order; samples whose rounded voxel lies outside the cube are skipped (not cut);
- the predicted instance at a sample is read after nearest-label growth within ``tolerance``
  (computed only at the samples, with scipy's tie-break: see ``segscore.kernels.fibers``);
- runs cut where the label changes or is background; ``erl = sum(L^2) / sum(L)``;
  ``erl_merge_penalized`` zeroes the runs of every instance touching more than one fiber,
  denominator unchanged; ``splits = sum(runs per fiber - 1)``; ``merges = sum(fibers per
  instance - 1)``; ``coverage`` = labelled sample length / sample length; ``precision`` =
  predicted voxels within ``tolerance`` of a sampled ground-truth voxel / predicted voxels.

Metrics are rounded as ScrollGT prints them (ERL 2 places, coverage and precision 4, lengths
1). A metric that is 0/0 is ``None`` and the row's ``notes`` (always present) maps its name to
the reason (ScrollGT prints 0.0 there).
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError
from segscore.fibers.target import FiberTarget
from segscore.kernels import fibers as K

STEP = 0.5


class Samples:
    """The in-bounds resampled points of a target's scored fibers (computed once per target)."""

    def __init__(self, lin, dl, fiber, n_fibers):
        self.lin = lin
        self.dl = dl
        self.fiber = fiber
        self.n_fibers = n_fibers
        self._voxels = None

    @property
    def voxels(self) -> np.ndarray:
        """Distinct sampled voxels (the rasterised ground truth used for precision)."""
        if self._voxels is None:
            self._voxels = np.unique(self.lin)
        return self._voxels


def resample(target: FiberTarget, step: float = STEP) -> Samples:
    cached = getattr(target, "_samples", None)
    if cached is not None and step == STEP:
        return cached
    nf = target.n_fibers
    counts = np.zeros(nf, np.int64)
    total = K.count_fiber_samples(target.coords, target.edges, target.edge_offsets, float(step), counts)
    lin = np.empty(total, np.int64)
    dl = np.empty(total, np.float64)
    fib = np.empty(total, np.int32)
    K.fill_fiber_samples(target.coords, target.edges, target.edge_offsets, target.node_start, float(step),
                         np.asarray(target.shape, np.int64), lin, dl, fib)
    keep = lin >= 0
    samples = Samples(lin[keep], dl[keep], fib[keep], nf)
    if step == STEP:
        target._samples = samples
    return samples


def as_label_array(labels, shape, name: str = "<labels>") -> np.ndarray:
    """Check a label volume's shape and dtype; return it as a plain ndarray numba accepts."""
    arr = np.asarray(labels)
    if arr.shape != tuple(shape):
        raise ScoreError(f"{name}: shape {arr.shape} differs from the cube's shape {tuple(shape)}; "
                         f"label exactly the target's cube")
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ScoreError(f"{name}: holds {arr.dtype} values; give integer instance ids (0 = background), "
                         f"not probabilities or a mask")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype == np.uint64:  # ids >= 2**63 show as negative and are refused; no copy
        arr = arr.view(np.int64)
    return read_only(arr)


def read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr`` (no copy): the kernels reading labels get one kind of array
    whether a volume was read from disk (read-only) or computed (writable), so numba compiles
    them once per dtype, not twice."""
    view = arr.view()
    view.flags.writeable = False
    return view


def label_census(arr: np.ndarray, name: str = "<labels>") -> tuple[int, int]:
    """``(predicted voxels, distinct non-zero instances)``; refuses negative ids."""
    count, lo, hi = K.label_stats(arr)
    if lo < 0:
        raise ScoreError(f"{name}: holds negative ids (min {lo}; or uint64 ids >= 2**63); instance ids must be "
                         f">= 0 with 0 = background")
    if count == 0:
        return 0, 0
    if hi <= max(arr.size, 1 << 27):  # a bitset of at most max(voxels, 2**27) bits
        seen = np.zeros((int(hi) >> 3) + 1, np.uint8)
        return int(count), int(K.count_present(arr, seen))
    vals = np.empty(int(count), arr.dtype)
    K.gather_nonzero(arr, vals)
    return int(count), int(np.unique(vals).size)


def _runs(samples: Samples, labels: np.ndarray):
    n = labels.shape[0]
    rf = np.empty(n, np.int32)
    rl = np.empty(n, np.int64)
    rlen = np.empty(n, np.float64)
    k = K.fiber_runs(samples.fiber, labels, samples.dl, rf, rl, rlen)
    return rf[:k], rl[:k], rlen[:k]


def labelled_near(labels: np.ndarray, voxels: np.ndarray, ball: np.ndarray, *, tile_rows=None, executor=None,
                  threads=None) -> int:
    """Labelled voxels of ``labels`` (Z, Y, X) within the ``ball`` offsets of any of the sorted
    flat ``voxels``: the precision pass, reduced slab by slab through
    :func:`segscore.engine.reduce` (each slab counts its own voxels once, so the slabs add up
    to the whole; a slab's bitset is an eighth of a byte per voxel of the slab)."""
    from segscore.engine import reduce
    from segscore.io.sources import ArraySource

    plane = int(labels.shape[1]) * int(labels.shape[2])
    reach = int(np.abs(ball[:, 0]).max()) if ball.size else 0

    def chunk(tile, slab):
        z0, z1 = tile.window[0].start, tile.window[0].stop
        lo, hi = np.searchsorted(voxels, [max(z0 - reach, 0) * plane, (z1 + reach) * plane])
        bits = np.zeros((slab.size + 7) // 8, np.uint8)
        hits, _ = K.count_labelled_near(read_only(slab), voxels[lo:hi], ball, bits, z0)
        return int(hits)

    total = reduce([ArraySource(labels, "labels")], chunk, lambda a, b: a + b, tile_rows=tile_rows,
                   executor=executor, threads=threads, target_px=1 << 24)
    return int(total or 0)


def _round(v, places):
    return None if v is None else round(float(v), places)


def score_labels(target: FiberTarget, labels, *, tolerance: float | None = None, name: str = "<labels>",
                 census: tuple[int, int] | None = None) -> dict:
    """The metrics row of one labelling (ScrollGT's fields), rounded as ScrollGT prints them,
    with ``notes`` ({metric: why it is null}; empty when every metric is defined).

    ``census`` (predicted voxels, instances) may be passed when known, to skip a full scan.
    """
    arr = as_label_array(labels, target.shape, name)
    tol = target.tolerance if tolerance is None else float(tolerance)
    pred_voxels, n_inst = label_census(arr, name) if census is None else census
    s = resample(target)

    grown = np.empty(s.lin.shape[0], np.int64)
    K.grow_lookup(arr, s.lin, K.ball_offsets(tol), grown)
    gt_length = float(s.dl.sum())
    covered = float(s.dl[grown != 0].sum())

    rf, rl, rlen = _runs(s, grown)
    runs_per_fiber = np.bincount(rf, minlength=s.n_fibers)
    splits = int(np.maximum(runs_per_fiber - 1, 0).sum())
    if rl.size:
        pairs = np.unique(np.stack([rl, rf.astype(np.int64)], axis=1), axis=0)
        inst, fibers_per_inst = np.unique(pairs[:, 0], return_counts=True)
    else:
        inst = np.zeros(0, np.int64)
        fibers_per_inst = np.zeros(0, np.int64)
    merges = int(np.maximum(fibers_per_inst - 1, 0).sum())
    merging = inst[fibers_per_inst > 1]
    merged_instances = int(merging.size)

    total = float(rlen.sum())
    reasons = {}  # the row's ``notes``: {metric: why it is null}
    if total > 0:
        erl = float((rlen * rlen).sum() / total)
        penal = np.where(np.isin(grown, merging), 0, grown) if merging.size else grown
        _, _, plen = _runs(s, penal)
        erl_pen = float((plen * plen).sum() / total)
    else:
        erl = erl_pen = None
        reasons["erl"] = reasons["erl_merge_penalized"] = \
            "no ground-truth sample lies within tolerance of a predicted instance: ERL is 0/0"

    coverage = covered / gt_length if gt_length > 0 else None
    if gt_length <= 0:
        reasons["coverage"] = "the target has no in-bounds ground-truth length: coverage is 0/0"
    if pred_voxels > 0:
        ball = K.ball_offsets(tol) if (tol > 0 and s.lin.size) else K.ball_offsets(0)
        precision = labelled_near(arr, s.voxels, ball) / pred_voxels
    else:
        precision = None

    row = {
        "erl": _round(erl, 2),
        "erl_merge_penalized": _round(erl_pen, 2),
        "coverage": _round(coverage, 4),
        "precision": _round(precision, 4),
        "splits": splits,
        "merges": merges,
        "merged_instances": merged_instances,
        "n_gt_fibers": int(s.n_fibers),
        "n_pred_instances": int(n_inst),
        "gt_length": round(gt_length, 1),
        "pred_length": float(pred_voxels),
        "tolerance": tol,
    }
    if precision is None:
        reasons["precision"] = "the prediction labels no voxel: precision is 0/0"
    row["notes"] = {k: reasons[k] for k in ("erl", "erl_merge_penalized", "coverage", "precision") if k in reasons}
    return row
