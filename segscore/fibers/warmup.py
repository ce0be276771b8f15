"""The fibers family's warm-up: what ``segscore fibers`` and ``fibers-target`` run, on a tiny cube
in a temporary folder: a target built from the package's sample tracing (``fibers-target``,
whose floors label the mask), and int32 labels scored against a target whose floors are
recomputed (the labelling, grow and run kernels, for the int32 and uint8 labels scoring sees:
every label volume reaches the kernels as a read-only view, so one compiled version per dtype).
The registry (:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np


def warm() -> None:
    from segscore.fibers.build import build_target
    from segscore.fibers.card import _score_fibers as score_fibers  # not the older public name (it warns)
    from segscore.io import samples

    rng = np.random.default_rng(5)
    shape = (8, 8, 8)
    with tempfile.TemporaryDirectory(prefix="segscore-warm-") as tmp:
        d = Path(tmp)
        samples.fiber_target(d / "target", samples.random_fibers(rng, shape, 3), np.ones(shape, bool))
        score_fibers(str(d / "target"), (rng.random(shape) < 0.2).astype(np.int32))
        (d / "nml").mkdir()
        (d / "nml" / f"{samples.NML_CUBE}.nml").write_text(samples.nml_text(samples.NML_FIBERS, samples.NML_ORIGIN))
        np.save(d / "mask.npy", samples.nml_mask())
        build_target(d / "nml", d / "mask.npy", d / "built")
