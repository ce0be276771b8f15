"""``kernels.surfels.corner_codes`` against a NumPy oracle: the code of each corner from the
eight voxels around it, on random masks, boxes and dtypes."""

import numpy as np
import pytest

from segscore.kernels.surfels import corner_codes


def _oracle(mask, lo, grid_shape):
    """Codes of the corners of the box of ``grid_shape - 1`` voxels from ``lo`` (voxels outside
    the box or the volume are background), and the number of surface corners."""
    box = mask[tuple(slice(l, l + m - 1) for l, m in zip(lo, grid_shape))] != 0
    pad = np.zeros(tuple(m + 1 for m in grid_shape), np.int64)
    pad[tuple(slice(1, 1 + n) for n in box.shape)] = box
    m0, m1, m2 = grid_shape
    codes = np.zeros(grid_shape, np.int64)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                codes += pad[i:i + m0, j:j + m1, k:k + m2] << (7 - (4 * i + 2 * j + k))
    return codes.astype(np.uint8), int(((codes != 0) & (codes != 255)).sum())


@pytest.mark.parametrize("seed", range(12))
def test_corner_codes_equal_the_oracle(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 9, 3))
    mask = rng.random(shape) < [0.1, 0.5, 0.9][seed % 3]
    if seed % 2:
        mask = mask.astype(np.uint8) * rng.integers(1, 255, shape).astype(np.uint8)  # non-zero: foreground
    if seed < 4:  # the whole volume, as corner_grid asks
        lo, grid = (0, 0, 0), tuple(n + 1 for n in shape)
    else:  # a box inside, or running past the volume's end
        lo = tuple(int(rng.integers(0, n)) for n in shape)
        grid = tuple(int(rng.integers(1, n - l + 3)) + 1 for n, l in zip(shape, lo))
    codes = np.full(grid, 77, np.uint8)
    n = corner_codes(mask, *lo, codes)
    want, want_n = _oracle(mask, lo, grid)
    np.testing.assert_array_equal(codes, want)
    assert n == want_n


def test_corner_codes_of_one_voxel():
    mask = np.zeros((1, 1, 1), bool)
    mask[0, 0, 0] = True
    codes = np.empty((2, 2, 2), np.uint8)
    assert corner_codes(mask, 0, 0, 0, codes) == 8
    # the corner (a, b, c) sees the voxel as its (i, j, k) = (1 - a, 1 - b, 1 - c) neighbour
    assert [int(codes[a, b, c]) for a in range(2) for b in range(2) for c in range(2)] == \
        [1 << (7 - (4 * (1 - a) + 2 * (1 - b) + (1 - c))) for a in range(2) for b in range(2) for c in range(2)]
