"""Connected components, once for every family: union-find, the voxel labeller, neighbour
offsets and offset balls.

- Union-find (:func:`find`, :func:`link`, :func:`union`): the smaller root is kept, so a root
  is the smallest member of its set and a parent is always smaller than its child; ``find``
  halves the path on the way.
- The labeller numbers components 1.. in C order of each component's first voxel, as
  ``scipy.ndimage.label`` does with a full structuring element (26-connected in 3D, 8 in 2D) or,
  by ``rank``, the 18- or 6-connected one (4 in 2D).
  One raster scan (:func:`_scan`: a voxel takes the provisional label of its
  already-scanned neighbours, joining theirs; or a new one) and one resolution
  (:func:`_resolve`) serve a whole volume (:func:`label_components`) and a set of voxels of a
  padded, flattened array (:func:`label_subset`, the layout of ``kernels.skelgraph``).
- :func:`neighbour_offsets` and :func:`ball_offsets` are the neighbourhoods the families share.

Sharing compiled helpers across kernel files is safe: ``kernels._jit`` stamps every kernel's
cache entry with the contents of all kernel files.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


def ball_offsets(radius: float) -> np.ndarray:
    """Integer offsets ``(dz, dy, dx)`` with ``sqrt(d2) <= radius``, in growth-priority order.

    Sorted by squared distance, then ``dx``, ``dy``, ``dz`` ascending: the first labelled
    voxel met in this order is the one scipy's exact Euclidean feature transform returns.
    ``radius <= 0`` gives the centre only. Returns an ``(K, 3)`` int64 array.
    """
    r = int(np.floor(max(float(radius), 0.0)))
    rng = np.arange(-r, r + 1)
    dz, dy, dx = (a.ravel() for a in np.meshgrid(rng, rng, rng, indexing="ij"))
    d2 = dz * dz + dy * dy + dx * dx
    keep = np.sqrt(d2.astype(np.float64)) <= float(radius) if radius > 0 else d2 == 0
    order = np.lexsort((dz[keep], dy[keep], dx[keep], d2[keep]))
    return np.stack([dz[keep][order], dy[keep][order], dx[keep][order]], axis=1).astype(np.int64)


def neighbour_offsets(padded_shape, rank: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Flat offsets of the 3**ndim - 1 neighbours (lexicographic) and their Euclidean lengths.

    For a C-order array of shape ``padded_shape``; the negative offsets (the first half) are
    the neighbours a raster scan has already visited. ``rank`` keeps only the neighbours at most
    that many unit steps away along different axes (``scipy.ndimage.generate_binary_structure``'s
    connectivity: in 3D 1 is the 6-neighbourhood, 2 the 18-, 3 or None all 26).
    """
    ndim = len(padded_shape)
    strides = np.ones(ndim, dtype=np.int64)
    for i in range(ndim - 2, -1, -1):
        strides[i] = strides[i + 1] * padded_shape[i + 1]
    grid = np.indices((3,) * ndim).reshape(ndim, -1).T - 1
    steps = np.count_nonzero(grid, axis=1)
    grid = grid[(steps > 0) & (steps <= (ndim if rank is None else int(rank)))]
    return (grid @ strides).astype(np.int64), np.sqrt((grid.astype(np.float64) ** 2).sum(axis=1))


# ---- union-find


@jit
def find(parent, a):
    """Root of ``a``'s set, halving the path on the way."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@jit
def link(parent, ra, rb):
    """Join two roots under the smaller one; returns it."""
    if ra < rb:
        parent[rb] = ra
        return ra
    parent[ra] = rb
    return rb


@jit
def union(parent, a, b):
    """Join the sets of ``a`` and ``b`` under the smaller of their roots; returns that root."""
    return link(parent, find(parent, a), find(parent, b))


# ---- the labeller


@jit
def _backward(offsets):
    """The negative ``offsets``, in order: the neighbours a raster scan has already visited."""
    back = np.empty(offsets.shape[0], offsets.dtype)
    nb = 0
    for i in range(offsets.shape[0]):
        if offsets[i] < 0:
            back[nb] = offsets[i]
            nb += 1
    return back[:nb]


@jit
def _fresh(back):
    """The offsets of ``back`` to read when the previous voxel (offset -1) is in the set: those
    that are not -1 and whose neighbour is not the previous voxel's (offset + 1 not in ``back``;
    in a padded array, the column ahead: dx = +1)."""
    # loops, not a boolean mask index: back[keep] compiles numba's fancy indexing (a first run's
    # 0.3 s) for a few offsets
    out = np.empty(back.shape[0], back.dtype)
    k = 0
    has_left = False
    for i in range(back.shape[0]):
        has_left = has_left or back[i] == -1
        keep = back[i] != -1
        for j in range(back.shape[0]):
            if back[j] == back[i] + 1:
                keep = False
        if keep:
            out[k] = back[i]
            k += 1
    if not has_left:
        raise ValueError("the scanned neighbour offsets must include -1")
    return out[:k]


@jit
def _scan(member, prov, parent, pixels, start, stop, back, fresh, n):
    """The raster scan: give each voxel of the set its provisional label; returns the number of
    labels issued (``n`` before).

    Parameters
    ----------
    member : (P,) flat array, non-zero on the voxels of the set, 0 on a border wide enough
        that every offset of ``back`` stays in bounds.
    prov : (P,) int32 or int64, provisional labels, written at each scanned voxel and read at
        scanned voxels only (may be ``member`` itself: a voxel of the set not yet scanned then
        holds any non-zero marker).
    parent : union-find over the labels; label ``n + 1`` goes to ``parent[n + 1]``.
    pixels : (K,) int64, the voxels to scan, ``pixels[start:stop]``, in increasing order.
    back : the flat offsets of the neighbours a raster scan has visited, -1 among them;
        ``fresh``: :func:`_fresh` of ``back``.

    Notes
    -----
    A voxel joins the sets of its scanned neighbours' labels under their smallest root, or
    opens label ``n + 1``. When voxel ``p - 1`` is in the set it was scanned just before ``p``:
    its label is still a root and its neighbours' sets are joined to it, so only ``fresh`` is
    read. Voxels scanned earlier must have been labelled by the same union-find.
    """
    for i in range(start, stop):
        p = pixels[i]
        if member[p - 1] != 0:
            lab = np.int64(prov[p - 1])  # int64 labels whatever ``prov`` holds: find and
            for m in range(fresh.shape[0]):  # link compiled for one signature each
                q = p + fresh[m]
                if member[q] != 0:
                    v = np.int64(prov[q])
                    if v != lab:
                        r = find(parent, v)
                        if r != lab:
                            lab = link(parent, lab, r)
            prov[p] = lab
            continue
        lab = np.int64(0)  # not Literal[int](0): link compiled once
        for m in range(back.shape[0]):
            q = p + back[m]
            if member[q] != 0:
                v = np.int64(prov[q])
                if v == lab:
                    continue
                r = find(parent, v)
                if lab == 0:
                    lab = r
                elif r != lab:
                    lab = link(parent, lab, r)
        if lab == 0:
            n += 1
            parent[n] = n
            lab = n
        prov[p] = lab
    return n


@jit
def _resolve(parent, n, final):
    """``final[i]`` (1..n provisional labels) = the component number; returns the count.

    A root is the smallest provisional label of its set and labels are issued in scan order,
    so numbering roots in increasing order numbers components by their first voxel.
    """
    m = 0
    for i in range(1, n + 1):
        r = find(parent, i)
        if r == i:
            m += 1
            final[i] = m
        else:
            final[i] = final[r]
    return m


@jit
def _label_planes(mask, out, parent, offsets):
    nz, ny, nx = mask.shape
    px = nx + 2
    plane = (ny + 2) * px
    # Planes z - 1 and z with a zero border, in turn the upper and the lower half of ``buf``,
    # scanned in place (``member`` is ``prov``): the plane to scan holds -1 on the mask and
    # lists those voxels in ``todo``. ``offsets`` are this buffer's; when the lower half is
    # scanned, plane z - 1 lies above it (dz = -1 is + plane, not - plane).
    back_hi = _backward(offsets)
    fresh_hi = _fresh(back_hi)
    back_lo = back_hi.copy()  # (a loop, not np.where: its broadcasting compiles for a second)
    for i in range(back_lo.shape[0]):
        if back_lo[i] < -px - 1:
            back_lo[i] += 2 * plane
    fresh_lo = _fresh(back_lo)
    buf = np.zeros(2 * plane, np.int32)
    todo = np.empty(ny * nx, np.int64)
    k = 0
    for y in range(ny if nz > 0 else 0):
        for x in range(nx):
            if mask[0, y, x] != 0:
                buf[(y + 1) * px + 1 + x] = -1
                todo[k] = (y + 1) * px + 1 + x
                k += 1
    n = np.int64(0)  # typed, not Literal[int](0): _scan compiled for one signature
    zero = np.int64(0)
    for z in range(nz):
        cur = (z & 1) * plane
        nxt = plane - cur
        if cur == 0:
            n = _scan(buf, buf, parent, todo, zero, np.int64(k), back_lo, fresh_lo, n)
        else:
            n = _scan(buf, buf, parent, todo, zero, np.int64(k), back_hi, fresh_hi, n)
        k = 0
        zn = min(z + 1, nz - 1)  # after the last plane: a harmless refill
        for y in range(ny):
            row = (y + 1) * px + 1
            for x in range(nx):
                out[z, y, x] = buf[cur + row + x]
                p = nxt + row + x  # plane z - 1 is done with: plane z + 1 takes its place
                if mask[zn, y, x] != 0:
                    buf[p] = -1
                    todo[k] = p
                    k += 1
                else:
                    buf[p] = 0
    final = np.zeros(n + 1, np.int32)
    m = _resolve(parent, n, final)
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = out[z, y, x]
                if v != 0:
                    out[z, y, x] = final[v]
    return m


def label_components(mask, out, parent, rank: int = 3):
    """Connected components of a volume, 26-connected (a 2D image as ``(1, Y, X)``: 8), or with
    ``rank`` 2: 18-connected (an image: 8), 1: 6-connected (an image: 4) -- the neighbours at most
    ``rank`` unit steps away along different axes, ``scipy.ndimage.generate_binary_structure(3, rank)``.

    Parameters
    ----------
    mask : (Z, Y, X) uint8 (any layout), non-zero on the voxels to label.
    out : (Z, Y, X) int32 (any layout), filled: 0 off the mask, else the component 1..n,
        numbered in C order of each component's first voxel (``scipy.ndimage.label`` with that
        structure; the tests pin it for every rank).
    parent : int32 or int64 scratch of at least ``count_nonzero(mask) + 1`` entries.

    Returns the number of components.

    Notes
    -----
    Does not check shapes or the size of ``parent``. Scratch beyond ``parent``: two padded
    planes of int32 and one plane of int64.
    """
    if rank not in (1, 2, 3):
        raise ValueError(f"rank {rank!r}: give 1, 2 or 3")
    _, ny, nx = mask.shape
    return _label_planes(mask, out, parent, neighbour_offsets((2, ny + 2, nx + 2), rank)[0])


@jit
def label_subset(member, pixels, slot, offsets, out):
    """Connected components of a set of voxels of a padded, flattened array; returns the count.

    Parameters
    ----------
    member : (P,) uint8 padded flat array, 1 on the voxels of the set (``pixels``), 0 elsewhere
        (the one-voxel border too).
    pixels : (K,) int64, the set's flat indices in increasing order.
    slot : (P,) int32 or int64 scratch (need not be initialised): provisional labels.
    offsets : (M,) neighbour offsets (:func:`neighbour_offsets`; the negative ones are used).
    out : (K,) int64 output: component id (0-based), numbered in order of each component's
        first voxel (scipy.ndimage.label's raster order).

    Notes
    -----
    Does not check that ``pixels`` is sorted or matches ``member``, nor the border.
    """
    back = _backward(offsets)
    fresh = _fresh(back)
    K = pixels.shape[0]
    parent = np.empty(K + 1, np.int64)
    zero = np.int64(0)  # not Literal[int](0): the labeller's own _scan signature
    n = _scan(member, slot, parent, pixels, zero, np.int64(K), back, fresh, zero)
    final = np.zeros(n + 1, np.int64)
    m = _resolve(parent, n, final)
    for k in range(K):
        out[k] = final[slot[pixels[k]]] - 1
    return m
