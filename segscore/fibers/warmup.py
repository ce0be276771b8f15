"""The fibers family's warm-up: the floors' labelling kernels on a tiny cube. The registry
(:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.fibers import floors

    mask = np.zeros((4, 6, 6), bool)
    mask[1:3, 1:5, 1:5] = True
    for fn in (floors.connected_components, floors.voxel_instances, floors.single_instance):
        fn(mask)
