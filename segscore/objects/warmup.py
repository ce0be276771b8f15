"""The objects family's warm-up: the contingency, matching and surface kernels on tiny 2D and 3D
label images of the integer dtypes label images have. The registry (:mod:`segscore.families`)
points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.objects.metrics import _score_segmentation as score_segmentation

    rng = np.random.default_rng(0)
    for shape in ((8, 8), (3, 8, 8)):
        for dtype in (np.uint8, np.uint16, np.int32, np.uint32, np.int64):
            t = rng.integers(0, 4, shape).astype(dtype)
            score_segmentation(t, t)
        score_segmentation(t, t, surface=True, per_object=True)  # the surface kernels (--surface)
