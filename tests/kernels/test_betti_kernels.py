"""The 2D Betti-matching kernels (kernels/betti.py) against brute-force NumPy oracles: square
values, the squares beside an edge, and the dimension-1 pairs of the dual union-find against a
plain column reduction of the boundary matrix (no duality, no clearing), with the comparison's
elder rule checked against a second, plain union-find."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels import betti as K

NO_KEEP = np.zeros(0, np.bool_)


def _images():
    """Random rank images: empty-ish (one pixel, one row), constant, binary, few and many
    levels; each with its number of levels."""
    rng = np.random.default_rng(20261203)
    out = [np.zeros((1, 1), np.int32), np.zeros((1, 7), np.int32), np.zeros((6, 1), np.int32),
           np.full((5, 6), 3, np.int32), np.zeros((2, 2), np.int32)]
    for _ in range(14):
        ny, nz = (int(s) for s in rng.integers(2, 9, 2))
        levels = int(rng.choice([2, 3, 30]))
        out.append(rng.integers(0, levels, (ny, nz)).astype(np.int32))
    return out


IMAGES = _images()


def _strided(r):
    """``r`` as a non-contiguous view (every other element of a bigger buffer)."""
    store = np.full(2 * r.size, -7, np.int32)
    store[::2] = r.ravel()
    return store[::2]


def _square_values(img):
    ny, nz = img.shape
    out = np.full(ny * nz + 1, np.iinfo(np.int32).max, np.int64)
    for y in range(ny - 1):
        for z in range(nz - 1):
            out[y * nz + z] = img[y:y + 2, z:z + 2].max()
    return out


@pytest.mark.parametrize("k", range(len(IMAGES)))
def test_square_values_2d(k):
    img = IMAGES[k]
    ny, nz = img.shape
    got = K.square_values_2d(_strided(img), ny, nz)
    want = _square_values(img)
    used = np.zeros(ny * nz + 1, bool)  # entries of the last row and column start no square
    used[-1] = True
    used[:-1].reshape(ny, nz)[: ny - 1, : nz - 1] = True
    assert got.dtype == np.int32 and got.shape == want.shape
    assert (got[used] == want[used]).all()


def _edges(img):
    """Every edge of the image as ``(index, pixel a, pixel b, value)``, index ``pixel*3+axis``."""
    ny, nz = img.shape
    out = []
    for y in range(ny):
        for z in range(nz):
            v = y * nz + z
            if y + 1 < ny:
                out.append((v * 3 + 1, v, v + nz, max(img[y, z], img[y + 1, z])))
            if z + 1 < nz:
                out.append((v * 3 + 2, v, v + 1, max(img[y, z], img[y, z + 1])))
    return out


def _squares_beside(img, a, b):
    """The squares (lowest pixel) holding both pixels ``a`` and ``b``; the outside (ny*nz)
    fills up to two."""
    ny, nz = img.shape
    found = []
    for y in range(ny - 1):
        for z in range(nz - 1):
            px = {y * nz + z, y * nz + z + 1, (y + 1) * nz + z, (y + 1) * nz + z + 1}
            if a in px and b in px:
                found.append(y * nz + z)
    return sorted(found + [ny * nz] * (2 - len(found)))


@pytest.mark.parametrize("k", range(len(IMAGES)))
def test_edge_squares_2d(k):
    img = IMAGES[k]
    ny, nz = img.shape
    for e, a, b, _ in _edges(img):
        assert sorted(K.edge_squares_2d(e, ny, nz)) == _squares_beside(img, a, b)


def _reduction_pairs(img):
    """Dimension-1 pairs of positive persistence by the plain column reduction: squares
    (columns) and edges (rows) each in (value, index) order, a column's pivot its latest edge;
    returns ``{square lowest pixel: birth edge}``."""
    ny, nz = img.shape
    edges = sorted(_edges(img), key=lambda t: (t[3], t[0]))
    row = {e[0]: i for i, e in enumerate(edges)}
    sq = [(y * nz + z, img[y:y + 2, z:z + 2].max()) for y in range(ny - 1) for z in range(nz - 1)]
    sq.sort(key=lambda t: (t[1], t[0]))
    cols = np.zeros((len(edges), len(sq)), np.uint8)
    for j, (v, _) in enumerate(sq):
        for e in (v * 3 + 1, v * 3 + 2, (v + 1) * 3 + 1, (v + nz) * 3 + 2):  # its four edges
            cols[row[e], j] = 1
    pivot_of = {}
    pairs = {}
    for j in range(len(sq)):
        while cols[:, j].any():
            low = int(np.flatnonzero(cols[:, j]).max())
            if low not in pivot_of:
                pivot_of[low] = j
                if edges[low][3] != sq[j][1]:
                    pairs[sq[j][0]] = edges[low][0]
                break
            cols[:, j] ^= cols[:, pivot_of[low]]
    return pairs


def _plain_uf_keys(img_order, sval_c, ny, nz, edges):
    """The comparison square dying at each join of the dual union-find run in ``edges``' order
    (reversed) with the comparison's elder rule, by a second, plain union-find."""
    parent = list(range(ny * nz + 1))

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a

    keys = {}
    for e in edges[::-1]:
        a, b = K.edge_squares_2d(int(e), ny, nz)
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        dying = ra if (sval_c[ra], ra) < (sval_c[rb], rb) else rb
        parent[dying] = ra + rb - dying
        keys[int(e)] = dying
    return keys


@pytest.mark.parametrize("k", range(len(IMAGES)))
def test_dual_pairs_2d_equal_the_column_reduction(k):
    img = IMAGES[k]
    ny, nz = img.shape
    r = _strided(img)
    nvals = int(img.max()) + 1
    edges = K.sorted_cells(np.ascontiguousarray(r), 1, ny, nz, 1, nvals)
    sval = K.square_values_2d(r, ny, nz)
    rng = np.random.default_rng(k)
    comp = np.minimum(img, rng.integers(0, nvals, img.shape)).astype(np.int32)
    sval_c = K.square_values_2d(comp.ravel(), ny, nz)
    n, e, s, key = K.dual_pairs(edges, r, sval, sval_c, 1, ny, nz, True, True, NO_KEEP)
    assert n == len(e) == len(s) == len(key)
    assert dict(zip(s.tolist(), e.tolist())) == _reduction_pairs(img)
    assert len(set(s.tolist())) == n  # a square ends one hole at most
    plain = _plain_uf_keys(img, sval_c, ny, nz, edges)
    assert key.tolist() == [plain[x] for x in e.tolist()]
    n2, e2, s2, key2 = K.dual_pairs(edges, r, sval, sval_c, 1, ny, nz, True, False, NO_KEEP)
    assert (e2 == e).all() and (s2 == s).all() and (key2 == -1).all()


def test_dual_pairs_2d_no_edges():
    r = np.zeros(1, np.int32)
    sval = K.square_values_2d(r, 1, 1)
    n, e, s, key = K.dual_pairs(np.zeros(0, np.int32), r, sval, sval, 1, 1, 1, True, True, NO_KEEP)
    assert n == 0 and e.shape == s.shape == key.shape == (0,)
