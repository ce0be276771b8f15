"""ScrollGT's fiber scoring algorithm, written plainly (whole-volume scipy EDT with indices).

Not ScrollGT's code (ScrollGT is not on PyPI): the slow reference from the test suite
(``tests/fibers/helpers.py``), run as a process so a benchmark can time it beside segscore.

    PYTHONPATH=. python benchmarks/fibers_reference_scipy.py LABELS.npy TARGET
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fibers.helpers import fiber_list, score_reference, scored  # noqa: E402


def main(labels_path, target):
    with np.load(Path(target) / "skeleton.npz", allow_pickle=False) as z:
        fibers = fiber_list(z["coords"], z["edges"], z["fiber_offsets"], z["edge_offsets"])
    labels = np.load(labels_path)
    row = score_reference(scored(fibers, labels.shape), labels, tolerance=2.0)
    print(json.dumps({k: (float(v) if v is not None else None) for k, v in row.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
