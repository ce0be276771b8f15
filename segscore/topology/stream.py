"""``surfaces`` of two volumes on disk, scored window by window on the workers of a cluster (or on
this process's threads with ``tile_rows``): the caller opens the files' headers only and never
reads a voxel (issue 37).

Every term comes back as exact integer counts merged by addition, so the JSON is the whole-volume
run's (:func:`segscore.topology.score._score`) for any windows and any number of workers:

- **Counts and surface Dice** (:func:`window_counts`): per window (a band of ``tile_rows`` slices,
  or any box of a grid) its worker reads the window plus a **halo of h = ceil(tau / s_k) + 1 voxels
  along each axis k** (``s_k`` the spacing; clipped at the volume) of the labels, the prediction
  and the ignore mask, makes the ignore region and both foregrounds exactly as the whole-volume
  path does (voxel by voxel), their corner codes, and counts per code (256) and per side the
  surface positions the window *owns* and those within tau of the other surface
  (:func:`segscore.topology.surface.surfel_histograms`). A window owns the corner positions
  ``start..stop - 1`` of its voxels along each axis, and the last window of an axis position
  ``stop`` too. An owned position looks at most ``floor(tau / s_k)`` positions away, and a
  position's code needs the voxels on both sides of it, so ``floor(tau / s_k) + 1`` voxels of
  halo are needed and h is at least that (tests/topology/test_surfaces_stream.py checks it at the
  tolerance's edge, with windows of one slice, a prime and fewer slices than the halo). The
  window also counts its own foreground voxels, ignored voxels and whether the prediction holds
  the ignore value (the swapped-roles warning), and finds its first float prediction value
  other than 0 and 1 (refused without ``fg_threshold``; the first window's in window order, so
  with bands the first in C order, as on the whole volume).
- **VOI**: the components of each foreground by :func:`segscore.objects.blocklabel.blockwise_labels`
  (per-block labels joined on faces: the whole-volume numbering), then per window a sparse
  contingency table of (truth label, prediction label) pairs over the voxels where either is
  foreground, merged by adding counts; VOI from those counts with the whole-volume arithmetic
  (:func:`segscore.topology.score._voi_of_counts`).
- **TopoScore**: one task per tile, read by its worker (:func:`segscore.topology.score._tile_from_files`).

Memory per worker, per voxel of a window as read (its ``tile_rows`` slices plus ``2 h``): the
counts pass about 5 bytes measured on uint8 inputs (two raw volumes, the ignore region, two
masks, two code grids; more for wider dtypes: 2 x their itemsize for the raws); the labels and
contingency passes 27-29 bytes measured (values, int32 labels, the labeller's scratch; two label
windows relabelled from their blocks and the int64 keys of the foreground pairs with their sort;
docs/cluster.md has the formula). The partial results: 4 x 256 int64 per window, the face table
of the labels, and a sparse table of the label pairs met.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np


class Inputs:
    """The recipe a worker reads a window of the scored masks from (picklable: sources travel as
    their paths). ``truth``, ``pred``, ``mask`` (or None): sources; ``ignore_label`` (None when the
    mask is given or no label is ignored); ``two_d``: the sources are 2D, scored as one slice."""

    def __init__(self, truth, pred, mask, ignore_label, fg_threshold, two_d, shape3):
        self.truth, self.pred, self.mask = truth, pred, mask
        self.ignore_label, self.fg_threshold, self.two_d = ignore_label, fg_threshold, two_d
        self.shape3 = tuple(int(n) for n in shape3)

    def _read(self, source, window3):
        a = source.read(window3[1:] if self.two_d else window3)
        return a[None] if self.two_d else a

    def raw(self, window3, pred=True):
        """``(labels, prediction or None, ignore region or None)`` of a 3D window."""
        from segscore.topology.score import ignore_mask_of

        g_raw = self._read(self.truth, window3)
        p_raw = self._read(self.pred, window3) if pred else None
        m = self._read(self.mask, window3) if self.mask is not None else None
        if m is not None and m.dtype.kind in "fc":
            m = m.astype(bool)
        ign = ignore_mask_of(g_raw, ignore_label=self.ignore_label, ignore_mask=m)
        return g_raw, p_raw, ign


class Foreground:
    """One volume's foreground (uint8 0/1) as a 3D source, for :func:`blockwise_labels`."""

    def __init__(self, inputs: Inputs, which: str):
        self.inputs, self.which = inputs, which
        self.shape = inputs.shape3
        self.dtype = np.dtype(np.uint8)
        self.name = f"<foreground of the {'labels' if which == 'truth' else 'prediction'}>"
        self.chunks = None

    def read(self, window):
        from segscore.topology.score import binarize

        g_raw, p_raw, ign = self.inputs.raw(tuple(window), pred=self.which == "pred")
        x = g_raw if self.which == "truth" else p_raw
        return binarize(x, threshold=self.inputs.fg_threshold, ignore=ign).view(np.uint8)

    def close(self):
        pass


def halo_of(tolerance: float, spacing) -> tuple:
    """h = ceil(tau / s_k) + 1 voxels per axis (module docstring)."""
    return tuple(int(math.ceil(float(tolerance) / float(s))) + 1 for s in spacing)


def window_counts(inputs: Inputs, tolerance, spacing, halo, tile) -> dict:
    """One window's counts (module docstring): ``hist`` (4, 256) int64 (see
    :func:`segscore.topology.surface.surfel_histograms`), ``n`` = [truth foreground, prediction
    foreground, ignored voxels], ``label`` whether the prediction holds the ignore label, ``bad``
    its first float value other than 0 and 1 (or None)."""
    from segscore.topology.score import binarize
    from segscore.topology.surface import corner_grid, surfel_histograms

    w = tuple(tile.window)
    shape = inputs.shape3
    r = tuple(slice(max(0, s.start - h), min(n, s.stop + h)) for s, h, n in zip(w, halo, shape))
    g_raw, p_raw, ign = inputs.raw(r)
    core = tuple(slice(s.start - q.start, s.stop - q.start) for s, q in zip(w, r))
    pc = p_raw[core]
    bad = None
    if inputs.fg_threshold is None and pc.dtype.kind in "fc":
        off = (pc != 0) & (pc != 1) & ~np.isnan(pc)
        if off.any():
            bad = pc[off].flat[0]
    label = inputs.ignore_label
    holds = bool(inputs.mask is None and label is not None and np.any(pc == label))
    n_ign = int(np.count_nonzero(ign[core])) if ign is not None else 0
    g = binarize(g_raw, threshold=inputs.fg_threshold, ignore=ign)
    del g_raw
    p = binarize(p_raw, threshold=inputs.fg_threshold, ignore=ign)
    del p_raw, pc, ign
    n = [int(np.count_nonzero(g[core])), int(np.count_nonzero(p[core]))]
    cg, cp = corner_grid(g), corner_grid(p)
    del g, p
    lo = tuple(c.start for c in core)
    hi = tuple(c.stop + (1 if s.stop == size else 0) for c, s, size in zip(core, w, shape))
    hist = surfel_histograms(cg, cp, tolerance=tolerance, spacing=spacing, box=(lo, hi))
    return {"hist": hist, "n": n + [n_ign], "label": holds, "bad": bad}


def merge_counts(a: dict, b: dict) -> dict:
    return {"hist": a["hist"] + b["hist"], "n": [x + y for x, y in zip(a["n"], b["n"])],
            "label": a["label"] or b["label"], "bad": a["bad"] if a["bad"] is not None else b["bad"]}


def pair_table(labels, n_p, tile):
    """The sparse contingency of one window: ``(keys, counts)``, key = truth label x (n_p + 1) +
    prediction label, over the voxels where either is foreground."""
    w = tuple(tile.window)
    tl = labels[0].read(w)
    pl = labels[1].read(w)
    keep = (tl != 0) | (pl != 0)
    keys = tl[keep].astype(np.int64) * (n_p + 1) + pl[keep].astype(np.int64)
    del tl, pl, keep
    u, c = np.unique(keys, return_counts=True)
    return u, c.astype(np.int64)


def merge_tables(a, b):
    keys = np.concatenate([a[0], b[0]])
    counts = np.concatenate([a[1], b[1]])
    u, inv = np.unique(keys, return_inverse=True)
    out = np.zeros(u.size, np.int64)
    np.add.at(out, inv.reshape(-1), counts)
    return u, out


#: voxels of a default window (without its halo): the objects pass's band size
WINDOW_PX = 1 << 24


def bands3(shape3, tile_rows=None) -> list[tuple]:
    """The engine windows: bands of ``tile_rows`` slices along axis 0 (default about
    :data:`WINDOW_PX` voxels)."""
    from segscore.engine.plan import plan_bands

    per = max(int(np.prod(shape3[1:], dtype=np.int64)), 1)
    return plan_bands(shape3, tile_rows=tile_rows or max(1, WINDOW_PX // per))


#: bytes per voxel of a window at the streamed passes' peak on a worker (module docstring: the
#: components and contingency passes' 27-29 measured, with room)
WINDOW_BYTES_PER_VOXEL = 32


def check_window_budget(windows, shape3, budget) -> None:
    """Refuse in one line (:class:`~segscore.topology.score.SurfacesInputError`) ``windows`` whose
    largest needs more than ``budget`` (``(bytes, memory limit)`` of
    :func:`segscore.engine.executor.worker_budget`, or None: no limit) at
    :data:`WINDOW_BYTES_PER_VOXEL` per voxel; the fix names the ``--tile-rows`` that fit."""
    from segscore.engine.executor import budget_words
    from segscore.topology.score import SurfacesInputError

    voxels = max((int(np.prod([s.stop - s.start for s in w], dtype=np.int64)) for w in windows), default=0)
    need = WINDOW_BYTES_PER_VOXEL * voxels
    if budget is None or need <= budget[0]:
        return
    cap = budget[0] // WINDOW_BYTES_PER_VOXEL  # the voxels a window may hold
    k = 3 if shape3[0] > 1 else 2  # boxes of the inputs' axes (a 2D pair is one slice)
    side = int(round(cap ** (1 / k)))
    while side ** k > cap:
        side -= 1
    rows = cap // max(int(np.prod(shape3[1:], dtype=np.int64)), 1)
    boxes = "--tile-shape " + " ".join([str(side)] * k)
    if rows >= 1 and k == 3:
        fix = f"--tile-rows {rows} (tile_rows={rows}) or fewer, or {boxes}"
    elif side >= 1:
        fix = f"{boxes} (windows as boxes) or workers with more memory"
    else:
        fix = "workers with more memory"
    raise SurfacesInputError(
        f"windows of {voxels} voxels need about {need} bytes on one worker ({WINDOW_BYTES_PER_VOXEL} B/voxel for "
        f"the components and contingency passes), more than {budget_words(budget)}; fix: {fix}")


def boxes3(shape3, tile_shape, ndim) -> list[tuple]:
    """The engine windows as boxes of ``tile_shape`` (one length per axis of the ``ndim``-D inputs;
    a 2D pair is scored as one slice) tiling the volume as a grid. SurfacesInputError for another
    number of lengths or one below 1."""
    from segscore.engine.plan import plan_boxes
    from segscore.topology.score import SurfacesInputError

    given = tuple(tile_shape)
    if len(given) != ndim or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1
                                     for n in given):
        raise SurfacesInputError(f"tile_shape {' '.join(map(str, given))}: give {ndim} whole numbers >= 1, one per "
                                 f"axis of the {ndim}D inputs (--tile-shape)")
    return plan_boxes(shape3, (1,) + given if ndim == 2 else given)


def streamed_counts(inputs: Inputs, windows, *, tolerance, spacing, executor, threads=None, halo=None) -> dict:
    """The counts pass (:func:`window_counts` merged over ``windows``, 3D boxes tiling the volume);
    ``halo`` per axis (default :func:`halo_of`; a test may give less)."""
    from segscore.engine import reduce

    halo = tuple(halo) if halo is not None else halo_of(tolerance, spacing)
    got = reduce(None, functools.partial(window_counts, inputs, float(tolerance), tuple(spacing), halo),
                 merge_counts, windows=windows, executor=executor, threads=threads)
    if got is None:  # no window: a volume of zero slices
        got = {"hist": np.zeros((4, 256), np.int64), "n": [0, 0, 0], "label": False, "bad": None}
    return got


def streamed_voi(inputs: Inputs, windows, *, connectivity, executor, threads=None):
    """:func:`segscore.topology.score._voi_counts`' counts of the two foregrounds, from blocks."""
    from segscore.engine import reduce
    from segscore.objects.blocklabel import blockwise_labels
    from segscore.topology.score import voi_counts_of_table

    labels = [blockwise_labels(Foreground(inputs, which), connectivity=connectivity, windows=windows,
                               executor=executor, threads=threads) for which in ("truth", "pred")]
    n_t, n_p = labels[0].count, labels[1].count
    table = reduce(None, functools.partial(pair_table, (labels[0].source, labels[1].source), n_p), merge_tables,
                   windows=windows, executor=executor, threads=threads)
    keys, counts = table if table is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return voi_counts_of_table(keys // (n_p + 1), keys % (n_p + 1), counts, n_t, n_p)


@contextlib.contextmanager
def opened(truth, pred, mask):
    """The three sources (headers only; the mask None when not given): paths opened here and
    closed at the end, sources given by the caller used as they are (and left open)."""
    from segscore.io.readers import open_labels

    with contextlib.ExitStack() as stack:
        out = []
        for x, what in ((truth, "labels"), (pred, "prediction"), (mask, "ignore mask")):
            if x is None:
                out.append(None)
                continue
            source = open_labels(x, what=what, ndims=(2, 3))
            out.append(stack.enter_context(source) if isinstance(x, str) or hasattr(x, "__fspath__") else source)
        yield out
