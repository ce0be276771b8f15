"""The curvilinear family's warm-up: every metric of ``curve`` (the audit's too: apls,
junction_f1, hd95) and every operator of ``perturb`` (``profile`` applies all five) on a tiny cross. The registry (:mod:`segscore.families`) points at
:func:`warm`; the audit's workers run it before their first case."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.curvilinear.operators import OPERATORS, perturb
    from segscore.curvilinear.scoring import _score as score
    from segscore.metrics.surface import warm_nearest

    m = np.zeros((24, 24), bool)
    m[12, 2:22] = True
    m[2:22, 12] = True
    score(m, m, all_metrics=True)  # the audit's metrics too (apls, junction_f1, hd95)
    warm_nearest()  # the k-d tree step, which the tiny masks' distances never reach
    thick = m.copy()
    thick[11, 2:22] = True  # a two-pixel arm: the radius and boundary operators need width
    for op in OPERATORS:  # perturb's and profile's operators (their painting and distance kernels)
        perturb(thick, op, 0.5, seed=0, prune_px=1)
