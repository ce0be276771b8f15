"""Record ScrollGT's own ``score_prediction`` on the float maps of ``tests/targets/float_cases.py``.

ScrollGT is not on PyPI: clone its snapshot and install it into a scratch venv with its
dependencies (numpy, scipy, scikit-learn, pillow), then run this script with that venv's Python:

    python -m venv /work/scratch/floatrank/venv
    /work/scratch/floatrank/venv/bin/pip install numpy scipy scikit-learn pillow
    /work/scratch/floatrank/venv/bin/pip install --no-deps -e /work/scratch/floatrank/scrollgt
    /work/scratch/floatrank/venv/bin/python benchmarks/scrollgt_fixtures.py [--real DATA/scrollgt]

It writes ``tests/data/scrollgt/score_prediction.json``: for each case the map's digest and the
metrics ScrollGT returns (its card, ``metrics_by_threshold`` dropped by ScrollGT itself). The
small target is made by ``tests.targets.helpers.make_target``; ``--real`` adds two maps on the
real 4,096^2 target ``scroll1_20231210121321``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.targets import float_cases as FC  # noqa: E402
from tests.targets.helpers import make_target  # noqa: E402

OUT = REPO / "tests" / "data" / "scrollgt" / "score_prediction.json"
KEYS = ("val_f1", "best_threshold", "f1_at_0.5", "val_f05", "precision", "recall", "pred_positive_rate",
        "average_precision", "ap_prevalence_lift", "roc_auc", "positive_rate", "n_pixels")


def card(pred: np.ndarray, target: Path, tmp: Path, name: str) -> dict:
    from scrollgt.score import score_prediction

    path = tmp / f"{name}.npy"
    np.save(path, pred)
    m = score_prediction(str(path), str(target))["metrics"]
    path.unlink()
    return {"digest": FC.digest(pred), "dtype": str(pred.dtype), "metrics": {k: m[k] for k in KEYS}}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", type=Path, help="the folder holding scroll1_20231210121321")
    args = ap.parse_args(argv)
    import scrollgt
    import sklearn

    out = {"made_by": "benchmarks/scrollgt_fixtures.py with ScrollGT's score_prediction",
           "scrollgt_commit": None, "scikit_learn": sklearn.__version__, "numpy": np.__version__,
           "python": platform.python_version(), "target": {"shape": list(FC.SHAPE), "seed": FC.TARGET_SEED},
           "cases": {}}
    src = Path(scrollgt.__file__).resolve().parents[2]
    head = src / ".git" / "HEAD"
    if head.exists():
        import subprocess

        out["scrollgt_commit"] = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True,
                                                check=False, text=True).stdout.strip() or None
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        folder, ink, _ = make_target(tmp / "t", shape=FC.SHAPE, seed=FC.TARGET_SEED)
        for name in FC.CASES:
            out["cases"][name] = card(FC.case(name, ink), folder, tmp, name)
            print(name, out["cases"][name]["metrics"]["roc_auc"], flush=True)
        if args.real:
            from PIL import Image

            real = args.real / "scroll1_20231210121321"
            ink = np.asarray(Image.open(real / "gt_ink.png").convert("L")) > 127
            for name, pred in FC.real_cases(ink).items():
                out["cases"][name] = card(pred, real, tmp, name)
                print(name, out["cases"][name]["metrics"]["roc_auc"], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
