"""How a map's values become 65,536 integer levels (kit-auc's rules, exactly).

- uint8 and uint16 maps are scored as they are.
- Any other dtype is scaled once for the whole map. A map whose finite values all lie in
  0..65535 is read as 0..1 (x 65535) when its maximum is at most 1, as 0..255 (x 257) when
  its maximum is at most 255, and as 0..65535 (x 1) above that: level =
  ``clip(rint(x * scale), 0, 65535)`` in float64.
- A map with a value below 0 or above 65535 (logits, signed values), or one whose levels on
  that scale number fewer than 256 (``MIN_FLOAT_LEVELS``, counted over every finite pixel of
  the whole map), is stretched from its minimum to its maximum instead:
  ``rint((x - min) * (65535 / (max - min)))``. A constant map then ties everywhere.
- NaN or infinite values anywhere are refused.

The bootstrap bins a level as ``level * 1023 // top`` with ``top`` 255 for a uint8 map and
65535 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segscore.errors import ScoreError

N_LEVELS = 65536
MIN_FLOAT_LEVELS = 256


@dataclass(frozen=True)
class Quantizer:
    """The level rule of one map: passthrough, or ``clip(rint((x - offset) * scale))``."""

    passthrough: bool
    offset: float = 0.0
    scale: float = 1.0
    top: int = 65535
    rule: str = ""

    def levels(self, values) -> np.ndarray:
        """Levels (int64) of an in-memory array, with NumPy: the oracle the kernels match."""
        v = np.asarray(values)
        if self.passthrough:
            return v.astype(np.int64)
        return np.clip(np.rint((v.astype(np.float64) - self.offset) * self.scale), 0, 65535).astype(np.int64)


@dataclass
class MapStats:
    """What the quantization rule needs to know of a whole map."""

    lo: float = np.inf
    hi: float = -np.inf
    nonfinite: int = 0
    finite: int = 0
    occupancy: np.ndarray | None = None  # (3, 65536) uint8: levels on the x65535, x257, x1 scales

    def merge(self, other: "MapStats") -> "MapStats":
        occ = other.occupancy if self.occupancy is None else (
            self.occupancy if other.occupancy is None else self.occupancy | other.occupancy)
        return MapStats(min(self.lo, other.lo), max(self.hi, other.hi), self.nonfinite + other.nonfinite,
                        self.finite + other.finite, occ)


#: dtypes the kernels are compiled for; any other map is converted tile by tile (exactly, to float64)
KERNEL_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32), np.dtype(np.float64))


def kernel_array(values) -> np.ndarray:
    """A C-contiguous window in one of ``KERNEL_DTYPES`` (few compiled variants, one layout)."""
    v = np.asarray(values)
    if v.dtype not in KERNEL_DTYPES:
        v = v.astype(np.float32 if v.dtype.kind == "b" or v.dtype.itemsize == 1 else np.float64)
    return np.ascontiguousarray(v)


def tile_stats(values: np.ndarray) -> MapStats:
    """Statistics of one window (the kernel ``value_stats``)."""
    from segscore.kernels.levels import value_stats

    occ = np.zeros((3, N_LEVELS), np.uint8)
    values = kernel_array(values)
    if values.ndim != 2:
        values = values.reshape(1, -1)
    lo, hi, bad, good = value_stats(values, occ[0], occ[1], occ[2])
    return MapStats(float(lo), float(hi), int(bad), int(good), occ)


def needs_stats(dtype) -> bool:
    """Whether a map of this dtype needs a statistics pass before it can be quantized."""
    return np.dtype(dtype) not in (np.dtype(np.uint8), np.dtype(np.uint16))


def quantizer_for(dtype, stats: MapStats | None = None, *, name: str = "the map") -> Quantizer:
    """The rule for a map of ``dtype`` with whole-map ``stats`` (None for uint8 and uint16)."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return Quantizer(True, top=255, rule="uint8 as is")
    if dtype == np.uint16:
        return Quantizer(True, top=65535, rule="uint16 as is")
    if stats is None:
        raise ValueError(f"a {dtype} map needs its statistics to be quantized")
    if stats.nonfinite:
        raise ScoreError(f"{name}: the map holds {stats.nonfinite} NaN or infinite values; replace them "
                         f"(with 0 for no prediction) before scoring")
    if stats.finite == 0:
        return Quantizer(False, 0.0, 0.0, rule="empty map")
    lo, hi = stats.lo, stats.hi
    if lo >= 0.0 and hi <= 65535.0:
        if hi <= 1.0:
            which, scale, label = 0, 65535.0, "0..1"
        elif hi <= 255.0:
            which, scale, label = 1, 257.0, "0..255"
        else:
            which, scale, label = 2, 1.0, "0..65535"
        n_levels = int(stats.occupancy[which].sum()) if stats.occupancy is not None else N_LEVELS
        if n_levels >= MIN_FLOAT_LEVELS:
            return Quantizer(False, 0.0, scale, rule=f"{dtype} on its {label} scale")
    if hi > lo:
        return Quantizer(False, lo, 65535.0 / (hi - lo), rule=f"{dtype} stretched from {lo:.9g} to {hi:.9g}")
    return Quantizer(False, lo, 0.0, rule=f"constant {dtype} map: every pixel ties")


def quantize_values(values) -> tuple[np.ndarray, Quantizer]:
    """Levels of an in-memory array under the whole-array rule (for ``auc_scores``)."""
    v = np.asarray(values)
    stats = tile_stats(v.reshape(1, -1)) if needs_stats(v.dtype) else None
    q = quantizer_for(v.dtype, stats, name="the scores")
    return q.levels(v), q
