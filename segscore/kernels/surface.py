"""Surface voxels of label images and exact nearest surface-to-surface distances.

Surface
    A surface voxel of object ``l`` is a voxel labelled ``l`` with a face neighbour (4 in 2D,
    6 in 3D) that is not ``l`` or lies outside the image: the image border counts as
    background, as in ``mask & ~scipy.ndimage.binary_erosion(mask)`` with the cross-shaped
    structure and scipy's default ``border_value=0`` (curvicost's ``hd95``, MONAI's
    ``get_mask_edges``, panoptica). It is also a *foreground* surface voxel when one of those
    neighbours is background (0) or outside the image: the surface of the binary mask
    ``labels != 0``. A non-empty mask always has a surface voxel.

Distances
    Nearest distances from query voxels to a set of surface voxels are exact Euclidean
    distances in physical units, ``sqrt((dz*sz)**2 + (dy*sy)**2 + (dx*sx)**2)`` with integer
    voxel differences ``d*`` and the spacing ``s*`` (summed in that order). Most queries lie
    within a few voxels of the other surface: they probe a bit map of the set's bounding box at
    the offsets of a ball of :data:`REACH` voxel sizes, nearest first. The others ask a k-d tree
    over the cells (:data:`CELL` voxels a side) the set's voxels fall in (median splits on the
    physically widest axis, leaves of at most :data:`LEAF` cells, pruned by each node's and
    cell's bounding box): about ``log(n)`` per query whatever the distance, so a far outlier
    costs little more than a near voxel. Memory is a few arrays per surface voxel and one bit
    per voxel of the bounding box: no distance map is ever made.

Inputs are 3D arrays; a 2D image is passed as ``image[None]`` with ``planar=True`` (the
first axis is then no spatial axis and has no neighbours).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

#: voxels a side of the grid cells a k-d tree is built over (the fastest of those tried; a power of two)
CELL = 8
#: most cells in one k-d tree leaf
LEAF = 8
#: radius of the bit-map search, in units of the smallest voxel size (beyond it: the k-d tree)
REACH = 4.5


# ---------------------------------------------------------------- surface voxels

@jit
def _code(v, w, code):
    """Fold neighbour value ``w`` of a voxel of label ``v`` into its code (see :func:`_scan`)."""
    if w == 0:
        return 2
    if w != v and code == 0:
        return 1
    return code


@jit
def _scan(labels, planar, axis, lo, hi, start, coords, ids, foreground):
    """Store the surface voxels of the owned range from row ``start`` on (rows: the fixed first
    two indices, numbered in C order over the range), each row's four neighbour rows read once;
    stops before a row that might not fit in the outputs. Returns ``(n stored, next row)``."""
    A, B, C = labels.shape
    a0, a1 = (lo, hi) if axis == 0 else (0, A)
    b0, b1 = (lo, hi) if axis == 1 else (0, B)
    nb = b1 - b0
    cap = coords.shape[0]
    n = 0
    r = start
    while r < (a1 - a0) * nb:
        if cap - n < C:
            break
        a = a0 + r // nb
        b = b0 + r % nb
        r += 1
        row = labels[a, b]
        z_in = planar or (a > 0 and a < A - 1)  # all axis-0 neighbours inside the block
        y_in = b > 0 and b < B - 1
        r0 = labels[a - 1, b] if (not planar and a > 0) else row
        r1 = labels[a + 1, b] if (not planar and a < A - 1) else row
        r2 = labels[a, b - 1] if b > 0 else row
        r3 = labels[a, b + 1] if b < B - 1 else row
        for c in range(C):
            v = row[c]
            if v == 0:
                continue
            if (z_in and y_in and c > 0 and c < C - 1 and row[c - 1] == v and row[c + 1] == v
                    and r2[c] == v and r3[c] == v and (planar or (r0[c] == v and r1[c] == v))):
                continue  # interior: every face neighbour is the same object
            if not (z_in and y_in and c > 0 and c < C - 1):
                code = 2  # on the border
            else:
                code = _code(v, row[c - 1], np.int64(0))  # int64, not Literal[int](0): one compiled _code
                code = _code(v, row[c + 1], code)
                code = _code(v, r2[c], code)
                code = _code(v, r3[c], code)
                if not planar:
                    code = _code(v, r0[c], code)
                    code = _code(v, r1[c], code)
            coords[n, 0] = a
            coords[n, 1] = b
            coords[n, 2] = c
            ids[n] = np.uint64(v)
            foreground[n] = 1 if code == 2 else 0
            n += 1
    return n, r


@jit
def surface_scan(labels, planar, axis, lo, hi, start, coords, ids, foreground):
    """The surface voxels (of their objects) of ``labels`` whose index along ``axis`` (0 or 1)
    lies in ``lo:hi``, in C order, in one pass: a scan resumed from row ``start`` until done or
    until the outputs may be full (the caller then grows them and resumes).

    Parameters
    ----------
    labels : (A, B, C) array of a non-negative integer dtype (0 is background).
    planar : bool, True for a 2D image passed as (1, Y, X).
    axis, lo, hi : the owned range of a tile (``0, 0, A`` for the whole block).
    start : int, the row (index ``(a, b)`` of the range's rows in C order) to resume from; 0 at first.
    coords : (cap, 3) int32 output, block coordinates of each surface voxel.
    ids : (cap,) uint64 output, its label.
    foreground : (cap,) uint8 output, 1 where it is also a surface voxel of ``labels != 0``
        (a face neighbour is background or outside the block).

    Returns ``(n, next)``: ``n`` voxels stored from index 0, and the row to resume from (the
    number of rows of the range when done).

    Notes
    -----
    The block's edges are taken as the image border: a tiled caller reads a halo of at least
    one row beyond its owned range. A capacity below ``C`` stores nothing. Shapes and ranges
    are not checked. (One pass, where a count and a fill took two.)
    """
    return _scan(labels, planar, axis, lo, hi, start, coords, ids, foreground)


@jit
def _index_of(sorted_ids, key):
    """Position of ``key`` in the ascending ``sorted_ids`` (binary search; ``key`` present)."""
    lo, hi = 0, sorted_ids.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_ids[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def group_by_id(coords, ids, object_ids, start, out):
    """Copy the rows of ``coords`` (n, 3) into ``out`` (n, 3) grouped by object, keeping their
    order within an object (a counting sort): the rows whose ``ids`` (n,) equal
    ``object_ids[g]`` (ascending, every id of ``ids`` among them) fill
    ``out[start[g]:start[g + 1]]``, ``start`` (G + 1,) int64 filled here.

    Each id's index is read from a table indexed by id (int32, one entry per id up to the
    largest) when the largest id is below ``4 n + 1024`` (at most 16 bytes per row), else found
    by binary search, skipped when a row repeats the previous row's id (a surface is walked in
    C order). The table is 2.5 times faster where objects alternate along a row (1.2M rows of
    3,000 objects: 9 vs 22 ms). Notes: ids absent from ``object_ids`` are not checked for.
    """
    n = ids.shape[0]
    G = object_ids.shape[0]
    idx = np.empty(n, np.int64)
    start[:] = 0
    if G and object_ids[G - 1] < np.uint64(4 * n + 1024):
        table = np.zeros(np.int64(object_ids[G - 1]) + 1, np.int32)  # zeros: an absent id stays in bounds
        for g in range(G):
            table[np.int64(object_ids[g])] = g
        for i in range(n):
            g = np.int64(table[np.int64(ids[i])])
            idx[i] = g
            start[g + 1] += 1
    else:
        last = -1
        for i in range(n):
            if last < 0 or ids[i] != object_ids[last]:
                last = _index_of(object_ids, ids[i])
            idx[i] = last
            start[last + 1] += 1
    for g in range(G):
        start[g + 1] += start[g]
    pos = start[:-1].copy()
    for i in range(n):
        g = idx[i]
        k = pos[g]
        out[k, 0] = coords[i, 0]
        out[k, 1] = coords[i, 1]
        out[k, 2] = coords[i, 2]
        pos[g] = k + 1


# ---------------------------------------------------------------- k-d tree over cells of points

@jit
def _cell_grid(dims, n):
    """``(shift, g)``, both (3,) int64: the cells of :func:`cell_items` over a box of extent
    ``dims`` holding ``n`` items: :data:`CELL` voxels a side (one along an axis of extent 1),
    doubled until the grid has at most ``4 n + 64`` cells; a cell is ``1 << shift`` voxels a side
    (powers of two: shifts, where divisions took a third of :func:`cell_items`), ``g`` cells
    along each axis."""
    sh = np.zeros(3, np.int64)
    for d in range(3):
        if dims[d] > 1:
            while (np.int64(1) << sh[d]) < CELL:
                sh[d] += 1
    g = np.empty(3, np.int64)
    while True:
        for d in range(3):
            g[d] = ((dims[d] - 1) >> sh[d]) + 1
        if g[0] * g[1] * g[2] <= 4 * n + 64:
            break
        for d in range(3):
            if dims[d] > 1:
                sh[d] += 1
    return sh, g


@jit
def cell_items(pts, lo, dims, sorted_pts):
    """Sort ``pts`` (n >= 1, 3) int32 into the cells of a grid over their bounding box (origin
    ``lo``, extent ``dims``, both (3,) int64) and describe the non-empty cells.

    Cells are :data:`CELL` voxels a side (one along an axis of extent 1), doubled until the grid
    has at most ``4 n + 64`` cells, so a sparse set in a large box needs no large grid.
    ``sorted_pts`` (n, 3) int32 receives the points grouped by cell (C order of cells, the
    points' order kept within one). Returns ``items`` (m, 8) int64, one row per non-empty cell:
    its points' bounding box (``lo`` 3, ``hi`` 3, inclusive) and their range in ``sorted_pts``.

    Notes
    -----
    ``lo`` and ``dims`` must bound the points; not checked.
    """
    n = pts.shape[0]
    sh, g = _cell_grid(dims, n)
    total = g[0] * g[1] * g[2]
    s0, s1, s2 = sh[0], sh[1], sh[2]
    lo0, lo1, lo2 = lo[0], lo[1], lo[2]
    g1, g2 = g[1], g[2]
    start = np.zeros(total + 1, np.int64)
    cid = np.empty(n, np.int64)
    for i in range(n):
        k = (((np.int64(pts[i, 0]) - lo0) >> s0) * g1 + ((np.int64(pts[i, 1]) - lo1) >> s1)) * g2 \
            + ((np.int64(pts[i, 2]) - lo2) >> s2)
        cid[i] = k
        start[k + 1] += 1
    m = 0
    for k in range(total):
        if start[k + 1] > 0:
            m += 1
        start[k + 1] += start[k]
    pos = start[:-1].copy()
    for i in range(n):
        k = cid[i]
        j = pos[k]
        sorted_pts[j, 0] = pts[i, 0]
        sorted_pts[j, 1] = pts[i, 1]
        sorted_pts[j, 2] = pts[i, 2]
        pos[k] = j + 1
    items = np.empty((m, 8), np.int64)
    r = 0
    for k in range(total):
        a, b = start[k], start[k + 1]
        if b == a:
            continue
        for d in range(3):
            items[r, d] = sorted_pts[a, d]
            items[r, 3 + d] = sorted_pts[a, d]
        for i in range(a + 1, b):
            for d in range(3):
                v = np.int64(sorted_pts[i, d])
                if v < items[r, d]:
                    items[r, d] = v
                if v > items[r, 3 + d]:
                    items[r, 3 + d] = v
        items[r, 6] = a
        items[r, 7] = b
        r += 1
    return items


@jit
def _select(items, lo, hi, k, c0, c1):
    """Reorder the rows ``items[lo:hi]`` so that row ``k`` holds the k-th smallest key
    ``items[r, c0] + items[r, c1]``, rows with smaller or equal keys before it and larger or equal
    ones after (quickselect, median-of-three pivots; whole rows swapped in place)."""
    hi = hi - 1
    ncol = items.shape[1]
    while hi > lo:
        m = (lo + hi) // 2
        x = items[lo, c0] + items[lo, c1]
        y = items[m, c0] + items[m, c1]
        z = items[hi, c0] + items[hi, c1]
        if x > y:
            x, y = y, x
        if y > z:
            y = z
        if x > y:
            y = x
        pivot = y
        i, j = lo, hi
        while i <= j:
            while items[i, c0] + items[i, c1] < pivot:
                i += 1
            while items[j, c0] + items[j, c1] > pivot:
                j -= 1
            if i <= j:
                for d in range(ncol):
                    t = items[i, d]
                    items[i, d] = items[j, d]
                    items[j, d] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@jit
def tree_capacity(m):
    """Node slots a tree of ``m`` items can need (leaves hold more than LEAF // 2 items)."""
    return 2 * (m // ((LEAF + 1) // 2) + 1)


@jit
def build_tree(items, spacing, node_lo, node_hi, node_left, box_lo, box_hi):
    """Build a k-d tree over the rows of ``items`` (:func:`cell_items`), reordering them in place.

    Parameters
    ----------
    items : (m, 8) int64, m >= 1; on return in tree order: node ``k`` holds the rows
        ``node_lo[k]:node_hi[k]``.
    spacing : (3,) float64 voxel size per axis (the split axis is the physically widest).
    node_lo, node_hi, node_left : (cap,) int64 outputs (``cap`` = :func:`tree_capacity`);
        ``node_left[k]`` is the first child (the second is ``node_left[k] + 1``), -1 at a leaf.
    box_lo, box_hi : (cap, 3) int64 outputs, each node's bounding box (inclusive).

    Returns the number of nodes.

    Notes
    -----
    Sizes are not checked. Splits are at the median, so the depth is about log2(m / LEAF).
    """
    m = items.shape[0]
    node_lo[0] = 0
    node_hi[0] = m
    count = 1
    k = 0
    while k < count:
        lo, hi = node_lo[k], node_hi[k]
        for d in range(3):
            box_lo[k, d] = items[lo, d]
            box_hi[k, d] = items[lo, 3 + d]
        for i in range(lo + 1, hi):
            for d in range(3):
                if items[i, d] < box_lo[k, d]:
                    box_lo[k, d] = items[i, d]
                if items[i, 3 + d] > box_hi[k, d]:
                    box_hi[k, d] = items[i, 3 + d]
        if hi - lo <= LEAF:
            node_left[k] = -1
        else:
            axis = np.int64(0)  # not Literal[int](0): _select compiled once
            widest = -1.0
            for d in range(3):
                w = (box_hi[k, d] - box_lo[k, d]) * spacing[d]
                if w > widest:
                    widest = w
                    axis = d
            mid = (lo + hi) // 2
            _select(items, lo, hi, mid, axis, axis + 3)  # box centres (lo + hi) along axis
            node_left[k] = count
            node_lo[count] = lo
            node_hi[count] = mid
            node_lo[count + 1] = mid
            node_hi[count + 1] = hi
            count += 2
        k += 1
    return count


@jit
def _gap_d2(q0, q1, q2, l0, l1, l2, h0, h1, h2, s0, s1, s2):
    """Squared physical distance from a voxel to a box (0 inside): never more than the
    distance to any voxel of the box, as computed by :func:`nearest_d2`."""
    g0 = l0 - q0 if q0 < l0 else (q0 - h0 if q0 > h0 else 0)
    g1 = l1 - q1 if q1 < l1 else (q1 - h1 if q1 > h1 else 0)
    g2 = l2 - q2 if q2 < l2 else (q2 - h2 if q2 > h2 else 0)
    d0 = np.float64(g0) * s0
    d1 = np.float64(g1) * s1
    d2 = np.float64(g2) * s2
    return d0 * d0 + d1 * d1 + d2 * d2


@jit
def nearest_d2(pts, items, node_lo, node_hi, node_left, box_lo, box_hi, spacing, queries, out):
    """Squared physical distance from each query voxel to the nearest point of a tree.

    Parameters
    ----------
    pts : (n, 3) int32 the points grouped by cell (``sorted_pts`` of :func:`cell_items`).
    items, node_lo, node_hi, node_left, box_lo, box_hi : the tree (:func:`build_tree`).
    spacing : (3,) float64.
    queries : (q, 3) int32 voxel coordinates.
    out : (q,) float64 output.

    Notes
    -----
    The tree must hold at least one point; not checked. A node or cell is skipped when its
    box is no nearer than the best point found, so the result is the exact minimum of the
    distances as computed here (the box bound never exceeds a point's own value).
    """
    s0, s1, s2 = spacing[0], spacing[1], spacing[2]
    stack = np.empty(256, np.int64)
    bound = np.empty(256, np.float64)
    found = -1
    for q in range(queries.shape[0]):
        q0, q1, q2 = np.int64(queries[q, 0]), np.int64(queries[q, 1]), np.int64(queries[q, 2])
        best = np.inf
        if found >= 0:
            # the previous query's nearest point: a neighbouring query's nearest lies close to
            # it, so starting from its distance prunes most of the tree
            d0 = np.float64(q0 - pts[found, 0]) * s0
            d1 = np.float64(q1 - pts[found, 1]) * s1
            d2 = np.float64(q2 - pts[found, 2]) * s2
            best = d0 * d0 + d1 * d1 + d2 * d2
        sp = 1
        stack[0] = 0
        bound[0] = 0.0
        while sp > 0:
            sp -= 1
            k = stack[sp]
            if bound[sp] >= best:
                continue
            left = node_left[k]
            if left < 0:
                for it in range(node_lo[k], node_hi[k]):
                    if _gap_d2(q0, q1, q2, items[it, 0], items[it, 1], items[it, 2], items[it, 3], items[it, 4],
                               items[it, 5], s0, s1, s2) >= best:
                        continue
                    for i in range(items[it, 6], items[it, 7]):
                        d0 = np.float64(q0 - pts[i, 0]) * s0
                        d1 = np.float64(q1 - pts[i, 1]) * s1
                        d2 = np.float64(q2 - pts[i, 2]) * s2
                        v = d0 * d0 + d1 * d1 + d2 * d2
                        if v < best:
                            best = v
                            found = i
            else:
                r = left + 1
                bl = _gap_d2(q0, q1, q2, box_lo[left, 0], box_lo[left, 1], box_lo[left, 2], box_hi[left, 0],
                             box_hi[left, 1], box_hi[left, 2], s0, s1, s2)
                br = _gap_d2(q0, q1, q2, box_lo[r, 0], box_lo[r, 1], box_lo[r, 2], box_hi[r, 0], box_hi[r, 1],
                             box_hi[r, 2], s0, s1, s2)
                # the nearer child is popped first
                near, far = (left, r) if bl <= br else (r, left)
                bn, bf = (bl, br) if bl <= br else (br, bl)
                if bf < best:
                    stack[sp] = far
                    bound[sp] = bf
                    sp += 1
                if bn < best:
                    stack[sp] = near
                    bound[sp] = bn
                    sp += 1
        out[q] = best


@jit
def ball(spacing, planar):
    """``(offsets, d2, pad)``: the probe offsets of a ball of :data:`REACH` smallest voxel sizes
    (physical radius ``reach``): every integer offset whose physical length is at most ``reach``,
    sorted by squared length ``d2`` (computed as the distances are), in-plane only when
    ``planar``; and how far (voxels per axis) it reaches, ``pad`` (3,) int64: how many voxels along
    each axis the ball can span, plus one (no offset near the radius is left out), 0 along the
    first axis when ``planar``. One kernel (three before: each compiled on a first run)."""
    reach = REACH * min(spacing[0], min(spacing[1], spacing[2]))
    r = np.empty(3, np.int64)
    for d in range(3):
        r[d] = int(np.floor(reach / spacing[d])) + 1
    if planar:
        r[0] = 0
    n = (2 * r[0] + 1) * (2 * r[1] + 1) * (2 * r[2] + 1)
    offs = np.empty((n, 3), np.int64)
    d2 = np.empty(n, np.float64)
    k = 0
    lim = reach * reach
    for a in range(-r[0], r[0] + 1):
        for b in range(-r[1], r[1] + 1):
            for c in range(-r[2], r[2] + 1):
                d0 = np.float64(-a) * spacing[0]
                d1 = np.float64(-b) * spacing[1]
                d2_ = np.float64(-c) * spacing[2]
                v = d0 * d0 + d1 * d1 + d2_ * d2_
                if v <= lim:
                    offs[k, 0] = a
                    offs[k, 1] = b
                    offs[k, 2] = c
                    d2[k] = v
                    k += 1
    # insertion sort by length (a few hundred offsets; numba's argsort costs seconds to compile)
    for i in range(1, k):
        v = d2[i]
        o0, o1, o2 = offs[i, 0], offs[i, 1], offs[i, 2]
        j = i - 1
        while j >= 0 and d2[j] > v:
            d2[j + 1] = d2[j]
            offs[j + 1, 0] = offs[j, 0]
            offs[j + 1, 1] = offs[j, 1]
            offs[j + 1, 2] = offs[j, 2]
            j -= 1
        d2[j + 1] = v
        offs[j + 1, 0] = o0
        offs[j + 1, 1] = o1
        offs[j + 1, 2] = o2
    return offs[:k], d2[:k], r


def nearest_distances(pts, spacing, queries, out):
    """Physical distance from each of ``queries`` (m, 3) int32 to the nearest of ``pts``
    (n >= 1, 3) int32, into ``out`` (m,) float64.

    Two steps, both exact. First a bit map of ``pts`` over their bounding box (one bit per voxel
    of the box, padded by the ball's reach so probes from inside it need no bounds checks) is probed at the integer
    offsets of a small ball around each query, nearest first (:func:`ball`, radius
    :data:`REACH` smallest voxel sizes): the first hit is the nearest point whenever it lies
    within that radius, since every point outside the ball is farther (:func:`nearest_probe`).
    The queries left (their nearest point is farther, or outside the box) are answered by a k-d
    tree over the cells the points fall in (:func:`_far_steps`: :func:`cell_items`,
    :func:`build_tree`, :func:`nearest_d2`), built only if any is.

    Plain Python over the kernels, so that the tree's kernels compile only on a first call that
    needs them (a curve's thin masks rarely do: about 4 s of compiling saved on a first run), and
    no kernel compiles that would re-optimise them all.

    Notes
    -----
    ``pts`` must not be empty; not checked.
    """
    missed = nearest_probe(pts, spacing, queries, out)
    if missed.shape[0]:
        _far_steps(pts, spacing, queries, missed, out)


def nearest_probe(pts, spacing, queries, out):
    """The first step of :func:`nearest_distances`: ``out`` filled for every query whose nearest
    point lies within the ball; returns the others' indices (int64, increasing). Plain Python over
    :func:`ball` and :func:`_probe` (as one kernel it re-optimised both: 0.4 s of a first run)."""
    offs, d2, pad = ball(spacing, np.bool_(False))  # bools, not literals: ball compiled once
    offs2, d22, pad2 = ball(spacing, np.bool_(True))
    missed = np.empty(queries.shape[0], np.int64)
    n_missed = _probe(pts, spacing, queries, out, offs, d2, pad, offs2, d22, pad2, missed)
    return missed[:n_missed]


@jit
def nearest_with(pts, spacing, queries, out, offs3, d2_3, pad3, offs2, d2_2, pad2):
    """:func:`nearest_distances` with the balls (:func:`ball`) made once by the caller: the
    volume's (``planar`` False) and the in-plane one (True), used when points and queries all
    lie in one plane. A caller measuring many small sets (one per object pair) saves building
    the balls each time (a few hundred offsets sorted: about 30 us a call)."""
    missed = np.empty(queries.shape[0], np.int64)
    n_missed = _probe(pts, spacing, queries, out, offs3, d2_3, pad3, offs2, d2_2, pad2, missed)
    if n_missed:
        nearest_far(pts, spacing, queries, missed[:n_missed], out)


@jit
def _box(pts):
    """The bounding box of ``pts`` (n >= 1, 3): ``(lo, hi)`` int64, inclusive."""
    lo = np.empty(3, np.int64)
    hi = np.empty(3, np.int64)
    for d in range(3):
        lo[d] = pts[0, d]
        hi[d] = pts[0, d]
    for i in range(pts.shape[0]):
        for d in range(3):
            v = np.int64(pts[i, d])
            if v < lo[d]:
                lo[d] = v
            if v > hi[d]:
                hi[d] = v
    return lo, hi


@jit
def _probe(pts, spacing, queries, out, offs3, d2_3, pad3, offs2, d2_2, pad2, missed):
    """The ball probes of :func:`nearest_with` into ``out``; the queries they leave (nearest
    point beyond the ball) go to ``missed``, their count returned."""
    n = pts.shape[0]
    m = queries.shape[0]
    lo, hi = _box(pts)
    A, B, C = hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1
    planar = A == 1  # points in one plane: so are the queries? (a loop here, not a helper kernel)
    if planar:
        for q in range(m):
            if queries[q, 0] != lo[0]:
                planar = False
                break
    offs, off_d2, pad = (offs2, d2_2, pad2) if planar else (offs3, d2_3, pad3)
    K = offs.shape[0]
    # the bit map is the box padded by the ball's reach, so that the probes of a query inside
    # the box need no bounds checks: one add, one load and one test each
    PA, PB, PC = A + 2 * pad[0], B + 2 * pad[1], C + 2 * pad[2]
    bits = np.zeros((PA * PB * PC + 7) // 8, np.uint8)
    for i in range(n):
        f = (((np.int64(pts[i, 0]) - lo[0] + pad[0]) * PB + (np.int64(pts[i, 1]) - lo[1] + pad[1])) * PC
             + (np.int64(pts[i, 2]) - lo[2] + pad[2]))
        bits[f >> 3] |= np.uint8(1 << (f & 7))
    lin = np.empty(K, np.int64)
    for k in range(K):
        lin[k] = (offs[k, 0] * PB + offs[k, 1]) * PC + offs[k, 2]
    reach2 = off_d2[K - 1] if K else -1.0
    n_missed = 0
    for q in range(m):
        q0 = np.int64(queries[q, 0]) - lo[0]
        q1 = np.int64(queries[q, 1]) - lo[1]
        q2 = np.int64(queries[q, 2]) - lo[2]
        hit = -1
        # the squared distance to the box (:func:`_gap_d2` of the box 0..A-1, 0..B-1, 0..C-1, written
        # out: the helper would compile on a first run for this one call)
        g0 = -q0 if q0 < 0 else (q0 - (A - 1) if q0 > A - 1 else 0)
        g1 = -q1 if q1 < 0 else (q1 - (B - 1) if q1 > B - 1 else 0)
        g2 = -q2 if q2 < 0 else (q2 - (C - 1) if q2 > C - 1 else 0)
        e0 = np.float64(g0) * spacing[0]
        e1 = np.float64(g1) * spacing[1]
        e2 = np.float64(g2) * spacing[2]
        if e0 * e0 + e1 * e1 + e2 * e2 > reach2:
            pass  # the box itself is beyond the ball: no probe can hit
        elif 0 <= q0 < A and 0 <= q1 < B and 0 <= q2 < C:  # every probe falls in the padded map
            f0 = ((q0 + pad[0]) * PB + (q1 + pad[1])) * PC + (q2 + pad[2])
            for k in range(K):
                f = f0 + lin[k]
                if bits[f >> 3] & np.uint8(1 << (f & 7)):
                    hit = k
                    break
        else:  # outside the box, within reach of it: probes checked against the padded map
            for k in range(K):
                a = q0 + pad[0] + offs[k, 0]
                b = q1 + pad[1] + offs[k, 1]
                c = q2 + pad[2] + offs[k, 2]
                if a < 0 or a >= PA or b < 0 or b >= PB or c < 0 or c >= PC:
                    continue
                f = (a * PB + b) * PC + c
                if bits[f >> 3] & np.uint8(1 << (f & 7)):
                    hit = k
                    break
        if hit >= 0:
            out[q] = np.sqrt(off_d2[hit])
        else:
            missed[n_missed] = q
            n_missed += 1
    return n_missed


def _far_steps(pts, spacing, queries, missed, out):
    """The second step of :func:`nearest_distances`: ``out`` at the queries ``missed`` (indices)
    from a k-d tree over the cells of ``pts`` (their bounding box as :func:`_probe` takes it).

    One body, run two ways: as plain Python over its kernels where :func:`nearest_distances`
    (plain Python) calls it, so a first run compiles no kernel that re-optimises them all (about
    a second of compiling), and compiled as :func:`nearest_far` for :func:`nearest_with`."""
    n = pts.shape[0]
    if missed.shape[0] == 0:
        return
    lo, hi = _box(pts)
    dims = np.empty(3, np.int64)  # hi - lo + 1 by a loop: compiled, an array expression is a loop of its own
    for d in range(3):
        dims[d] = hi[d] - lo[d] + 1
    sorted_pts = np.empty((n, 3), pts.dtype)
    items = cell_items(pts, lo, dims, sorted_pts)
    cap = tree_capacity(items.shape[0])
    node_lo = np.empty(cap, np.int64)
    node_hi = np.empty(cap, np.int64)
    node_left = np.empty(cap, np.int64)
    box_lo = np.empty((cap, 3), np.int64)
    box_hi = np.empty((cap, 3), np.int64)
    build_tree(items, spacing, node_lo, node_hi, node_left, box_lo, box_hi)
    order, far = far_order(queries, missed)
    d2 = np.empty(order.shape[0], np.float64)
    nearest_d2(sorted_pts, items, node_lo, node_hi, node_left, box_lo, box_hi, spacing, far, d2)
    _put_sqrt(order, d2, out)


@jit
def far_order(queries, missed):
    """The queries ``missed`` (indices, at least one) in the order of the cells (:func:`_cell_grid`
    over their own box) they fall in: ``(order, far)``, the indices (int64) and the queries'
    coordinates in that order. Each search of :func:`nearest_d2` starts from the previous query's
    nearest point, which a query of the same cell lies close to (the search 15 % faster than in
    C order; the distances do not depend on the order)."""
    n_missed = missed.shape[0]
    qlo = np.empty(3, np.int64)
    ext = np.empty(3, np.int64)  # the extent, qhi - qlo + 1 (a loop: an array expression compiles its own loop)
    for d in range(3):
        qlo[d] = queries[missed[0], d]
        ext[d] = qlo[d]
    for i in range(n_missed):
        for d in range(3):
            v = np.int64(queries[missed[i], d])
            if v < qlo[d]:
                qlo[d] = v
            if v > ext[d]:
                ext[d] = v
    for d in range(3):
        ext[d] = ext[d] - qlo[d] + 1
    sh, g = _cell_grid(ext, n_missed)
    key = np.empty(n_missed, np.int64)
    first = np.zeros(g[0] * g[1] * g[2] + 1, np.int64)
    for i in range(n_missed):
        q = missed[i]
        k = (((np.int64(queries[q, 0]) - qlo[0]) >> sh[0]) * g[1] + ((np.int64(queries[q, 1]) - qlo[1]) >> sh[1])) \
            * g[2] + ((np.int64(queries[q, 2]) - qlo[2]) >> sh[2])
        key[i] = k
        first[k + 1] += 1
    for k in range(g[0] * g[1] * g[2]):
        first[k + 1] += first[k]
    order = np.empty(n_missed, np.int64)  # query indices, grouped by cell
    for i in range(n_missed):
        order[first[key[i]]] = missed[i]
        first[key[i]] += 1
    far = np.empty((n_missed, 3), queries.dtype)
    for i in range(n_missed):
        for d in range(3):
            far[i, d] = queries[order[i], d]
    return order, far


@jit
def _put_sqrt(order, d2, out):
    """``out[order[i]] = sqrt(d2[i])``."""
    for i in range(order.shape[0]):
        out[order[i]] = np.sqrt(d2[i])


#: :func:`_far_steps` compiled (for :func:`nearest_with`)
nearest_far = jit(_far_steps)


# ---------------------------------------------------------------- summaries of distances

@jit
def _lerp(a, b, g):
    """numpy's linear interpolation (``numpy.lib._function_base_impl._lerp``)."""
    diff = b - a
    if g >= 0.5:
        return b - diff * (1.0 - g)
    return a + diff * g


@jit
def _virtual_index(n, q):
    """numpy's "linear" percentile position: ``(i, j, g)`` with the value ``lerp(d[i], d[j], g)``."""
    vi = (n - 1) * (q / 100.0)
    prev = np.floor(vi)
    g = vi - prev
    i = min(max(int(prev), 0), n - 1)
    return i, min(i + 1, n - 1), g


#: arrays at least this long take :func:`_kth_pair_binned` in :func:`percentile`
BINNED_MIN = 1 << 16


@jit
def percentile(d, q):
    """numpy's ``np.percentile(d, q)`` (method "linear") of ``d`` (n >= 1,), by selection
    (``d`` may be reordered in place), with numpy's arithmetic: virtual index ``(n - 1) * (q / 100)``,
    and the interpolation ``b - (b - a) * (1 - g)`` when its weight ``g >= 0.5``, ``a + (b - a) * g``
    otherwise. ``a`` and ``b`` are the i-th and j-th smallest values: from :func:`_kth_pair_binned`
    for a long array of values >= 0, else by quickselect (:func:`_kth`) and a scan."""
    n = d.shape[0]
    i, j, g = _virtual_index(n, q)
    if n >= BINNED_MIN:
        ok, a, b = _kth_pair_binned(d, i)
        if ok:
            return _lerp(a, b if j > i else a, g)
    a = _kth(d, i)
    b = a
    if j > i:
        b = d[j]
        for k in range(j + 1, n):
            if d[k] < b:
                b = d[k]
    return _lerp(a, b, g)


@jit
def _kth_pair_binned(d, k):
    """``(ok, a, b)``: the k-th and (k + 1)-th smallest of ``d`` (k + 1 < n, or b = a), leaving
    ``d`` as it is; ok False (nothing computed) when a value is negative or NaN. Values >= 0
    order as their float64 bit patterns do, so one pass counts them by the top 16 bits of
    theirs, a second gathers the bin holding the k-th (a copy: 8 bytes per value of that bin,
    and 512 kB of counts), and a quickselect (:func:`_kth`) of that bin alone finishes: 1M
    distances 13 -> 4 ms, where a quickselect of the whole array reorders it all."""
    n = d.shape[0]
    u = d.view(np.uint64)
    top = np.uint64(0x7FF0000000000000)  # inf's bits: anything above is NaN, the sign bit above that
    hist = np.zeros(1 << 16, np.int64)
    for t in range(n):
        x = u[t]
        if x > top:
            return False, 0.0, 0.0
        hist[x >> np.uint64(48)] += 1
    bin_k = 0
    before = 0
    while before + hist[bin_k] <= k:
        before += hist[bin_k]
        bin_k += 1
    size = hist[bin_k]
    buf = np.empty(size, np.float64)
    m = 0
    key = np.uint64(bin_k)
    for t in range(n):
        if u[t] >> np.uint64(48) == key:
            buf[m] = d[t]
            m += 1
    r = k - before
    a = _kth(buf, r)
    if k + 1 >= n:
        return True, a, a
    if r + 1 < size:  # the next value is in the same bin, after the k-th in buf's new order
        b = buf[r + 1]
        for t in range(r + 2, size):
            if buf[t] < b:
                b = buf[t]
        return True, a, b
    b = np.inf  # the k-th closes its bin: the next value is the least of the later bins
    for t in range(n):
        if u[t] >> np.uint64(48) > key and d[t] < b:
            b = d[t]
    return True, a, b


@jit
def _kth(d, k):
    """The k-th smallest of ``d`` (reordered in place: smaller or equal before ``k``, larger
    or equal after): :func:`_select` on ``d`` as one column (key ``2 d``, an exact doubling)."""
    zero = np.int64(0)  # not Literal[int](0): _select compiled once
    _select(d.reshape((d.shape[0], 1)), zero, d.shape[0], k, zero, zero)
    return d[k]


@jit
def directed_summary(d, tolerance, out):
    """``out`` (4,) float64 of one directed distance array (non-empty; may be reordered in place): the
    sum (in the array's order, before any reordering), the number within ``tolerance``, the
    max and the 95th percentile (:func:`percentile`). Each direction's part of
    :func:`summarize`, so that two directions can be summarized side by side."""
    n = d.shape[0]
    s = 0.0
    c = 0
    m = d[0]
    for i in range(n):
        s += d[i]
        if d[i] <= tolerance:
            c += 1
        if d[i] > m:
            m = d[i]
    out[0] = s
    out[1] = c
    out[2] = m
    out[3] = percentile(d, 95.0)


@jit
def combine_summaries(a, na, b, nb, out):
    """:func:`summarize`'s ``out`` from the two directions' :func:`directed_summary` ``a`` and
    ``b`` of ``na`` and ``nb`` distances."""
    out[0] = max(a[2], b[2])
    out[1] = max(a[3], b[3])
    out[2] = a[0] + b[0]
    out[3] = na + nb
    out[4] = a[1] + b[1]
    out[5] = a[2]
    out[6] = b[2]
    out[7] = 0.5 * (a[0] / na + b[0] / nb)


@jit
def summarize(da, db, tolerance, out):
    """``out`` (8,) float64 from the two directed distance arrays (both non-empty; may be
    reordered in place): hd, hd95, pooled sum, pooled count, voxels within ``tolerance`` (both
    directions), max(da), max(db), and the mean of the two directed means (panoptica's ASSD).

    hd95 is the larger of the two directed 95th percentiles (:func:`percentile`). Sums run
    in the arrays' order, before any reordering.

    Notes
    -----
    Empty inputs are not checked.
    """
    a = np.empty(4, np.float64)
    b = np.empty(4, np.float64)
    directed_summary(da, tolerance, a)
    directed_summary(db, tolerance, b)
    combine_summaries(a, da.shape[0], b, db.shape[0], out)


@jit
def pair_summaries(t_pts, t_start, p_pts, p_start, pair_t, pair_p, spacing, tolerance, out):
    """:func:`summarize` of each object pair, from grouped surface voxels.

    Parameters
    ----------
    t_pts : (n_t, 3) int32 surface voxels of the truth objects, grouped by object: object
        ``i`` holds ``t_pts[t_start[i]:t_start[i + 1]]``.
    t_start : (n_objects + 1,) int64.
    p_pts, p_start : the same for the predicted objects.
    pair_t, pair_p : (k,) int64 the pairs' object indices (each object with a surface).
    spacing : (3,) float64;  tolerance : float64.
    out : (k, 8) or (k, 9) float64 output, one :func:`summarize` row per pair; a ninth column
        receives the 95th percentile of both directions' distances pooled (:func:`percentile`).

    Notes
    -----
    Objects without surface voxels are not checked for.
    """
    offs, d2, pad = ball(spacing, np.bool_(False))  # bools, not literals: ball compiled once
    offs2, d22, pad2 = ball(spacing, np.bool_(True))
    for k in range(pair_t.shape[0]):
        a = t_pts[t_start[pair_t[k]]:t_start[pair_t[k] + 1]]
        b = p_pts[p_start[pair_p[k]]:p_start[pair_p[k] + 1]]
        da = np.empty(a.shape[0], np.float64)
        db = np.empty(b.shape[0], np.float64)
        nearest_with(b, spacing, a, da, offs, d2, pad, offs2, d22, pad2)
        nearest_with(a, spacing, b, db, offs, d2, pad, offs2, d22, pad2)
        if out.shape[1] > 8:  # panoptica's HD95: one percentile of both directions pooled
            both = np.empty(da.shape[0] + db.shape[0], np.float64)
            both[:da.shape[0]] = da
            both[da.shape[0]:] = db
            out[k, 8] = percentile(both, 95.0)
        summarize(da, db, tolerance, out[k])


# ---------------------------------------------------------------- surface elements on the corner grid

@jit
def corner_scan(labels, planar, start, coords, ids, codes, fg_coords, fg_codes):
    """The border corners of every object of ``labels`` and of its foreground ``labels != 0``:
    DeepMind surface-distance's surface elements (``compute_surface_distances``), for all
    objects in one pass, resumable plane by plane.

    Corners lie between voxels: corner ``(a, b, c)`` is the point ``(a - 0.5, b - 0.5, c - 0.5)``
    of voxel coordinates, for ``a`` in ``0..A`` (``0`` only when ``planar``), ``b`` in ``0..B``,
    ``c`` in ``0..C``; its neighbourhood is the 8 voxels (4 when ``planar``) around it, those
    outside the image reading 0. A corner is a border corner of object ``l != 0`` when some but
    not all of its neighbourhood is ``l``; its code has bit ``2**(7 - (4 k0 + 2 k1 + k2))``
    (``2**(3 - (2 k1 + k2))`` when ``planar``) set for each neighbour ``(a - 1 + k0, b - 1 + k1,
    c - 1 + k2)`` that is ``l``: DeepMind's encoding. The foreground's border corners are those
    of the mask ``labels != 0``, coded the same way.

    Parameters
    ----------
    labels : (A, B, C) array of a non-negative integer dtype (0 is background).
    planar : bool, True for a 2D image passed as (1, Y, X).
    start : int, the corner plane (index ``a``) to resume from; 0 at first.
    coords : (cap, 3) int32 output, corner indices;  ids : (cap,) uint64;  codes : (cap,) uint8.
    fg_coords : (fg_cap, 3) int32 output;  fg_codes : (fg_cap,) uint8: the foreground's.

    Returns ``(n, n_fg, next)``: how many object and foreground border corners were stored from
    index 0 (in C order of corners; at one corner, objects in the order they first appear in its
    neighbourhood), and the plane to resume from (the number of planes when done). A plane is
    begun only when the outputs have room for its largest possible yield (``nk (B + 1) (C + 1)``
    and ``(B + 1) (C + 1)``); the caller grows them and resumes.

    Notes
    -----
    Not checked: dtypes, shapes. (One pass for both, each plane scanned once, a uniform
    neighbourhood skipped after its loads: four times faster than two count-and-fill scans.)
    """
    A, B, C = labels.shape
    na = 1 if planar else A + 1
    full = 15 if planar else 255
    nk = 4 if planar else 8
    per_plane = (B + 1) * (C + 1)
    vals = np.zeros(8, np.uint64)
    n = 0
    nf = 0
    a = start
    while a < na:
        if coords.shape[0] - n < nk * per_plane or fg_coords.shape[0] - nf < per_plane:
            break
        for b in range(B + 1):
            for c in range(C + 1):
                same = True
                for k in range(nk):
                    k0 = 0 if planar else k >> 2
                    z = a if planar else a - 1 + k0
                    y = b - 1 + ((k >> 1) & 1)
                    x = c - 1 + (k & 1)
                    if 0 <= z < A and 0 <= y < B and 0 <= x < C:
                        vals[k] = np.uint64(labels[z, y, x])
                    else:
                        vals[k] = np.uint64(0)
                    if vals[k] != vals[0]:
                        same = False
                if same:  # background, or inside one object: no border
                    continue
                fg = 0
                for j in range(nk):
                    if vals[j] != 0:
                        fg |= 1 << (nk - 1 - j)
                if fg != 0 and fg != full:
                    fg_coords[nf, 0] = a
                    fg_coords[nf, 1] = b
                    fg_coords[nf, 2] = c
                    fg_codes[nf] = fg
                    nf += 1
                for k in range(nk):
                    v = vals[k]
                    if v == 0:
                        continue
                    first = True
                    for j in range(k):
                        if vals[j] == v:
                            first = False
                            break
                    if not first:
                        continue
                    code = 0
                    for j in range(nk):
                        if vals[j] == v:
                            code |= 1 << (nk - 1 - j)
                    coords[n, 0] = a
                    coords[n, 1] = b
                    coords[n, 2] = c
                    ids[n] = v
                    codes[n] = code
                    n += 1
        a += 1
    return n, nf, a
