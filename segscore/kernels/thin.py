"""2D parallel thinning driven by a removal table (two sub-passes per iteration).

A full-image implementation scans every pixel in each sub-pass of every iteration. The result
of a sub-pass depends only on each pixel's 3x3 neighbourhood before it, so this kernel looks
again only at the pixels whose neighbourhood changed, or that the table marks removable in the
other sub-pass: on a vessel mask that is a small fraction of the pixels, and the long tails of
iterations that remove a handful of pixels each cost next to nothing.

The table is an argument: :mod:`segscore.curvilinear.thinning` measures the one that makes
this identical to ``skimage.morphology.skeletonize``. Neighbourhood code of a pixel: the sum of
1 NW, 2 N, 4 NE, 8 E, 16 SE, 32 S, 64 SW, 128 W over its foreground neighbours. Table values:
0 keep, 1 removable in the first sub-pass, 2 in the second, 3 in both.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def neighbourhood_code(img, p, W):
    """The code of flat pixel ``p`` of a padded, flattened 2D 0/1 image of width ``W``."""
    return (img[p - W - 1] + 2 * img[p - W] + 4 * img[p - W + 1] + 8 * img[p + 1] + 16 * img[p + W + 1]
            + 32 * img[p + W] + 64 * img[p + W - 1] + 128 * img[p - 1])


@jit
def thin_table(img, W, table):
    """Thin ``img`` in place; returns the number of iterations run.

    Parameters
    ----------
    img : (H * W,) uint8, a 2D 0/1 image padded with one zero pixel on every side, flattened.
    W : int, the padded width.
    table : (256,) uint8, the removal table (values 0-3).

    Notes
    -----
    Iterations of two parallel sub-passes (the first removes the pixels whose table value is 1
    or 3, the second 2 or 3, each judged on the image before the sub-pass) until an iteration
    removes nothing. The zero border is not checked.
    """
    n = img.shape[0]
    nfg = 0  # counted by a loop: np.flatnonzero compiles its own overload (0.3 s of a first run)
    for p in range(n):
        if img[p] != 0:
            nfg += 1
    cand = np.empty(nfg, np.int64)
    nc = 0
    for p in range(n):  # only pixels with a background neighbour can go first
        if img[p] != 0 and neighbourhood_code(img, p, W) != 255:
            cand[nc] = p
            nc += 1
    cand = cand[:nc].copy()
    inq = np.zeros(n, np.uint8)
    dele = np.empty(max(nc, 1), np.int64)
    keep = np.empty(max(nc, 1), np.int64)
    iters = 0
    while True:
        iters += 1
        removed_any = False
        for sub in range(2):
            want = 1 + sub
            if dele.shape[0] < cand.shape[0]:
                dele = np.empty(cand.shape[0], np.int64)
                keep = np.empty(cand.shape[0], np.int64)
            nd = 0
            nkeep = 0
            for k in range(cand.shape[0]):
                p = cand[k]
                if not img[p]:
                    continue
                v = table[neighbourhood_code(img, p, W)]
                if v == 3 or v == want:
                    dele[nd] = p
                    nd += 1
                elif v != 0:
                    keep[nkeep] = p  # removable in the other sub-pass: look again then
                    nkeep += 1
            if nd == 0:
                cand = keep[:nkeep].copy()
                continue
            removed_any = True
            for k in range(nd):
                img[dele[k]] = 0
            # next candidates: the kept ones and every foreground neighbour of a removed pixel
            nxt = np.empty(nkeep + 8 * nd, np.int64)
            m = 0
            for k in range(nkeep):
                p = keep[k]
                if inq[p] == 0:
                    inq[p] = 1
                    nxt[m] = p
                    m += 1
            for k in range(nd):
                p = dele[k]
                for q in (p - W - 1, p - W, p - W + 1, p - 1, p + 1, p + W - 1, p + W, p + W + 1):
                    if img[q] and inq[q] == 0:
                        inq[q] = 1
                        nxt[m] = q
                        m += 1
            cand = nxt[:m].copy()
            for k in range(m):
                inq[cand[k]] = 0
        if not removed_any:
            break
    return iters
