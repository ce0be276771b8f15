"""Object boundaries of a label image and their Chebyshev-distance agreement with another's.

A boundary pixel is a labelled (non-zero) pixel with a differently labelled or background
pixel among its in-image neighbours of the full 3x3 (2D) or 3x3x3 (3D) neighbourhood. This
is what ``grey_dilation(size=3) != grey_erosion(size=3)`` with scipy's default border mode
gives, restricted to labelled pixels.

A boundary pixel of one image is matched at tolerance ``t`` when a boundary pixel of the
other image lies within Chebyshev distance ``t`` (a square / cube of side ``2t+1``, as a
binary dilation with that footprint). :func:`nearest_counts` counts, for each
image, how many of its boundary pixels have their nearest other-image boundary pixel at
distance 0, 1, ..., T, or farther; every tolerance up to T is a cumulative sum of that.

Inputs are 3D arrays; a 2D image is passed as ``image[None]``.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def _extremes(r0, r1, r2, r3, r4, r5, r6, r7, r8, lo, hi):
    """``lo[c]``, ``hi[c]``: the smallest and largest of the nine rows' ``c``-th values, in a plain
    loop LLVM vectorizes."""
    for c in range(lo.shape[0]):
        lo[c] = min(min(min(r0[c], r1[c]), min(r2[c], r3[c])), min(min(r4[c], r5[c]), min(min(r6[c], r7[c]), r8[c])))
        hi[c] = max(max(max(r0[c], r1[c]), max(r2[c], r3[c])), max(max(r4[c], r5[c]), max(max(r6[c], r7[c]), r8[c])))


@jit
def boundary_mask(labels, out):
    """Mark the boundary pixels of ``labels`` (3D, any integer dtype) in ``out`` (uint8, same shape).

    A labelled pixel is marked when one of its in-image neighbours (the 3x3x3 block around it)
    differs from it, that is when the block's smallest and largest labels differ (the pixel is
    one of them). For each row the column-wise minimum and maximum of its nine neighbouring
    rows (the row itself among them; at the image's faces a row stands in for the missing one,
    which changes no extreme) are taken, then the extremes over three shifts along the row: loops
    of one integer type without branches, which LLVM vectorizes. Returns the number of boundary
    pixels.

    Notes
    -----
    ``out`` is overwritten (it need not be zeroed); shapes are not checked.
    """
    A, B, C = labels.shape
    lo = np.empty(C, labels.dtype)
    hi = np.empty(C, labels.dtype)
    n = 0
    for a in range(A):
        a0, a2 = max(a - 1, 0), min(a + 1, A - 1)
        for b in range(B):
            b0, b2 = max(b - 1, 0), min(b + 1, B - 1)
            v = labels[a, b]
            _extremes(labels[a0, b0], labels[a0, b], labels[a0, b2], labels[a, b0], v, labels[a, b2],
                      labels[a2, b0], labels[a2, b], labels[a2, b2], lo, hi)
            o = out[a, b]
            if C == 1:
                m = (lo[0] != hi[0]) & (v[0] != 0)
                o[0] = m
                n += m
                continue
            m = (min(lo[0], lo[1]) != max(hi[0], hi[1])) & (v[0] != 0)
            o[0] = m
            n += m
            for c in range(1, C - 1):
                m = (min(min(lo[c - 1], lo[c]), lo[c + 1]) != max(max(hi[c - 1], hi[c]), hi[c + 1])) & (v[c] != 0)
                o[c] = m
                n += m
            m = (min(lo[C - 2], lo[C - 1]) != max(hi[C - 2], hi[C - 1])) & (v[C - 1] != 0)
            o[C - 1] = m
            n += m
    return n


@jit
def _dilate_rows(x, buf):
    """``x`` (A, B, C) uint8 0/1 dilated in place by the 3x3x3 cube (in-image neighbours), one
    axis at a time, each pass an or of three rows or planes (plain loops LLVM vectorizes) with
    the overwritten one kept in ``buf`` (B + 1, C) uint8."""
    A, B, C = x.shape
    row = buf[B]
    for a in range(A):  # along the rows
        for b in range(B):
            r = x[a, b]
            for c in range(C):
                row[c] = r[c]
            for c in range(1, C - 1):
                r[c] = row[c - 1] | row[c] | row[c + 1]
            if C > 1:
                r[0] = row[0] | row[1]
                r[C - 1] = row[C - 2] | row[C - 1]
    keep = buf[:B]
    for a in range(A):  # across the rows of a plane: the plane's old rows kept
        p = x[a]
        for b in range(B):
            for c in range(C):
                keep[b, c] = p[b, c]
        for b in range(B):
            r = p[b]
            if b > 0:
                u = keep[b - 1]
                for c in range(C):
                    r[c] |= u[c]
            if b + 1 < B:
                d = keep[b + 1]
                for c in range(C):
                    r[c] |= d[c]
    if A > 1:  # across the planes: the previous plane's old values kept
        for b in range(B):
            for c in range(C):
                keep[b, c] = 0
        for a in range(A):
            p = x[a]
            nxt = x[a + 1] if a + 1 < A else x[a]
            for b in range(B):
                for c in range(C):
                    v = p[b, c]
                    p[b, c] = v | keep[b, c] | nxt[b, c]
                    keep[b, c] = v


@jit
def _owned_hits(src, hit, a0, a1, b0, b1):
    """Set pixels of ``src`` in the owned block ``[a0:a1, b0:b1, :]`` that are set in ``hit``."""
    n = 0
    for a in range(a0, a1):
        for b in range(b0, b1):
            s = src[a, b]
            h = hit[a, b]
            for c in range(s.shape[0]):
                n += s[c] & h[c]
    return n


@jit
def nearest_counts(src, other, T, hist, lo, hi, axis):
    """Add to ``hist`` (T+2,) int64, for each set pixel of ``src`` whose index along ``axis``
    (0 or 1) lies in ``lo:hi``, its Chebyshev distance (0..T, else T+1) to the nearest set
    pixel of ``other`` (both (A, B, C) uint8 0/1).

    The pixels within distance ``r`` of ``other`` are ``other`` dilated ``r`` times by the
    3x3x3 cube; counting the owned ``src`` pixels among them after each dilation gives every
    tolerance at once (vectorized passes over the block, faster than ring searches).

    Notes
    -----
    Shapes are not checked. A tiled caller passes its halo-extended block and the rows it
    owns as ``lo:hi``; every mark of ``other`` in the block is searched.
    """
    A, B, C = src.shape
    a0, a1 = (lo, hi) if axis == 0 else (0, A)
    b0, b1 = (lo, hi) if axis == 1 else (0, B)
    total = _owned_hits(src, src, a0, a1, b0, b1)
    if total == 0:
        return
    reach = other.copy()
    buf = np.empty((B + 1, C), np.uint8)
    within = 0  # owned src pixels within distance r - 1
    for r in range(T + 1):
        if r:
            _dilate_rows(reach, buf)
        n = _owned_hits(src, reach, a0, a1, b0, b1)
        hist[r] += n - within
        within = n
        if within == total:
            return
    hist[T + 1] += total - within
