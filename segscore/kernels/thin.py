"""2D thinning, pixel-identical to ``skimage.morphology.skeletonize`` (Zhang-Suen, 2D).

scikit-image scans every pixel of the image in each of the two sub-passes of every
iteration. The result of a sub-pass depends only on each pixel's 3x3 neighbourhood before it,
so this port evaluates only the pixels whose neighbourhood changed (or that were removable in
the other sub-pass), which touches a small fraction of a vessel mask's pixels.

``ZS_TABLE`` is scikit-image's removal table (skimage/morphology/_skeletonize_various_cy.pyx,
BSD-3-Clause, Copyright the scikit-image team): for each of the 256 neighbourhood codes,
0 keep, 1 removable in the first sub-pass, 2 in the second, 3 in both. The code of a pixel
sums 1 NW, 2 N, 4 NE, 8 E, 16 SE, 32 S, 64 SW, 128 W. Tests compare the result with
scikit-image's on random and real masks.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

ZS_TABLE = np.array([
    0, 0, 0, 1, 0, 0, 1, 3, 0, 0, 3, 1, 1, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 3, 0, 3, 3,
    0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 2, 2,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 3, 0, 2, 0,
    0, 0, 3, 1, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 1, 3, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 1, 0, 0, 0, 0, 2, 2, 0, 0, 2, 0, 0, 0,
], dtype=np.uint8)


@jit
def _code(img, p, W):
    return (img[p - W - 1] + 2 * img[p - W] + 4 * img[p - W + 1] + 8 * img[p + 1] + 16 * img[p + W + 1]
            + 32 * img[p + W] + 64 * img[p + W - 1] + 128 * img[p - 1])


@jit
def thin_zhang(img, W, table):
    """Thin ``img`` in place; returns the number of iterations run.

    Parameters
    ----------
    img : (H * W,) uint8, a 2D 0/1 image padded with one zero pixel on every side, flattened.
    W : int, the padded width.
    table : (256,) uint8, :data:`ZS_TABLE`.

    Notes
    -----
    Iterations of two parallel sub-passes (first removes table values 1 and 3, second 2 and
    3) until an iteration removes nothing. Does not check the zero border.
    """
    n = img.shape[0]
    fg = np.flatnonzero(img)
    cand = np.empty(fg.shape[0], np.int64)
    nc = 0
    for k in range(fg.shape[0]):  # pixels with a background neighbour
        if _code(img, fg[k], W) != 255:
            cand[nc] = fg[k]
            nc += 1
    cand = cand[:nc].copy()
    inq = np.zeros(n, np.uint8)
    dele = np.empty(max(nc, 1), np.int64)
    iters = 0
    while True:
        iters += 1
        removed_any = False
        for pass_num in range(2):
            want = 1 if pass_num == 0 else 2
            nd = 0
            nkeep = 0
            if dele.shape[0] < cand.shape[0]:
                dele = np.empty(cand.shape[0], np.int64)
            keep = np.empty(cand.shape[0], np.int64)
            for k in range(cand.shape[0]):
                p = cand[k]
                if not img[p]:
                    continue
                v = table[_code(img, p, W)]
                if v == 3 or v == want:
                    dele[nd] = p
                    nd += 1
                elif v != 0:
                    keep[nkeep] = p  # removable in the other sub-pass: look again
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
