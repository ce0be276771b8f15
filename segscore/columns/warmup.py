"""The column targets' warm-up: their band passes on a tiny two-column target, for uint8 and
float32 maps, the floors too (float maps, ranked exactly). The registry (:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.columns.score import ColumnTarget, score_columns_array
    from segscore.metrics.exact import warm_kernels

    col = {"col": 1, "gx0": 1, "gx1": 6, "text_band": [1, 11], "transcription": "text"}
    tgt = ColumnTarget("<warm-up>", {"line_pitch_range": [2, 3]}, [col, dict(col, col=2, gx0=9, gx1=14)],
                       np.ones((12, 16), np.uint8), (12, 16), "warm-up")
    for dtype in (np.uint8, np.float32):  # the float map with its floors (their exact ranking's kernels)
        score_columns_array((np.random.default_rng(0).random((12, 16)) * 0.9).astype(dtype), tgt,
                            floors=dtype == np.float32)
    warm_kernels()  # a full-size map's collecting passes, which the tiny map above never needs
