"""Float prediction maps that 65,536 levels would rank wrongly, made the same way in any venv.

NumPy only (``benchmarks/scrollgt_fixtures.py`` imports this module from ScrollGT's scratch venv
to record ScrollGT's own ``score_prediction`` on these maps): every map is built from
``numpy.random.default_rng`` streams and IEEE multiplications and additions, never ``np.power``
or other library maths, so it is the same bit for bit wherever it is made (``digest`` checks).
"""

from __future__ import annotations

import hashlib

import numpy as np

#: the small target the cases are scored on (tests.targets.helpers.make_target's arguments)
SHAPE = (72, 60)
TARGET_SEED = 11
CASES = ("narrow", "skewed", "float32", "tied", "tiny", "subnormal", "slack", "uniform_floor")


def base(ink: np.ndarray, seed: int = 1) -> np.ndarray:
    """A float64 map in [0, 1) that reads the ink (0.3 of signal)."""
    rng = np.random.default_rng(seed)
    return rng.random(ink.shape) * 0.7 + 0.3 * ink


def case(name: str, ink: np.ndarray) -> np.ndarray:
    """The map of case ``name`` for a label ``ink`` (bool array)."""
    p = base(ink)
    if name == "narrow":  # every value within 1e-6 of 0.5: one level of 65,536
        return 0.5 + (p - 0.5) * 2e-6
    if name == "skewed":  # p**8: the mass near 0
        p2 = p * p
        p4 = p2 * p2
        return p4 * p4
    if name == "float32":
        return p.astype(np.float32)
    if name == "tied":  # heavily tied: 9 values, plus a few distinct ones between them
        t = np.floor(p * 8.0) / 8.0
        rng = np.random.default_rng(7)
        few = rng.random(ink.shape) < 0.02
        return np.where(few, p, t)
    if name == "tiny":  # values around 1e-300
        return p * 1e-300
    if name == "subnormal":  # below the smallest normal double
        return p * 1e-310
    if name == "slack":  # [-1e-6, 1 + 1e-6]: ScrollGT clips, which ties the ends at 0 and 1
        rng = np.random.default_rng(9)
        q = p * (1.0 + 2e-6) - 1e-6
        ends = rng.random(ink.shape)
        q = np.where(ends < 0.05, -1e-6, q)
        q = np.where(ends > 0.95, 1.0 + 1e-6, q)
        return q
    if name == "uniform_floor":  # the uniform_random floor's map (seed 0)
        return np.random.default_rng(0).random(ink.shape)
    raise KeyError(name)


def digest(a: np.ndarray) -> str:
    """sha256 of a map's dtype, shape and bytes (C order)."""
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def real_cases(ink: np.ndarray) -> dict:
    """Maps on the real 4096^2 target: a shifted, noisy copy of its label; narrow and skewed."""
    rng = np.random.default_rng(0)
    p = np.clip(np.roll(ink, (31, -8), axis=(0, 1)) * 0.4 + rng.random(ink.shape) * 0.6, 0, 1)
    p2 = p * p
    p4 = p2 * p2
    return {"real_narrow": 0.5 + (p - 0.5) * 2e-6, "real_skewed": p4 * p4}
