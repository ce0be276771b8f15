"""The hand-written NumPy way to score map + control, as a user would without segscore.

tifffile.imread each map, read labels and mask at level 2 with zarr, index them onto the map by
nearest neighbour (np.ix_, kit's pixel-centre grid), bincount each class, compute the AUC.
With --sklearn, the same pixels go through scikit-learn's roc_auc_score instead.
Prints one line per map: the AUC.
"""

import sys

import numpy as np
import tifffile
import zarr


def main(argv):
    sklearn = "--sklearn" in argv
    args = [a for a in argv if a != "--sklearn"]
    map_path, ctrl_path, labels, mask = args[:4]
    lab = zarr.open_group(labels, mode="r")["2"][:]
    msk = zarr.open_group(mask, mode="r")["2"][:]
    for path in (map_path, ctrl_path):
        pred = tifffile.imread(path)
        h, w = pred.shape
        rows = np.minimum(((np.arange(h) + 0.5) * lab.shape[0] / h).astype(np.int64), lab.shape[0] - 1)
        cols = np.minimum(((np.arange(w) + 0.5) * lab.shape[1] / w).astype(np.int64), lab.shape[1] - 1)
        ink = lab[np.ix_(rows, cols)] > 0
        sup = msk[np.ix_(rows, cols)] > 0
        use = sup & (pred != 0)
        if sklearn:
            from sklearn.metrics import roc_auc_score

            print(roc_auc_score(ink[use], pred[use]))
            continue
        n = 256 if pred.dtype == np.uint8 else 65536
        hi = np.bincount(pred[use & ink], minlength=n).astype(np.float64)
        hb = np.bincount(pred[use & ~ink], minlength=n).astype(np.float64)
        below = np.cumsum(hb) - hb
        print(((hi * below).sum() + 0.5 * (hi * hb).sum()) / (hi.sum() * hb.sum()))


if __name__ == "__main__":
    main(sys.argv[1:])
