"""Betti matching of two images (Stucki et al., arXiv 2407.04683) on the numba kernels of
:mod:`segscore.kernels.betti`.

:func:`betti_matching` takes two real-valued 2D or 3D images of one shape and returns, per
homology dimension, the finite persistence pairs of each (birth and death voxels) and which
of them the induced matching through the comparison image (their voxel-wise minimum) pairs
up. Sublevel-set filtration, V-construction (voxels are vertices; 6-connected in 3D, 4 in 2D),
the volume's outside at +inf; essential classes are not pairs. Among simultaneous births the
cell with the lowest C-order index is the elder (see the kernels' module docstring): on binary
images that rule decides which component is essential, so it is part of the definition. The
answers equal Betti-Matching-3D's ``compute_matching(input1, input2)`` pair for pair
(tests/topology/test_betti_matching.py against recorded fixtures). A 2D image is matched in
2D (dimension 1 by union-find on the dual, the same pairs in the same order as the 3D column
reduction: tests/topology/test_betti_2d.py). Shared by the topology family (TopoScore) and the
curvilinear one (curvicost's ``betti_matching`` column).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from segscore.errors import ScoreError


class BettiInputError(ScoreError):
    """The two images cannot be matched (shape, dimensionality, NaN)."""


@dataclass
class DimensionMatching:
    """The pairs of one homology dimension.

    ``birth0``/``death0`` (and ``1``): ``(n, 3)`` int64 voxel coordinates of each input's finite
    pairs (2D inputs keep a leading 0); ``matched0``/``matched1``: the indices of the matched
    pairs into them, aligned (``matched0[i]`` is matched with ``matched1[i]``).
    """

    birth0: np.ndarray
    death0: np.ndarray
    birth1: np.ndarray
    death1: np.ndarray
    matched0: np.ndarray
    matched1: np.ndarray

    @property
    def n_matched(self) -> int:
        return int(self.matched0.shape[0])

    @property
    def n_pairs0(self) -> int:
        return int(self.birth0.shape[0])

    @property
    def n_pairs1(self) -> int:
        return int(self.birth1.shape[0])

    def unmatched0(self) -> np.ndarray:
        keep = np.ones(self.n_pairs0, bool)
        keep[self.matched0] = False
        return np.flatnonzero(keep)

    def unmatched1(self) -> np.ndarray:
        keep = np.ones(self.n_pairs1, bool)
        keep[self.matched1] = False
        return np.flatnonzero(keep)

    def counts(self) -> tuple[int, int, int]:
        """``(matched, unmatched in input 0, unmatched in input 1)``."""
        return (self.n_matched, self.n_pairs0 - len(set(self.matched0.tolist())),
                self.n_pairs1 - len(set(self.matched1.tolist())))


@dataclass
class BettiMatching:
    """Per-dimension pairs (``dims[k]`` for k = 0, 1, 2) of a Betti matching."""

    shape: tuple
    dims: list = field(default_factory=list)


def _ranks(a: np.ndarray, b: np.ndarray):
    """int32 ranks of both images on one scale (ties equal) and the number of levels."""
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return a.astype(np.int32).ravel(), b.astype(np.int32).ravel(), 2
    if a.dtype == np.uint8 and b.dtype == np.uint8 and a.max(initial=0) <= 1 and b.max(initial=0) <= 1:
        # binary (the topology score's case): the values are their own ranks
        return a.astype(np.int32).ravel(), b.astype(np.int32).ravel(), 2
    if a.dtype.kind in "fc" and (np.isnan(a).any() or np.isnan(b).any()):
        raise BettiInputError("betti_matching: an input holds NaN; replace it by a value first")
    levels, inv = np.unique(np.concatenate([a.ravel(), b.ravel()]), return_inverse=True)
    inv = inv.astype(np.int32).ravel()
    return inv[: a.size].copy(), inv[a.size:].copy(), int(levels.size)


def _as3d(x, name):
    x = np.asarray(x)
    if x.ndim == 2:
        return x[None]
    if x.ndim != 3:
        raise BettiInputError(f"betti_matching: {name} must be 2D or 3D, got ndim={x.ndim}")
    return x


def _coords(flat, shape3):
    if flat.size == 0:
        return np.zeros((0, 3), np.int64)
    return np.stack(np.unravel_index(flat, shape3), axis=1).astype(np.int64)


def _solo(K, r, cval_c, shape, nvals):
    """One input's pairs in every dimension (and the comparison cube of each top-dimension
    death), its big arrays freed as soon as they are used."""
    nx, ny, nz = shape
    faces = K.sorted_cells(r, nx, ny, nz, 2, nvals)
    cval = K._cube_values(r, nx, ny, nz)
    keep = np.empty(faces.shape[0], np.bool_)
    _, f2, c2, key2 = K.dual_pairs(faces, r, cval, cval_c, nx, ny, nz, False, True, keep)
    del cval
    _, e1, f1, _ = K.reduce_dim1(faces, keep, r, ny, nz, True, _NONE, _NONE)
    del faces, keep
    edges = K.sorted_cells(r, nx, ny, nz, 1, nvals)
    _, v0, e0 = K.uf_pairs(edges, r, nx, ny, nz)
    return (v0, e0), (e1, f1), (f2, c2, key2)


def _solo_2d(K, r, sval_c, ny, nz, nvals):
    """One 2D input's pairs (dimension 0 by union-find, 1 on the dual: ``(birth edge, death
    square, comparison square)``, in the order of the death squares' filtration, as the 3D
    column reduction lists them)."""
    edges = K.sorted_cells(r, 1, ny, nz, 1, nvals)
    sval = K.square_values_2d(r, ny, nz)
    _, e1, s1, key1 = K.dual_pairs(edges, r, sval, sval_c, 1, ny, nz, True, True, _NO_KEEP)
    o = _square_order(s1, sval)
    del sval
    _, v0, e0 = K.uf_pairs(edges, r, 1, ny, nz)
    return (v0, e0), (e1[o], s1[o] * 3, key1[o])


def _square_order(squares, sval):
    """The order of ``squares`` (by lowest pixel) in the filtration: (value, index)."""
    return np.lexsort((squares, sval[squares]))


def _match_top(keys, dying_c, n_cells):
    """Top-dimension matching: a comparison pair (its dying cell ``dying_c``) is matched when
    both inputs have a pair whose death is named by that comparison cell (``keys[k]``)."""
    m = []
    for key in keys:
        mp = np.full(n_cells, -1, np.int32)
        mp[key] = np.arange(key.shape[0])
        m.append(mp[dying_c])
    ok = (m[0] >= 0) & (m[1] >= 0)
    return m[0][ok], m[1][ok]


def _match_dim0(K, edges, rc, r0, r1, shape, deaths):
    """Dimension-0 matching: the comparison's union-find over its ``edges`` (in its order),
    the inputs' elder rules along; ``deaths[k]``: the voxels where input k's pairs die."""
    nx, ny, nz = shape
    vox_pair = []
    for d in deaths:
        vp = np.full(rc.shape[0], -1, np.int32)
        vp[d] = np.arange(d.shape[0])
        vox_pair.append(vp)
    _, mm0, mm1 = K.uf_image_match(edges, rc, r0, r1, nx, ny, nz, vox_pair[0], vox_pair[1])
    return mm0, mm1


_NONE = np.zeros(0, np.int64)
_NO_KEEP = np.zeros(0, np.bool_)
_MAX_VOXELS = (2**31 - 1) // 3


def betti_matching(input0, input1, *, threads: int = 1) -> BettiMatching:
    """Betti matching of ``input0`` and ``input1`` (real-valued, one shape, 2D or 3D).

    Parameters
    ----------
    input0, input1 : array_like
        The two filtrations (sublevel sets). Which one is "the truth" does not change the
        matching; the topology score passes the prediction first, as the competition does.
    threads : int
        2 or more runs independent steps two at a time (the kernels release the GIL), on the
        engine's threads (:func:`segscore.engine.side_by_side`, capped by its thread budget):
        the two inputs' own pairs (and in 2D the comparison's); in 3D then the comparison's
        squares beside the dimension-0 matching, and the two inputs' image pairs. The answers do
        not depend on it; the peak memory does (a 3D pair: about 46 bytes per voxel on one
        thread, 72 on two).

    Returns
    -------
    BettiMatching
        ``dims[k]`` (k = 0, 1, 2) holds the pairs of each input and the matched indices.

    Notes
    -----
    A 2D image (or a volume one voxel thick) is matched in 2D: dimension 1 is its top
    dimension, computed by union-find on the dual (squares and the outside, edges from last to
    first) instead of the 3D column reduction; the answers are the same (tests compare the
    two paths, and both with Betti-Matching-3D's).
    """
    a = _as3d(input0, "input0")
    b = _as3d(input1, "input1")
    if a.shape != b.shape:
        raise BettiInputError(f"betti_matching: shapes differ: {a.shape} vs {b.shape}")
    out = BettiMatching(shape=tuple(np.asarray(input0).shape))
    if a.size == 0:
        z = np.zeros((0, 3), np.int64)
        e = np.zeros(0, np.int64)
        out.dims = [DimensionMatching(z, z, z, z, e, e) for _ in range(3)]
        return out
    if a.size > _MAX_VOXELS:
        raise BettiInputError(
            f"betti_matching: {a.size} voxels is more than {_MAX_VOXELS} at once; match tiles")
    r0, r1, nvals = _ranks(a, b)
    shape = tuple(int(s) for s in a.shape)
    match = _match_2d if shape[0] == 1 else _match_3d
    out.dims = match(r0, r1, shape, nvals, threads)
    return out


def _dims(K, r0, r1, shape, solo, matches):
    """The three :class:`DimensionMatching` of the pairs ``solo[k][d] = (births, deaths)``
    (cells) of each input and the ``matches[d]``."""
    nx, ny, nz = shape

    def voxels(r, dim, cells):
        o = np.empty(cells.shape[0], np.int64)
        K.cell_voxels(r, nx, ny, nz, dim, cells.astype(np.int64), o)
        return _coords(o, shape)

    dims = []
    for d, match in enumerate(matches):
        b0, x0 = solo[0][d][0], solo[0][d][1]
        b1, x1 = solo[1][d][0], solo[1][d][1]
        dims.append(DimensionMatching(
            voxels(r0, d, b0), voxels(r0, d + 1, x0), voxels(r1, d, b1), voxels(r1, d + 1, x1),
            match[0].astype(np.int64), match[1].astype(np.int64)))
    return dims


def _match_2d(r0, r1, shape, nvals, threads):
    """The dimensions of a ``(1, ny, nz)`` pair of ranks: 0 by union-find, 1 on the dual."""
    from segscore.engine import side_by_side
    from segscore.kernels import betti as K

    _, ny, nz = shape
    rc = np.minimum(r0, r1)
    sval_c = K.square_values_2d(rc, ny, nz)

    def comparison():  # the comparison's dimension-1 deaths, in its filtration order
        edges = K.sorted_cells(rc, 1, ny, nz, 1, nvals)
        _, _, s1c, _ = K.dual_pairs(edges, rc, sval_c, sval_c, 1, ny, nz, True, False, _NO_KEEP)
        return edges, s1c[_square_order(s1c, sval_c)]

    *solo, (edges_c, s1c) = side_by_side([lambda r=r: _solo_2d(K, r, sval_c, ny, nz, nvals) for r in (r0, r1)]
                              + [comparison], threads=threads)
    match1 = _match_top([solo[0][1][2], solo[1][1][2]], s1c, sval_c.shape[0])
    match0 = _match_dim0(K, edges_c, rc, r0, r1, shape, [solo[0][0][0], solo[1][0][0]])
    none = np.zeros(0, np.int64)
    solo = [s + ((none, none),) for s in solo]
    return _dims(K, r0, r1, shape, solo, (match0, match1, (none, none)))


def _match_3d(r0, r1, shape, nvals, threads):
    """The dimensions of a 3D pair of ranks: 0 by union-find, 1 by the column reduction, 2 on
    the dual.

    With ``threads`` >= 2 the independent steps run two at a time: the two inputs' own pairs;
    then the comparison's squares (its dimension-2 and 1 pairs) beside the dimension-0 matching;
    then the two inputs' image pairs. The comparison's ranks are not held while the inputs' pairs
    are computed (remade after: one ``np.minimum``). Peak beyond the inputs, sampled on a 256³
    octant of sheets: about 72 bytes per voxel with two threads, 46 with one (57 before the
    column reduction's per-column table went, ``benchmarks/bench_surfaces.py``)."""
    from segscore.engine import side_by_side
    from segscore.kernels import betti as K

    nx, ny, nz = shape
    rc = np.minimum(r0, r1)
    held = [K._cube_values(rc, nx, ny, nz)]  # the comparison's cube values, until its dual is done
    nc = held[0].shape[0]
    del rc
    solo = side_by_side([lambda r=r: _solo(K, r, held[0], shape, nvals) for r in (r0, r1)],
                        threads=threads)
    rc = np.minimum(r0, r1)
    deaths0 = [solo[0][0][0], solo[1][0][0]]

    def squares():  # the comparison's dimension-2 pairs (matched at once) and its reduced squares
        faces = K.sorted_cells(rc, nx, ny, nz, 2, nvals)
        keep = np.empty(faces.shape[0], np.bool_)
        cval_c = held.pop()
        _, _, c2c, _ = K.dual_pairs(faces, rc, cval_c, cval_c, nx, ny, nz, False, False, keep)
        del cval_c
        match2 = _match_top([solo[0][2][2], solo[1][2][2]], c2c, nc)
        del c2c
        _, _, _, pos1c = K.reduce_dim1(faces, keep, rc, ny, nz, True, _NONE, _NONE)
        return faces, keep, pos1c, match2

    def dim0():
        edges = K.sorted_cells(rc, nx, ny, nz, 1, nvals)
        return _match_dim0(K, edges, rc, r0, r1, shape, deaths0)

    if threads is not None and threads >= 2:
        (faces, keep, pos1c, match2), match0 = side_by_side([squares, dim0], threads=threads)
    else:  # one step at a time: the edges' union-find after the squares are freed
        faces, keep, pos1c, match2 = squares()
        match0 = None

    order = np.argsort(pos1c, kind="stable")
    want = pos1c[order]

    def image_pairs(k, r):  # input k's pivots of the comparison's reduced columns, as its pairs
        piv = np.full(want.shape[0], -1, np.int64)
        K.reduce_dim1(faces, keep, r, ny, nz, False, want, piv)
        ek = np.empty_like(piv)
        ek[order] = piv
        birth_edges = solo[k][1][0]
        srt = np.argsort(birth_edges, kind="stable")
        at = np.searchsorted(birth_edges[srt], ek)
        at = np.minimum(at, max(birth_edges.shape[0] - 1, 0))
        hit = (ek >= 0) & (birth_edges.shape[0] > 0)
        if birth_edges.shape[0]:
            hit &= birth_edges[srt][at] == ek
        return np.where(hit, srt[at] if birth_edges.shape[0] else -1, -1)

    m1 = side_by_side([lambda k=k, r=r: image_pairs(k, r) for k, r in ((0, r0), (1, r1))], threads=threads)
    del faces, keep
    ok = (m1[0] >= 0) & (m1[1] >= 0)
    match1 = (m1[0][ok], m1[1][ok])
    if match0 is None:
        match0 = dim0()
    return _dims(K, r0, r1, shape, solo, (match0, match1, match2))
