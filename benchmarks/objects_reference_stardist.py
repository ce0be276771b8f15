"""The stardist side of bench_objects.py as a whole process: read two .npy label images and
run ``stardist.matching.matching`` over the nine IoU thresholds 0.5 ... 0.9."""

import sys

import numpy as np
from stardist.matching import matching

truth, pred = np.load(sys.argv[1]), np.load(sys.argv[2])
stats = matching(truth, pred, thresh=[round(0.5 + 0.05 * k, 2) for k in range(9)])
print(" ".join(str(s.tp) for s in stats))
