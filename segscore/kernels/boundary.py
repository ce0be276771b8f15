"""Object boundaries of a label image and their Chebyshev-distance agreement with another's.

A boundary pixel is a labelled (non-zero) pixel with a differently labelled or background
pixel among its in-image neighbours of the full 3x3 (2D) or 3x3x3 (3D) neighbourhood. This
is what ``grey_dilation(size=3) != grey_erosion(size=3)`` with scipy's default border mode
gives, restricted to labelled pixels.

A boundary pixel of one image is matched at tolerance ``t`` when a boundary pixel of the
other image lies within Chebyshev distance ``t`` (a square / cube of side ``2t+1``, as a
binary dilation with that footprint). :func:`boundary_distance_counts` returns, for each
image, how many of its boundary pixels have their nearest other-image boundary pixel at
distance 0, 1, ..., T, or farther; every tolerance up to T is a cumulative sum of that.

Inputs are 3D arrays; a 2D image is passed as ``image[None]``.
"""

from __future__ import annotations

from segscore.kernels._jit import jit


@jit
def boundary_mask(labels, out):
    """Mark the boundary pixels of ``labels`` (3D, any integer dtype) in ``out`` (uint8, same shape).

    Each unordered pair of neighbours is compared once; when the two differ, whichever of
    them is labelled is a boundary pixel. Returns the number of boundary pixels.

    Notes
    -----
    ``out`` must be zeroed by the caller; shapes are not checked.
    """
    A, B, C = labels.shape
    for a in range(A):
        for b in range(B):
            for c in range(C):
                v = labels[a, b, c]
                # the 13 "forward" neighbours of the 26 (lexicographically later offsets)
                for da in range(0, 2):
                    aa = a + da
                    if aa >= A:
                        break
                    for db in range(-1, 2):
                        if da == 0 and db < 0:
                            continue
                        bb = b + db
                        if bb < 0 or bb >= B:
                            continue
                        for dc in range(-1, 2):
                            if da == 0 and db == 0 and dc <= 0:
                                continue
                            cc = c + dc
                            if cc < 0 or cc >= C:
                                continue
                            w = labels[aa, bb, cc]
                            if w != v:
                                if v != 0:
                                    out[a, b, c] = 1
                                if w != 0:
                                    out[aa, bb, cc] = 1
    n = 0
    for a in range(A):
        for b in range(B):
            for c in range(C):
                n += out[a, b, c]
    return n


@jit
def nearest_counts(src, other, T, hist, lo, hi, axis):
    """Add to ``hist`` (T+2,) int64, for each set pixel of ``src`` whose index along ``axis``
    (0 or 1) lies in ``lo:hi``, its Chebyshev distance (0..T, else T+1) to the nearest set
    pixel of ``other`` (both (A, B, C) uint8).

    Notes
    -----
    Shapes are not checked. A tiled caller passes its halo-extended block and the rows it
    owns as ``lo:hi``; every mark of ``other`` in the block is searched.
    """
    A, B, C = src.shape
    a0, a1 = (lo, hi) if axis == 0 else (0, A)
    b0, b1 = (lo, hi) if axis == 1 else (0, B)
    for a in range(a0, a1):
        for b in range(b0, b1):
            for c in range(C):
                if src[a, b, c] == 0:
                    continue
                found = T + 1
                for r in range(T + 1):
                    ra = r if A > 1 else 0
                    hit = False
                    for da in range(-ra, ra + 1):
                        aa = a + da
                        if aa < 0 or aa >= A:
                            continue
                        ada = abs(da)
                        for db in range(-r, r + 1):
                            bb = b + db
                            if bb < 0 or bb >= B:
                                continue
                            adb = abs(db)
                            m = ada if ada > adb else adb
                            if m == r:
                                # the whole row of dc is on the ring
                                for dc in range(-r, r + 1):
                                    cc = c + dc
                                    if cc >= 0 and cc < C and other[aa, bb, cc] != 0:
                                        hit = True
                                        break
                            else:
                                # only the two ends dc = -r, +r are on the ring
                                cc = c - r
                                if cc >= 0 and other[aa, bb, cc] != 0:
                                    hit = True
                                cc = c + r
                                if (not hit) and cc < C and other[aa, bb, cc] != 0:
                                    hit = True
                            if hit:
                                break
                        if hit:
                            break
                    if hit:
                        found = r
                        break
                hist[found] += 1


@jit
def boundary_distance_counts(truth_edge, pred_edge, T, pred_hist, truth_hist):
    """Histograms of nearest-boundary Chebyshev distances, both ways.

    Parameters
    ----------
    truth_edge, pred_edge : (A, B, C) uint8 boundary masks (from :func:`boundary_mask`)
    T : int >= 0, the largest tolerance
    pred_hist : (T+2,) int64, zeroed: ``pred_hist[d]`` = predicted boundary pixels whose
        nearest truth boundary pixel is at distance ``d`` (``d = T+1``: farther or none)
    truth_hist : (T+2,) int64, zeroed: the same for truth boundary pixels against the prediction

    Notes
    -----
    Shapes are not checked. Cost is proportional to the boundary pixels times the ring
    sizes searched, which stop at the first hit.
    """
    A = pred_edge.shape[0]
    nearest_counts(pred_edge, truth_edge, T, pred_hist, 0, A, 0)
    nearest_counts(truth_edge, pred_edge, T, truth_hist, 0, A, 0)
