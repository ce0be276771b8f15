"""Persistent homology of 3D cubical complexes and the induced (Betti) matching of two of them.

The complex (the V-construction): the voxels of an ``(nx, ny, nz)`` volume are its vertices; an
edge joins two voxels adjacent along one axis, a square four voxels, a cube eight; every cell
takes the maximum of its voxels' values and appears when the sublevel set reaches it. Cells
that would reach past the volume's border (the +inf padding) never appear. A 2D image is the
volume ``(1, ny, nz)``.

Values arrive as **ranks**: int32 arrays whose order is the order of the real values (ties
equal), so one integer comparison replaces a float one and a cell's value is the maximum rank
of its voxels.

The filtration order (the tie rule, part of the definition)
-----------------------------------------------------------
Cells of one dimension are ordered by (value, index), the index being the C-order position
of the cell's lowest voxel followed by its type (edges: the axis they run along; squares: the
axis normal to them), i.e. ``cell = voxel * 3 + type``; cubes by their lowest voxel. So among
simultaneous births the cell with the lowest index is the elder. In dimension 0 this reads:
when two components meet, the one holding the lowest (value, C-order voxel index) survives;
in the top dimension (union-find on the dual, processed downwards) the component holding the
highest (value, index) cube survives and the outside of the volume is older than every cube.
This is the order Betti-Matching-3D (Stucki et al., arXiv 2407.04683) uses; its answers on
recorded volumes are the tests (tests/topology/test_betti_matching.py, tests/data/betti_matching/).

Dimension 0 is computed by union-find over edges, dimension 2 by union-find over the dual
(squares joining cubes and the outside), dimension 1 by the standard column reduction of the
boundary matrix of squares (columns, in filtration order, with the squares that close a
2-cycle cleared by the dimension-2 pass) whose pivot is the latest edge, with the reduced
columns kept for reuse. In a 2D image dimension 1 is the top one and goes on the dual too
(edges joining squares and the outside, :func:`dual_pairs` with ``flat``): the same pairs as the
reduction, in one union-find pass. Union-finds that run over one order of cells have the same
sets whichever image's elder rule they follow, so the other images' rules ride on one
union-find (:func:`_follow`) instead of a union-find each.

The matching goes through the comparison image (the voxel-wise minimum of the two inputs): a
comparison pair is matched when its image pairs (the comparison pairs seen through each
input's order) are pairs of both inputs.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.components import find

_LOW = np.int64(0xFFFFFFFF)  # the edge of a key ``value << 32 | edge``
_OUT = np.int32(2147483647)  # the outside of the volume in the dual: older than every cube


# ---- cells and their values


def _nodes32(n):
    """``0, 1, ..., n - 1`` as int32 for a union-find's nodes, allocated by NumPy (written once, in
    int32). Why not inside a kernel: NumPy asks the kernel for huge pages for arrays of 4 MB or
    more (``madvise``) and numba's allocator does not, so a 16.7 M-node array inside a kernel
    costs 16,000 page faults of 4 kB, 5x the time of writing it (0.125 s against 0.025 s for
    200 MB here, benchmarks/README.md): the per-voxel arrays of a tile's matching are made here and
    passed to the kernels."""
    return np.arange(max(int(n), 0), dtype=np.int32)


@jit
def face_cubes(f, nx, ny, nz):
    """The two cubes on either side of square ``f``, each named by its lowest voxel; the
    outside of the volume is ``nx * ny * nz`` (after every cube)."""
    t = f % 3
    v = f // 3
    nyz = ny * nz
    out = nx * nyz
    if t == 0:  # normal x: x == 0 iff v < nyz
        a = out if v < nyz else v - nyz
        b = out if v >= (nx - 1) * nyz else v
    elif t == 1:
        y0 = v % nyz < nz
        a = out if y0 else v - nz
        b = out if v % nyz >= (ny - 1) * nz else v
    else:
        z = v % nz
        a = out if z == 0 else v - 1
        b = out if z == nz - 1 else v
    return a, b


@jit
def face_keys(f, r, ny, nz, out):
    """The keys ``value << 32 | edge`` of the four edges of square ``f`` into ``out``, highest
    edge index first; returns the square's value (the largest edge value)."""
    t = f % 3
    v = f // 3
    nyz = ny * nz
    if t == 0:  # y-z square
        da = nz
        db = 1
        e0 = (v + nz) * 3 + 2
        e1 = (v + 1) * 3 + 1
        e2 = v * 3 + 2
        e3 = v * 3 + 1
    elif t == 1:  # x-z square
        da = nyz
        db = 1
        e0 = (v + nyz) * 3 + 2
        e1 = (v + 1) * 3 + 0
        e2 = v * 3 + 2
        e3 = v * 3 + 0
    else:  # x-y square
        da = nyz
        db = nz
        e0 = (v + nyz) * 3 + 1
        e1 = (v + nz) * 3 + 0
        e2 = v * 3 + 1
        e3 = v * 3 + 0
    a = np.int64(r[v])
    b = np.int64(r[v + da])
    c = np.int64(r[v + db])
    d = np.int64(r[v + da + db])
    # e0 joins (v+da, v+da+db), e1 (v+db, v+da+db), e2 (v, v+db), e3 (v, v+da)
    out[0] = (max(b, d) << 32) | e0
    out[1] = (max(c, d) << 32) | e1
    out[2] = (max(a, c) << 32) | e2
    out[3] = (max(a, b) << 32) | e3
    return max(max(a, b), max(c, d))


@jit
def _cell_values_into(r, nx, ny, nz, dim, x, y, vals):
    """Values of the cells (3 per voxel) of row ``(x, y)`` into ``vals`` (-1: not in the
    complex)."""
    nyz = ny * nz
    hx = x + 1 < nx
    hy = y + 1 < ny
    base = x * nyz + y * nz
    for z in range(nz):
        v = base + z
        a = r[v]
        hz = z + 1 < nz
        o = z * 3
        if dim == 1:
            vals[o] = max(a, r[v + nyz]) if hx else -1
            vals[o + 1] = max(a, r[v + nz]) if hy else -1
            vals[o + 2] = max(a, r[v + 1]) if hz else -1
        else:
            if hy and hz:
                vals[o] = max(max(a, r[v + nz]), max(r[v + 1], r[v + nz + 1]))
            else:
                vals[o] = -1
            if hx and hz:
                vals[o + 1] = max(max(a, r[v + nyz]), max(r[v + 1], r[v + nyz + 1]))
            else:
                vals[o + 1] = -1
            if hx and hy:
                vals[o + 2] = max(max(a, r[v + nyz]), max(r[v + nz], r[v + nyz + nz]))
            else:
                vals[o + 2] = -1


def sorted_cells(r, nx, ny, nz, dim, nvals):
    """int32 indices of the cells of ``dim`` (1: edges, 2: squares) present in the complex,
    in filtration order (value, index): a stable counting sort over the ``nvals`` ranks, the
    values computed a row at a time (``3 * nz`` scratch). Two levels (a binary image, the
    topology score's case) take one pass instead of two: the cells of value 0 fill the output
    from the front, those of value 1 from the back, and that tail is reversed (0.55x the time
    of the counting sort at 128^3)."""
    if nvals == 2:  # plain Python choosing the kernel: the scores' binary images compile one only
        return _sorted_cells_binary(r, nx, ny, nz, dim)
    return _sorted_cells_counting(r, nx, ny, nz, dim, nvals)


def _n_cells(nx, ny, nz, dim) -> int:
    """How many cells of ``dim`` (1: edges, 2: squares) the ``(nx, ny, nz)`` complex has."""
    if nx <= 0 or ny <= 0 or nz <= 0:
        return 0
    if dim == 1:
        return (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)
    return nx * (ny - 1) * (nz - 1) + (nx - 1) * ny * (nz - 1) + (nx - 1) * (ny - 1) * nz


def _sorted_cells_binary(r, nx, ny, nz, dim):
    """:func:`sorted_cells` of ranks 0 and 1 in one pass over the volume (the output made by
    NumPy, :func:`_nodes32`'s reason)."""
    out = np.empty(_n_cells(int(nx), int(ny), int(nz), int(dim)), np.int32)
    _sorted_cells_binary_into(r, nx, ny, nz, dim, out)
    return out


@jit
def _sorted_cells_counting(r, nx, ny, nz, dim, nvals):
    """:func:`sorted_cells` of more than two levels: the counting sort."""
    vals = np.empty(nz * 3, np.int64)
    count = np.zeros(nvals + 1, np.int64)
    for x in range(nx):
        for y in range(ny):
            _cell_values_into(r, nx, ny, nz, dim, x, y, vals)
            for o in range(vals.shape[0]):
                if vals[o] >= 0:
                    count[vals[o] + 1] += 1
    for i in range(nvals):
        count[i + 1] += count[i]
    out = np.empty(count[nvals], np.int32)
    for x in range(nx):
        for y in range(ny):
            _cell_values_into(r, nx, ny, nz, dim, x, y, vals)
            base = (x * ny + y) * nz * 3
            for o in range(vals.shape[0]):
                w = vals[o]
                if w >= 0:
                    out[count[w]] = base + o
                    count[w] += 1
    return out


@jit
def _sorted_cells_binary_into(r, nx, ny, nz, dim, out):
    """:func:`_sorted_cells_binary` into ``out`` (as long as the complex has cells of ``dim``)."""
    vals = np.empty(nz * 3, np.int64)
    lo = 0
    hi = out.shape[0]
    for x in range(nx):
        for y in range(ny):
            _cell_values_into(r, nx, ny, nz, dim, x, y, vals)
            base = (x * ny + y) * nz * 3
            for o in range(vals.shape[0]):
                w = vals[o]
                if w == 0:
                    out[lo] = base + o
                    lo += 1
                elif w > 0:
                    hi -= 1
                    out[hi] = base + o
    i = lo
    j = out.shape[0] - 1
    while i < j:
        out[i], out[j] = out[j], out[i]
        i += 1
        j -= 1


# ---- dimension 2: union-find on the dual


#: edges or squares taken per block by the union-find kernels: the pair arrays are made room for
#: before a block, so the hot loop never reallocates (it ran 1.8x slower when it could)
_BLOCK = 4096


@jit
def _reserve(a, n, extra):
    """``a`` itself when it has room for ``n + extra`` entries, else a copy (its first ``n``
    entries) at least twice as long."""
    if n + extra <= a.shape[0]:
        return a
    b = np.empty(max(2 * a.shape[0], n + extra), a.dtype)
    for i in range(n):  # a loop, not b[:n] = a[:n]: a slice assignment compiles numba's
        b[i] = a[i]  # shape-mismatch message (str, repr, concat: about 2 s of a first run)
    return b


def _cube_values(r, nx, ny, nz):
    """Cube values indexed by each cube's lowest voxel (entries of voxels on the far faces,
    which start no cube, are unused), then the outside: ``nx * ny * nz + 1`` int32 (made by
    NumPy, :func:`_nodes32`'s reason)."""
    out = np.full(int(nx) * int(ny) * int(nz) + 1, _OUT, np.int32)
    _cube_values_into(r, nx, ny, nz, out)
    return out


@jit
def _cube_values_into(r, nx, ny, nz, out):
    """:func:`_cube_values` into ``out`` (``_OUT`` everywhere)."""
    nyz = ny * nz
    for x in range(nx - 1):
        for y in range(ny - 1):
            v0 = x * nyz + y * nz
            for z in range(nz - 1):
                v = v0 + z
                m = max(max(max(r[v], r[v + 1]), max(r[v + nz], r[v + nz + 1])),
                        max(max(r[v + nyz], r[v + nyz + 1]), max(r[v + nyz + nz], r[v + nyz + nz + 1])))
                out[v] = m


@jit
def _edge_ends(e, ny, nz):
    """The two voxels of edge ``e`` (``voxel * 3 + axis``), lower index first."""
    v = np.int64(e) // 3
    t = np.int64(e) % 3
    return v, v + (ny * nz if t == 0 else (nz if t == 1 else 1))


@jit
def _face_steps(f, ny, nz):
    """Square ``f`` (``voxel * 3 + normal axis``) as its lowest voxel and the index steps
    ``da``, ``db`` of its two in-plane axes: its voxels are v, v+da, v+db, v+da+db."""
    v = np.int64(f) // 3
    t = np.int64(f) % 3
    if t == 0:
        return v, np.int64(nz), np.int64(1)
    if t == 1:
        return v, np.int64(ny * nz), np.int64(1)
    return v, np.int64(ny * nz), np.int64(nz)


@jit
def _value_in(r, ny, nz, c, edge):
    """Value of cell ``c``, an edge when ``edge`` else a square, known to be in the complex (no
    border check). One kernel for both kinds (each would be a compile of its own)."""
    if edge:
        v, w = _edge_ends(c, ny, nz)
        return max(r[v], r[w])
    v, da, db = _face_steps(c, ny, nz)
    return max(max(r[v], r[v + da]), max(r[v + db], r[v + da + db]))


# The tie rules (whether root ``a`` dies before root ``b``), written into :func:`_link` and
# :func:`_follow` (a kernel of their own would compile on a first run): in the dual (``dual``),
# of two top cells (or the outside) the one with the lower (value, index) dies; in dimension 0
# (the elder rule), of two components' eldest voxels the one with the higher (value, voxel index).


@jit
def _link(parent, val, a, b, dual):
    """Join roots ``a`` and ``b`` under the tie rule (``dual`` or the elder rule); returns the one
    that dies."""
    if dual:
        first = val[a] < val[b] or (val[a] == val[b] and a < b)
    else:
        first = val[a] > val[b] or (val[a] == val[b] and a > b)
    if first:
        parent[a] = b
        return a
    parent[b] = a
    return b


@jit
def _follow(rep, val, ra, rb, root, dual):
    """Another image's side of a join. Every union-find of the matching over one order of cells
    has the same sets, only their roots differ; so instead of a second union-find, ``rep`` maps
    each root (of this one) to the set's root under ``val`` and its tie rule
    (``dual`` or the elder rule, as :func:`_link`). Roots ``ra`` and ``rb`` were joined
    under ``root``: records the survivor and returns the cell that dies under ``val``."""
    x = np.int64(rep[ra])  # int64 like the roots: the tie rules compiled for one signature
    y = np.int64(rep[rb])
    if dual:
        first = val[x] < val[y] or (val[x] == val[y] and x < y)
    else:
        first = val[x] > val[y] or (val[x] == val[y] and x > y)
    if first:
        rep[root] = y
        return x
    rep[root] = x
    return y


# ---- 2D images: dimension 1 (the top one) by union-find on the dual


@jit
def square_values_2d(r, ny, nz):
    """Square values of a 2D image ``(ny, nz)`` (C-order ranks ``r``), indexed by each square's
    lowest pixel (entries of the last row and column, which start no square, are unused), then
    the outside: ``ny * nz + 1`` int32."""
    out = np.full(ny * nz + 1, _OUT, np.int32)
    for y in range(ny - 1):
        v0 = y * nz
        for z in range(nz - 1):
            v = v0 + z
            out[v] = max(max(r[v], r[v + 1]), max(r[v + nz], r[v + nz + 1]))
    return out


@jit
def edge_squares_2d(e, ny, nz):
    """The two squares on either side of edge ``e`` (``pixel * 3 + axis``, axis 1: along y,
    2: along z) of a 2D image, each named by its lowest pixel; the outside is ``ny * nz``."""
    v = np.int64(e) // 3
    out = np.int64(ny) * nz
    if np.int64(e) % 3 == 1:  # joins v and v + nz: the squares left and right of it
        z = v % nz
        a = out if z == 0 else v - 1
        b = out if z == nz - 1 else v
    else:  # joins v and v + 1: the squares above and below it
        a = out if v < nz else v - nz
        b = out if v >= (ny - 1) * nz else v
    return a, b


@jit
def _dual_sides(c, ny, nz, flat, out):
    """The two dual nodes beside cell ``c`` without an integer division by the volume's sizes
    (:func:`face_cubes`, :func:`edge_squares_2d` divide by ``nz`` or ``ny * nz``, a third of
    :func:`dual_pairs`' time): the far side is always the cell's own lowest voxel, the near
    side the voxel one step back along the cell's normal, or the outside when that falls
    before voxel 0. A voxel that starts no top cell (on a far face) stands for the outside:
    :func:`dual_pairs` links each to it before the first cell."""
    v = np.int64(c) // 3
    t = np.int64(c) % 3
    if flat:  # edge axis 1: squares left and right (step 1); axis 2: above and below (nz)
        step = np.int64(1) if t == 1 else np.int64(nz)
    else:  # square normal x, y, z
        step = np.int64(ny) * nz if t == 0 else (np.int64(nz) if t == 1 else np.int64(1))
    return (v - step if v >= step else out), v


@jit
def _dual_block(cells, lo, hi, r, val, val_c, nx, ny, nz, flat, along, keep, parent, rep_c, pc, pd, pk, n):
    """Cells ``cells[lo:hi]``, last first, of :func:`dual_pairs` (room made for the pairs)."""
    out = val.shape[0] - 1
    for i in range(hi - 1, lo - 1, -1):
        c = np.int64(cells[i])
        a, b = _dual_sides(c, ny, nz, flat, out)
        ra = find(parent, a)
        rb = find(parent, b)
        if keep.shape[0] > 0:
            keep[i] = ra == rb
        if ra == rb:
            continue
        dying = _link(parent, val, ra, rb, np.bool_(True))
        dying_c = -1
        if along:
            dying_c = _follow(rep_c, val_c, ra, rb, ra + rb - dying, np.bool_(True))  # a bool, not a literal: one _follow
        cv = _value_in(r, ny, nz, c, flat)
        if cv != val[dying]:
            pc[n] = c
            pd[n] = dying
            pk[n] = dying_c
            n += 1
    return n


def dual_pairs(cells, r, val, val_c, nx, ny, nz, flat, along, keep):
    """Top-dimension pairs of one image by union-find on the dual, the cells taken from last
    to first: in 3D the squares (``cells``, in filtration order) join the cubes on either side
    and the outside (values ``val``: :func:`_cube_values`); in 2D (``flat``, the volume
    ``(1, ny, nz)``) the edges join the squares (values: :func:`square_values_2d`).

    ``r``: the image's ranks (to value the cells); ``val_c``: the comparison image's top-cell
    values, whose elder rule runs along when ``along`` is set (in this image's order, naming each
    death by the comparison cell that dies with it; :func:`_follow`). Where two dual
    components meet, the one holding the lower (value, index) top cell dies; the outside never
    does. Fills ``keep`` unless it is empty (False where a cell joins two dual components: in 3D,
    the squares cleared from the dimension-1 columns). Returns ``(n, cell, dying, key)``: the
    pairs of positive persistence in the order found (birth cell, death top cell by its lowest
    voxel, the comparison's top cell dying with it, -1 without ``along``).

    Notes: in 2D the pairs are the column reduction's (:func:`reduce_dim1` on ``(1, ny, nz)``),
    by duality; nothing checks that ``cells`` are the image's cells of the right dimension.
    """
    nd = val.shape[0]
    parent = _nodes32(nd)
    rep_c = _nodes32(nd if along else 0)  # the comparison's roots (_follow)
    return _dual_pairs(cells, r, val, val_c, nx, ny, nz, flat, along, keep, parent, rep_c)


@jit
def _dual_pairs(cells, r, val, val_c, nx, ny, nz, flat, along, keep, parent, rep_c):
    """:func:`dual_pairs` with its union-find's nodes ``parent`` and the comparison's roots ``rep_c``
    (:func:`_nodes32`)."""
    nd = val.shape[0]
    for q in range(nd - 1):  # voxels that start no top cell are the outside (_dual_sides)
        if val[q] == _OUT:
            parent[q] = nd - 1
    pc = np.empty(16, np.int64)
    pd = np.empty(16, np.int64)
    pk = np.empty(16, np.int64)
    n = np.int64(0)  # not Literal[int](0): _reserve compiled once
    hi = cells.shape[0]
    while hi > 0:
        lo = max(hi - _BLOCK, 0)
        pc = _reserve(pc, n, hi - lo)
        pd = _reserve(pd, n, hi - lo)
        pk = _reserve(pk, n, hi - lo)
        n = _dual_block(cells, lo, hi, r, val, val_c, nx, ny, nz, flat, along, keep, parent, rep_c, pc, pd, pk, n)
        hi = lo
    return n, pc[:n], pd[:n], pk[:n]


# ---- dimension 1: the column reduction


@jit
def _heap_push(heap, size, key):
    if size >= heap.shape[0]:
        bigger = np.empty(heap.shape[0] * 2, np.int64)
        for i in range(size):  # not a slice assignment (see _reserve)
            bigger[i] = heap[i]
        heap = bigger
    i = size
    heap[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] >= heap[i]:
            break
        heap[p], heap[i] = heap[i], heap[p]
        i = p
    return heap, size + 1


@jit
def _heap_pop(heap, size):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        c = left
        if left + 1 < size and heap[left + 1] > heap[left]:
            c = left + 1
        if heap[i] >= heap[c]:
            break
        heap[i], heap[c] = heap[c], heap[i]
        i = c
    return top, size


@jit
def _heap_pivot(heap, size):
    """Pop the largest key present an odd number of times (mod-2 sum); -1 when none."""
    while size > 0:
        top, size = _heap_pop(heap, size)
        k = 1
        while size > 0 and heap[0] == top:
            _, size = _heap_pop(heap, size)
            k += 1
        if k % 2 == 1:
            return top, size
    return -1, size


def reduce_dim1(cols, keep, r, ny, nz, record, want, want_pivot):
    """Reduce the squares ``cols[keep]`` (in filtration order) against the edges valued by ``r``.

    The pivot of a column is its latest edge in the (value of ``r``, index) order; a column
    whose pivot is already taken gets the reduced column that holds it added (mod 2). Reduced
    columns that needed an addition are kept for reuse; the others are their square's boundary.

    With ``record`` set, pairs of positive persistence (edge value < square value under ``r``)
    are returned as ``(n, edge, square, position of the column in cols)``. ``want`` (sorted
    column positions, maybe empty) asks for the pivots of those columns (-1 where the column reduces to zero) in ``want_pivot``: the image
    pairs, when ``cols`` are the comparison's squares and ``r`` an input's ranks; without
    ``record`` the reduction stops after the last wanted column.

    Notes: ``cols`` must hold squares of the complex (no check); ``r`` is C-order ranks of an
    ``(nx, ny, nz)`` volume.
    """
    pivot_col = np.full(int(r.shape[0]) * 3, -1, np.int32)  # made by NumPy: _nodes32's reason
    return _reduce_dim1(cols, keep, r, ny, nz, record, want, want_pivot, pivot_col)


@jit
def _reduce_dim1(cols, keep, r, ny, nz, record, want, want_pivot, pivot_col):
    """:func:`reduce_dim1` with what owns each pivot edge (all -1: none): ``i >= 0``, the column at
    position ``i`` of ``cols``, its square's boundary as it stands (an emergent pair); ``-2 - s``,
    the reduced column kept in slot ``s`` (4 bytes per edge in all: no table per column)."""
    ncol = cols.shape[0]
    slot_start = np.empty(1024, np.int64)
    slot_len = np.empty(1024, np.int32)
    nslot = 0
    pool = np.empty(4096, np.int64)
    pool_n = 0
    heap = np.empty(64, np.int64)
    keys = np.empty(4, np.int64)
    pair_edge = np.empty(16, np.int64)
    pair_face = np.empty(16, np.int64)
    pair_pos = np.empty(16, np.int64)
    n = np.int64(0)
    one = np.int64(1)  # not Literal[int](1): _reserve compiled once
    w = 0
    nwant = want.shape[0]
    for i in range(ncol):
        while w < nwant and want[w] < i:
            w += 1
        if not record and w >= nwant:
            break  # every wanted pivot is known: the later columns cannot change them
        if not keep[i]:
            continue
        f = np.int64(cols[i])
        fv = face_keys(f, r, ny, nz, keys)
        kmax = max(max(keys[0], keys[1]), max(keys[2], keys[3]))
        emax = kmax & _LOW
        if pivot_col[emax] == -1:  # emergent pair: the column is reduced as it stands
            pivot_col[emax] = i
            if w < nwant and want[w] == i:
                want_pivot[w] = emax
            continue  # its value is the square's: no pair of positive persistence
        size = np.int64(0)  # not Literal[int](0): _heap_push compiled once
        for q in range(4):  # the square's four edges (a loop here, not a kernel of its own)
            heap, size = _heap_push(heap, size, keys[q])
        j = pivot_col[emax]
        while True:
            if j <= -2:  # a kept reduced column
                s = -2 - j
                for q in range(slot_start[s], slot_start[s] + slot_len[s]):
                    heap, size = _heap_push(heap, size, pool[q])
            else:
                face_keys(np.int64(cols[j]), r, ny, nz, keys)
                for q in range(4):
                    heap, size = _heap_push(heap, size, keys[q])
            piv, size = _heap_pivot(heap, size)
            if piv < 0:
                break
            e = piv & _LOW
            if pivot_col[e] != -1:
                j = pivot_col[e]
                heap, size = _heap_push(heap, size, piv)
                continue
            pivot_col[e] = -2 - nslot  # the column is kept below, in slot nslot
            if w < nwant and want[w] == i:
                want_pivot[w] = e
            if record and (piv >> 32) != fv:
                pair_edge = _reserve(pair_edge, n, one)
                pair_face = _reserve(pair_face, n, one)
                pair_pos = _reserve(pair_pos, n, one)
                pair_edge[n] = e
                pair_face[n] = f
                pair_pos[n] = i
                n += 1
            # keep the reduced column (pivot first, then the rest, each once)
            need = pool_n + size + 1
            if need > pool.shape[0]:
                cap = pool.shape[0] * 2
                while cap < need:
                    cap *= 2
                bigger = np.empty(cap, np.int64)
                for q in range(pool_n):  # not slice assignments (see _reserve)
                    bigger[q] = pool[q]
                pool = bigger
            if nslot >= slot_start.shape[0]:
                bs = np.empty(slot_start.shape[0] * 2, np.int64)
                for q in range(nslot):
                    bs[q] = slot_start[q]
                slot_start = bs
                bl = np.empty(slot_len.shape[0] * 2, np.int32)
                for q in range(nslot):
                    bl[q] = slot_len[q]
                slot_len = bl
            slot_start[nslot] = pool_n
            pool[pool_n] = piv
            pool_n += 1
            while size > 0:
                k, size = _heap_pivot(heap, size)
                if k < 0:
                    break
                pool[pool_n] = k
                pool_n += 1
            slot_len[nslot] = pool_n - slot_start[nslot]
            nslot += 1
            break
    return n, pair_edge[:n], pair_face[:n], pair_pos[:n]


# ---- dimension 0: union-find on edges


@jit
def _uf_block(edges, lo, hi, r, ny, nz, parent, pv, pe, n):
    """Edges ``edges[lo:hi]`` of :func:`uf_pairs` (room made for the pairs)."""
    for i in range(lo, hi):
        e = np.int64(edges[i])  # int64 cells everywhere: the edge helpers compiled once
        v, w = _edge_ends(e, ny, nz)
        a = find(parent, v)
        b = find(parent, w)
        if a == b:
            continue
        d = _link(parent, r, a, b, np.bool_(False))
        if r[d] != _value_in(r, ny, nz, e, np.bool_(True)):
            pv[n] = d
            pe[n] = e
            n += 1
    return n


def uf_pairs(edges, r, nx, ny, nz):
    """Dimension-0 pairs of positive persistence, ``edges`` in filtration order: returns
    ``(n, dying voxel, edge)``."""
    return _uf_pairs(edges, r, nx, ny, nz, _nodes32(r.shape[0]))


@jit
def _uf_pairs(edges, r, nx, ny, nz, parent):
    """:func:`uf_pairs` with its union-find's nodes (:func:`_nodes32`)."""
    pv = np.empty(16, np.int64)
    pe = np.empty(16, np.int64)
    n = np.int64(0)
    for lo in range(0, edges.shape[0], _BLOCK):
        hi = min(lo + _BLOCK, edges.shape[0])
        pv = _reserve(pv, n, hi - lo)
        pe = _reserve(pe, n, hi - lo)
        n = _uf_block(edges, lo, hi, r, ny, nz, parent, pv, pe, n)
    return n, pv[:n], pe[:n]


@jit
def _match_block(edges, lo, hi, rc, r0, r1, ny, nz, vox_pair0, vox_pair1, pc, rep0, rep1, m0, m1, n):
    """Edges ``edges[lo:hi]`` of :func:`uf_image_match` (room made for the matches)."""
    for i in range(lo, hi):
        e = np.int64(edges[i])  # int64 cells everywhere: the edge helpers compiled once
        v, w = _edge_ends(e, ny, nz)
        a = find(pc, v)
        b = find(pc, w)
        if a == b:
            continue
        dc = _link(pc, rc, a, b, np.bool_(False))
        d0 = _follow(rep0, r0, a, b, a + b - dc, np.bool_(False))
        d1 = _follow(rep1, r1, a, b, a + b - dc, np.bool_(False))
        if rc[dc] != _value_in(rc, ny, nz, e, np.bool_(True)):
            if vox_pair0[d0] >= 0 and vox_pair1[d1] >= 0:
                m0[n] = vox_pair0[d0]
                m1[n] = vox_pair1[d1]
                n += 1
    return n


def uf_image_match(edges, rc, r0, r1, nx, ny, nz, vox_pair0, vox_pair1):
    """Dimension-0 matching: the comparison's ``edges`` in its filtration order, its
    union-find and the two inputs' elder rules run along (each valued by its own ranks; one
    union-find serves all three, :func:`_follow`).
    ``vox_pair0/1`` map a voxel to the index of the input pair it dies in (-1: none).
    Returns ``(n, m0, m1)``: the indices of the matched pairs of each input."""
    nv = rc.shape[0]
    # the union-find and each input's elder voxel of each set (_follow), made by NumPy (_nodes32)
    return _uf_image_match(edges, rc, r0, r1, nx, ny, nz, vox_pair0, vox_pair1, _nodes32(nv), _nodes32(nv),
                           _nodes32(nv))


@jit
def _uf_image_match(edges, rc, r0, r1, nx, ny, nz, vox_pair0, vox_pair1, pc, rep0, rep1):
    """:func:`uf_image_match` with its three node arrays (:func:`_nodes32`)."""
    m0 = np.empty(16, np.int64)
    m1 = np.empty(16, np.int64)
    n = np.int64(0)
    for lo in range(0, edges.shape[0], _BLOCK):
        hi = min(lo + _BLOCK, edges.shape[0])
        m0 = _reserve(m0, n, hi - lo)
        m1 = _reserve(m1, n, hi - lo)
        n = _match_block(edges, lo, hi, rc, r0, r1, ny, nz, vox_pair0, vox_pair1, pc, rep0, rep1, m0, m1, n)
    return n, m0[:n], m1[:n]


# ---- voxels of cells (where a pair is born and dies)


@jit
def cell_voxels(r, nx, ny, nz, dim, cells, out):
    """The voxel that gives each cell its value, C-order index into ``out``: an edge's or a
    square's highest-index voxel of maximal value, a cube's lowest-index one (the convention
    of Betti-Matching-3D's coordinates)."""
    nyz = ny * nz
    for i in range(cells.shape[0]):
        c = cells[i]
        if dim == 0:
            out[i] = c
        elif dim == 1:
            v, w = _edge_ends(c, ny, nz)
            out[i] = w if r[w] >= r[v] else v
        elif dim == 2:
            v, da, db = _face_steps(c, ny, nz)
            m = max(max(r[v], r[v + da]), max(r[v + db], r[v + da + db]))
            if r[v + da + db] == m:
                out[i] = v + da + db
            elif r[v + da] == m:
                out[i] = v + da
            elif r[v + db] == m:
                out[i] = v + db
            else:
                out[i] = v
        else:  # a cube, named by its lowest voxel
            v = c
            m = r[v]
            best = v
            for d in (1, nz, nz + 1, nyz, nyz + 1, nyz + nz, nyz + nz + 1):
                if r[v + d] > m:
                    m = r[v + d]
                    best = v + d
            out[i] = best
