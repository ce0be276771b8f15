"""Numba kernels for fiber connectivity scoring (ScrollGT's ``score-fibers`` definitions).

Arrays in, arrays out; the caller allocates outputs, validates inputs and holds the policy
(``segscore.fibers``). Voxel positions are C-order linear indices into a ``(Z, Y, X)`` cube.

Conventions pinned by tests against ScrollGT's definitions and scipy:

- rounding of a sample to a voxel is round-half-to-even (``numpy.rint``, Python ``round``);
- a ground-truth edge ``a -> b`` of length ``seg`` is sampled at ``a + (b - a) * t`` for
  ``t = i * (1 / (n - 1))``, ``i = 0 .. n - 2`` with ``n = max(2, ceil(seg / step) + 1)``
  (``numpy.linspace`` without its last point), each sample carrying ``seg / (n - 1)``; a
  zero-length edge gives its start with length 0; a fiber without edges gives its first node;
- nearest-label growth within a radius breaks ties between equidistant labelled voxels the
  way ``scipy.ndimage.distance_transform_edt(..., return_indices=True)`` does: the smallest
  x offset, then y, then z (:func:`ball_offsets` sorts the offsets in that order).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.components import ball_offsets  # noqa: F401  (segscore.fibers calls it from here)
from segscore.kernels.components import label_components as label_components26  # noqa: F401  (as above)


@jit
def _unravel(v, ny, nx):
    """(z, y, x) of the C-order linear index ``v`` in a (nz, ny, nx) volume."""
    z = v // (ny * nx)
    r = v - z * ny * nx
    y = r // nx
    return z, y, r - y * nx


@jit
def _rint(x):
    """Round half to even, as ``numpy.rint``."""
    f = np.floor(x)
    d = x - f
    i = np.int64(f)
    if d > 0.5:
        return i + 1
    if d < 0.5:
        return i
    return i + (i & 1)


@jit
def _seg_length(coords, a, b):
    d0 = coords[b, 0] - coords[a, 0]
    d1 = coords[b, 1] - coords[a, 1]
    d2 = coords[b, 2] - coords[a, 2]
    return np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)


@jit
def _samples_of_edge(seg, step):
    if seg == 0.0:
        return 1
    n = max(2, np.int64(np.ceil(seg / step)) + 1)
    return n - 1


@jit
def count_fiber_samples(coords, edges, edge_offsets, step, counts):
    """Number of resampled points of each fiber.

    Parameters
    ----------
    coords : (N, 3) float64, node positions (z, y, x) in cube voxels.
    edges : (E, 2) int64, global node indices.
    edge_offsets : (F + 1,) int64, fiber ``f`` owns ``edges[edge_offsets[f]:edge_offsets[f+1]]``.
    step : float, sampling step in voxels.
    counts : (F,) int64, filled.

    Returns the total. Notes: indices are not checked.
    """
    total = 0
    for f in range(edge_offsets.shape[0] - 1):
        e0 = edge_offsets[f]
        e1 = edge_offsets[f + 1]
        c = 0
        if e1 == e0:
            c = 1
        for e in range(e0, e1):
            c += _samples_of_edge(_seg_length(coords, edges[e, 0], edges[e, 1]), step)
        counts[f] = c
        total += c
    return total


@jit
def fill_fiber_samples(coords, edges, edge_offsets, first_node, step, shape, out_lin, out_dl, out_fiber):
    """Resample every fiber; write each sample's voxel (linear index, -1 outside), length, fiber.

    ``first_node[f]`` is the node a fiber without edges is sampled at. Outputs are sized by
    :func:`count_fiber_samples`. Samples keep fiber order, then stored edge-row order.
    """
    nz, ny, nx = shape[0], shape[1], shape[2]
    k = 0
    for f in range(edge_offsets.shape[0] - 1):
        e0 = edge_offsets[f]
        e1 = edge_offsets[f + 1]
        if e1 == e0:
            a = first_node[f]
            z = _rint(coords[a, 0])
            y = _rint(coords[a, 1])
            x = _rint(coords[a, 2])
            inside = 0 <= z < nz and 0 <= y < ny and 0 <= x < nx
            out_lin[k] = (z * ny + y) * nx + x if inside else -1
            out_dl[k] = 0.0
            out_fiber[k] = f
            k += 1
            continue
        for e in range(e0, e1):
            a = edges[e, 0]
            b = edges[e, 1]
            seg = _seg_length(coords, a, b)
            if seg == 0.0:
                n = 2
                dl = 0.0
                m = 1
            else:
                n = max(2, np.int64(np.ceil(seg / step)) + 1)
                dl = seg / (n - 1)
                m = n - 1
            inv = 1.0 / (n - 1)
            for i in range(m):
                t = i * inv
                z = _rint(coords[a, 0] + (coords[b, 0] - coords[a, 0]) * t)
                y = _rint(coords[a, 1] + (coords[b, 1] - coords[a, 1]) * t)
                x = _rint(coords[a, 2] + (coords[b, 2] - coords[a, 2]) * t)
                inside = 0 <= z < nz and 0 <= y < ny and 0 <= x < nx
                out_lin[k] = (z * ny + y) * nx + x if inside else -1
                out_dl[k] = dl
                out_fiber[k] = f
                k += 1
    return k


@jit
def grow_lookup(labels, lin, offsets, out):
    """Label at each voxel after nearest-label growth: ``out[i]`` for voxel ``lin[i]``.

    A voxel keeps its own non-zero label; a background voxel takes the first non-zero label
    met along ``offsets`` (from :func:`ball_offsets`), else 0.

    Parameters
    ----------
    labels : (Z, Y, X) integer array (any layout).
    lin : (S,) int64 linear indices, all inside the cube.
    offsets : (K, 3) int64, priority order.
    out : (S,) int64, filled.
    """
    nz, ny, nx = labels.shape
    for i in range(lin.shape[0]):
        v = lin[i]
        z, y, x = _unravel(v, ny, nx)
        lab = np.int64(0)
        for k in range(offsets.shape[0]):
            zz = z + offsets[k, 0]
            yy = y + offsets[k, 1]
            xx = x + offsets[k, 2]
            if 0 <= zz < nz and 0 <= yy < ny and 0 <= xx < nx:
                q = np.int64(labels[zz, yy, xx])
                if q != 0:
                    lab = q
                    break
        out[i] = lab


@jit
def fiber_runs(fiber, labels, dl, run_fiber, run_label, run_length):
    """Cut each fiber's sample sequence into runs of one non-zero label; keep runs of length > 0.

    A run ends where the label changes, at background (0, which adds no length) and at the
    end of the fiber; a new run starts with its first sample's length. Returns the number of
    runs written to ``run_fiber``/``run_label``/``run_length`` (each sized like ``labels``).
    """
    n = 0
    has = False
    cur = np.int64(0)
    acc = 0.0
    prev = -1
    for i in range(labels.shape[0]):
        f = fiber[i]
        if f != prev:
            if has and acc > 0.0:
                run_fiber[n] = prev
                run_label[n] = cur
                run_length[n] = acc
                n += 1
            has = False
            prev = f
        lab = labels[i]
        if lab == 0:
            if has and acc > 0.0:
                run_fiber[n] = f
                run_label[n] = cur
                run_length[n] = acc
                n += 1
            has = False
            continue
        if has and lab == cur:
            acc += dl[i]
        else:
            if has and acc > 0.0:
                run_fiber[n] = f
                run_label[n] = cur
                run_length[n] = acc
                n += 1
            cur = lab
            acc = dl[i]
            has = True
    if has and acc > 0.0:
        run_fiber[n] = prev
        run_label[n] = cur
        run_length[n] = acc
        n += 1
    return n


@jit
def count_labelled_near(labels, lin, offsets, seen_bits, z0=0):
    """Count non-zero voxels of ``labels`` within the ``offsets`` ball of any voxel in ``lin``.

    ``labels`` is the slab of slices ``z0 .. z0 + labels.shape[0]`` of the volume, ``lin`` flat
    indices into the whole volume (same Y, X); only voxels inside the slab are counted, so
    slabs add up to the whole. ``seen_bits`` is a zeroed uint8 bitset of ``ceil(size / 8)``
    bytes of the slab (scratch) so each voxel is counted once. Returns ``(labelled_near, near)``.
    """
    nz, ny, nx = labels.shape
    hits = 0
    near = 0
    for i in range(lin.shape[0]):
        v = lin[i]
        z, y, x = _unravel(v, ny, nx)
        z -= z0
        for k in range(offsets.shape[0]):
            zz = z + offsets[k, 0]
            yy = y + offsets[k, 1]
            xx = x + offsets[k, 2]
            if 0 <= zz < nz and 0 <= yy < ny and 0 <= xx < nx:
                q = (zz * ny + yy) * nx + xx
                byte = q >> 3
                bit = np.uint8(1) << np.uint8(q & 7)
                if seen_bits[byte] & bit:
                    continue
                seen_bits[byte] |= bit
                near += 1
                if labels[zz, yy, xx] != 0:
                    hits += 1
    return hits, near


@jit
def label_stats(labels):
    """``(nonzero count, min, max)`` of a 3D integer array (any layout), as int64."""
    nz, ny, nx = labels.shape
    count = 0
    lo = np.int64(0)
    hi = np.int64(0)
    first = True
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = labels[z, y, x]
                if first:
                    lo = np.int64(v)
                    hi = np.int64(v)
                    first = False
                elif v < lo:
                    lo = np.int64(v)
                elif v > hi:
                    hi = np.int64(v)
                if v != 0:
                    count += 1
    return count, lo, hi


@jit
def count_present(labels, seen_bits):
    """Number of distinct non-zero values of ``labels`` (non-negative, < 8 * len(seen_bits)).

    ``seen_bits`` is a zeroed uint8 bitset (scratch).
    """
    nz, ny, nx = labels.shape
    n = 0
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = np.int64(labels[z, y, x])
                if v != 0:
                    bit = np.uint8(1) << np.uint8(v & 7)
                    if not seen_bits[v >> 3] & bit:
                        seen_bits[v >> 3] |= bit
                        n += 1
    return n


@jit
def gather_nonzero(labels, out):
    """Copy the non-zero values of ``labels`` (C order) into ``out``; returns how many."""
    nz, ny, nx = labels.shape
    k = 0
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = labels[z, y, x]
                if v != 0:
                    out[k] = v
                    k += 1
    return k


@jit
def rank_labels(mask, values, out):
    """``out[v] = values[k]`` at the k-th non-zero voxel of ``mask`` in C order, else 0.

    With ``values = arange(1, n + 1)`` this is one instance per voxel; with random draws it
    is the random-instances floor. ``mask`` and ``out`` are (Z, Y, X); returns k.
    """
    nz, ny, nx = mask.shape
    k = 0
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                if mask[z, y, x] != 0:
                    out[z, y, x] = values[k]
                    k += 1
                else:
                    out[z, y, x] = 0
    return k


@jit
def rasterize_fibers(coords, edges, edge_offsets, node_start, node_stop, out):
    """Paint fiber ``f`` as label ``f + 1`` into ``out`` (Z, Y, X) int32; a later fiber wins.

    Each edge is walked at ``t = linspace(0, 1, max(2, ceil(2 * seg)))`` (both ends); a fiber
    without edges paints its nodes. Points are rounded half to even; outside points dropped.
    Returns the number of voxels written (with repeats).
    """
    nz, ny, nx = out.shape
    written = 0
    for f in range(edge_offsets.shape[0] - 1):
        e0 = edge_offsets[f]
        e1 = edge_offsets[f + 1]
        lab = f + 1
        if e1 == e0:
            for a in range(node_start[f], node_stop[f]):
                z = _rint(coords[a, 0])
                y = _rint(coords[a, 1])
                x = _rint(coords[a, 2])
                if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
                    out[z, y, x] = lab
                    written += 1
            continue
        for e in range(e0, e1):
            a = edges[e, 0]
            b = edges[e, 1]
            seg = _seg_length(coords, a, b)
            n = max(2, np.int64(np.ceil(seg * 2.0)))
            inv = 1.0 / (n - 1)
            for i in range(n):
                t = 1.0 if i == n - 1 else i * inv
                z = _rint(coords[a, 0] + (coords[b, 0] - coords[a, 0]) * t)
                y = _rint(coords[a, 1] + (coords[b, 1] - coords[a, 1]) * t)
                x = _rint(coords[a, 2] + (coords[b, 2] - coords[a, 2]) * t)
                if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
                    out[z, y, x] = lab
                    written += 1
    return written


@jit
def grow_volume(labels, seeds, offsets, scratch_lin, scratch_lab):
    """Nearest-label growth of ``labels`` in place, within the ball ``offsets``, near ``seeds``.

    ``seeds`` (linear indices) must include every non-zero voxel; only background voxels in
    the ball of a seed can change, and every new label is read from the labels as they were
    before the call (no cascade). Scratch arrays hold ``len(seeds) * len(offsets)`` entries.
    Returns the number of voxels grown.
    """
    nz, ny, nx = labels.shape
    m = 0
    for i in range(seeds.shape[0]):
        v = seeds[i]
        z, y, x = _unravel(v, ny, nx)
        for k in range(offsets.shape[0]):
            zz = z + offsets[k, 0]
            yy = y + offsets[k, 1]
            xx = x + offsets[k, 2]
            if 0 <= zz < nz and 0 <= yy < ny and 0 <= xx < nx and labels[zz, yy, xx] == 0:
                lab = 0
                for j in range(offsets.shape[0]):
                    z2 = zz + offsets[j, 0]
                    y2 = yy + offsets[j, 1]
                    x2 = xx + offsets[j, 2]
                    if 0 <= z2 < nz and 0 <= y2 < ny and 0 <= x2 < nx:
                        q = labels[z2, y2, x2]
                        if q != 0:
                            lab = q
                            break
                scratch_lin[m] = (zz * ny + yy) * nx + xx
                scratch_lab[m] = lab
                m += 1
    for i in range(m):
        v = scratch_lin[i]
        z, y, x = _unravel(v, ny, nx)
        labels[z, y, x] = scratch_lab[i]
    return m
