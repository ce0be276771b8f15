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
def _pack_bits(x, out):
    """``x`` (A, B, C) uint8 0/1 packed along its rows into ``out`` (A, B, W) uint64, W = ceil(C / 64):
    pixel ``c`` of a row is bit ``c % 64`` of word ``c // 64``; the bits past ``C`` are 0. Each word
    is an or of 64 shifted bytes (a loop LLVM vectorizes)."""
    A, B, C = x.shape
    W = out.shape[2]
    for a in range(A):
        for b in range(B):
            r = x[a, b]
            o = out[a, b]
            for w in range(W):
                c0 = w * 64
                n = min(64, C - c0)
                word = np.uint64(0)
                for j in range(n):
                    word |= np.uint64(r[c0 + j] & 1) << np.uint64(j)
                o[w] = word


@jit
def _dilate_bits(x, buf, last):
    """``x`` (A, B, W) packed rows (:func:`_pack_bits`) dilated in place by the 3x3x3 cube (in-image
    neighbours), one axis at a time: along the rows by shifts (a word's end bit carried in from
    its neighbours; ``last`` masks the bits past the row's end), then an or of the neighbouring
    rows and planes, the overwritten ones kept in ``buf`` (B + 1, W) uint64."""
    A, B, W = x.shape
    one = np.uint64(1)
    top = np.uint64(63)
    row = buf[B]
    for a in range(A):  # along the rows
        for b in range(B):
            r = x[a, b]
            for w in range(W):
                row[w] = r[w]
            for w in range(W):
                v = row[w]
                d = v | (v << one) | (v >> one)
                if w > 0:
                    d |= row[w - 1] >> top
                if w + 1 < W:
                    d |= row[w + 1] << top
                r[w] = d
            r[W - 1] &= last
    keep = buf[:B]
    for a in range(A):  # across the rows of a plane
        p = x[a]
        for b in range(B):
            for w in range(W):
                keep[b, w] = p[b, w]
        for b in range(B):
            r = p[b]
            if b > 0:
                u = keep[b - 1]
                for w in range(W):
                    r[w] |= u[w]
            if b + 1 < B:
                d = keep[b + 1]
                for w in range(W):
                    r[w] |= d[w]
    if A > 1:  # across the planes: the previous plane's old values kept
        for b in range(B):
            for w in range(W):
                keep[b, w] = 0
        for a in range(A):
            p = x[a]
            nxt = x[a + 1] if a + 1 < A else x[a]
            for b in range(B):
                for w in range(W):
                    v = p[b, w]
                    p[b, w] = v | keep[b, w] | nxt[b, w]
                    keep[b, w] = v


@jit
def _owned_hits(src, hit, a0, a1, b0, b1):
    """Set bits of packed ``src`` in the owned block ``[a0:a1, b0:b1, :]`` that are set in ``hit``
    (a population count of their and, SWAR: no popcount instruction is needed)."""
    m1 = np.uint64(0x5555555555555555)
    m2 = np.uint64(0x3333333333333333)
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    h01 = np.uint64(0x0101010101010101)
    n = np.int64(0)
    for a in range(a0, a1):
        for b in range(b0, b1):
            s = src[a, b]
            h = hit[a, b]
            for w in range(s.shape[0]):
                v = s[w] & h[w]
                v = v - ((v >> np.uint64(1)) & m1)
                v = (v & m2) + ((v >> np.uint64(2)) & m2)
                v = (v + (v >> np.uint64(4))) & m4
                n += np.int64((v * h01) >> np.uint64(56))
    return n


@jit
def pack_marks(marks):
    """Boundary marks (A, B, C) uint8 0/1 as packed rows (A, B, ceil(C / 64)) uint64
    (:func:`_pack_bits`): what :func:`nearest_counts` takes, made once per image and tile."""
    A, B, C = marks.shape
    out = np.empty((A, B, (C + 63) // 64), np.uint64)
    _pack_bits(marks, out)
    return out


@jit
def nearest_counts(src, other, T, hist, lo, hi, axis, C):
    """Add to ``hist`` (T+2,) int64, for each set pixel of ``src`` whose index along ``axis``
    (0 or 1) lies in ``lo:hi``, its Chebyshev distance (0..T, else T+1) to the nearest set
    pixel of ``other`` (both (A, B, C) 0/1 images packed by :func:`pack_marks`; ``C`` the
    images' row length).

    The pixels within distance ``r`` of ``other`` are ``other`` dilated ``r`` times by the
    3x3x3 cube; counting the owned ``src`` pixels among them after each dilation gives every
    tolerance at once. On packed rows a pass moves 64 pixels per word (about 5x faster than
    on one byte per pixel).

    Notes
    -----
    Shapes are not checked. A tiled caller passes its halo-extended block and the rows it
    owns as ``lo:hi``; every mark of ``other`` in the block is searched.
    """
    A, B, W = src.shape
    a0, a1 = (lo, hi) if axis == 0 else (0, A)
    b0, b1 = (lo, hi) if axis == 1 else (0, B)
    total = _owned_hits(src, src, a0, a1, b0, b1)
    if total == 0:
        return
    tail = C - (W - 1) * 64  # bits of the last word that are pixels (1..64)
    last = np.uint64(0xFFFFFFFFFFFFFFFF) if tail == 64 else (np.uint64(1) << np.uint64(tail)) - np.uint64(1)
    reach = other.copy()
    buf = np.empty((B + 1, W), np.uint64)
    within = 0  # owned src pixels within distance r - 1
    for r in range(T + 1):
        if r:
            _dilate_bits(reach, buf, last)
        n = _owned_hits(src, reach, a0, a1, b0, b1)
        hist[r] += n - within
        within = n
        if within == total:
            return
    hist[T + 1] += total - within
