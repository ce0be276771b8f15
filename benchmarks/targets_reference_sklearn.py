"""Reference for bench_targets.py: a prediction's ink-target card computed the way ScrollGT does.

float64 pixels (PNG / 255), the label binarised at > 127, every pixel scored (no mask.png),
scikit-learn's average_precision_score and roc_auc_score, and 19 thresholded F1 passes over
numpy.linspace(0.05, 0.95, 19). Prints the card as JSON. (Written for this benchmark from
ScrollGT's metric definitions; no code copied.)

    python benchmarks/targets_reference_sklearn.py PRED.png TARGET_DIR
"""

import json
import sys

import numpy as np
from PIL import Image
from sklearn.metrics import average_precision_score, roc_auc_score


def main(pred_path, target_dir):
    Image.MAX_IMAGE_PIXELS = None
    p = np.asarray(Image.open(pred_path).convert("L"), dtype=np.float64) / 255.0
    y = (np.asarray(Image.open(f"{target_dir}/gt_ink.png").convert("L")) > 127).astype(np.uint8)
    p, y = p.ravel(), y.ravel()
    n, pos = y.size, int(y.sum())
    best = (-1.0, None)
    for t in np.linspace(0.05, 0.95, 19):
        pred = (p >= t).astype(np.uint8)
        tp = int(((pred == 1) & (y == 1)).sum())
        fp = int(((pred == 1) & (y == 0)).sum())
        fn = int(((pred == 0) & (y == 1)).sum())
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        if f1 > best[0]:
            best = (f1, float(t))
    ap = float(average_precision_score(y, p))
    card = {"val_f1": best[0], "best_threshold": best[1], "average_precision": ap,
            "ap_prevalence_lift": ap / (pos / n), "roc_auc": float(roc_auc_score(y, p)), "n_pixels": n}
    print(json.dumps(card))


if __name__ == "__main__":
    main(*sys.argv[1:3])
