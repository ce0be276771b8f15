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
(tests/topology/test_betti.py against recorded fixtures).
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


def betti_matching(input0, input1) -> BettiMatching:
    """Betti matching of ``input0`` and ``input1`` (real-valued, one shape, 2D or 3D).

    Parameters
    ----------
    input0, input1 : array_like
        The two filtrations (sublevel sets). Which one is "the truth" does not change the
        matching; the topology score passes the prediction first, as the competition does.

    Returns
    -------
    BettiMatching
        ``dims[k]`` (k = 0, 1, 2) holds the pairs of each input and the matched indices.
    """
    from segscore.kernels import betti as K

    a = _as3d(input0, "input0")
    b = _as3d(input1, "input1")
    if a.shape != b.shape:
        raise BettiInputError(f"betti_matching: shapes differ: {a.shape} vs {b.shape}")
    shape = tuple(int(s) for s in a.shape)
    out = BettiMatching(shape=tuple(np.asarray(input0).shape))
    nx, ny, nz = shape
    if a.size == 0:
        z = np.zeros((0, 3), np.int64)
        e = np.zeros(0, np.int64)
        out.dims = [DimensionMatching(z, z, z, z, e, e) for _ in range(3)]
        return out
    r0, r1, nvals = _ranks(a, b)
    rc = np.minimum(r0, r1)
    nv = r0.shape[0]
    ne = 3 * nv

    faces = [K.sorted_cells(r, nx, ny, nz, 2, nvals) for r in (r0, r1, rc)]
    cvals = [K._cube_values(r, nx, ny, nz) for r in (r0, r1, rc)]
    nc = cvals[0].shape[0]

    # dimension 2
    keeps, d2 = [], []
    for k, r in enumerate((r0, r1, rc)):
        f = faces[k]
        keep = np.empty(f.shape[0], np.bool_)
        pf = np.empty(min(f.shape[0], nc), np.int64)
        pc = np.empty_like(pf)
        key = np.empty_like(pf)
        n = K.dual_pairs(f, r, cvals[k], cvals[2], nx, ny, nz, keep, pf, pc, key)
        keeps.append(keep)
        d2.append((pf[:n], pc[:n], key[:n]))
    m2 = []
    for k in (0, 1):
        mp = np.full(nc, -1, np.int64)
        mp[d2[k][2]] = np.arange(d2[k][2].shape[0])
        m2.append(mp[d2[2][1]])
    ok = (m2[0] >= 0) & (m2[1] >= 0)
    dim2 = (d2[0][0], d2[0][1], d2[1][0], d2[1][1], m2[0][ok], m2[1][ok])

    # dimension 1
    nf = ne
    empty = np.zeros(0, np.int64)
    d1 = []
    for k, r in enumerate((r0, r1, rc)):
        cap = int(keeps[k].sum())
        pe = np.empty(cap, np.int64)
        pf = np.empty(cap, np.int64)
        n = K.reduce_dim1(faces[k], keeps[k], r, nx, ny, nz, True, pe, pf, empty)
        d1.append((pe[:n], pf[:n]))
    fp = []
    for r in (r0, r1):
        m = np.full(nf, -1, np.int64)
        K.reduce_dim1(faces[2], keeps[2], r, nx, ny, nz, False, empty, empty, m)
        fp.append(m)
    del faces, keeps
    e0 = fp[0][d1[2][1]]
    e1 = fp[1][d1[2][1]]
    m1 = []
    for k, ek in ((0, e0), (1, e1)):
        by_edge = np.full(ne, -1, np.int64)
        by_edge[d1[k][0]] = np.arange(d1[k][0].shape[0])
        m1.append(np.where(ek >= 0, by_edge[np.maximum(ek, 0)], -1))
    ok = (m1[0] >= 0) & (m1[1] >= 0)
    dim1 = (d1[0][0], d1[0][1], d1[1][0], d1[1][1], m1[0][ok], m1[1][ok])
    del fp

    # dimension 0
    d0 = []
    vox_pair = []
    edges_c = None
    for k, r in enumerate((r0, r1, rc)):
        edges = K.sorted_cells(r, nx, ny, nz, 1, nvals)
        if k == 2:
            edges_c = edges
            break
        pv = np.empty(nv, np.int64)
        pe = np.empty(nv, np.int64)
        n = K.uf_pairs(edges, r, nx, ny, nz, pv, pe)
        d0.append((pv[:n], pe[:n]))
        vp = np.full(nv, -1, np.int64)
        vp[pv[:n]] = np.arange(n)
        vox_pair.append(vp)
    mm0 = np.empty(nv, np.int64)
    mm1 = np.empty(nv, np.int64)
    n = K.uf_image_match(edges_c, rc, r0, r1, nx, ny, nz, vox_pair[0], vox_pair[1], mm0, mm1)
    dim0 = (d0[0][0], d0[0][1], d0[1][0], d0[1][1], mm0[:n], mm1[:n])

    def voxels(r, dim, cells):
        o = np.empty(cells.shape[0], np.int64)
        K.cell_voxels(r, nx, ny, nz, dim, cells, o)
        return _coords(o, shape)

    for d, (b0, x0, b1, x1, i0, i1) in enumerate((dim0, dim1, dim2)):
        out.dims.append(DimensionMatching(
            voxels(r0, d, b0), voxels(r0, d + 1, x0), voxels(r1, d, b1), voxels(r1, d + 1, x1),
            i0.astype(np.int64), i1.astype(np.int64)))
    return out
