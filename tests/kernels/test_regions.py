"""box_rows against a NumPy oracle, on random bands, boxes and masks."""

import numpy as np
import pytest

from segscore.kernels.regions import box_rows


def oracle(values, row0, col0, valid, boxes, kinds, passthrough, vdiv, maxh):
    k = len(boxes)
    row_sum = np.zeros((k, maxh))
    row_cnt = np.zeros((k, maxh), np.int64)
    hist = np.zeros((2, 65536), np.int64)
    H = row0 + values.shape[0]
    for b, (y0, y1, x0, x1) in enumerate(boxes):
        for gy in range(max(y0, row0), min(y1, H)):
            v = values[gy - row0, x0 - col0:x1 - col0].astype(np.float64)
            ok = valid[gy, x0:x1] > 0 if valid.size else np.ones(v.size, bool)
            row_sum[b, gy - y0] += (v[ok] / vdiv).sum()
            row_cnt[b, gy - y0] += ok.sum()
            if kinds[b] >= 0:
                lev = v[ok].astype(np.int64) if passthrough else np.clip(np.rint(v[ok] * 65535), 0, 65535).astype(np.int64)
                np.add.at(hist[kinds[b]], lev, 1)
    return row_sum, row_cnt, hist


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_box_rows_matches_oracle(seed, dtype):
    rng = np.random.default_rng(seed)
    H, W = 40, 57
    valid = (rng.random((H, W)) < 0.7).astype(np.uint8) if seed % 2 else np.zeros((0, 0), np.uint8)
    boxes = []
    for _ in range(int(rng.integers(0, 5))):
        y0 = int(rng.integers(0, H)); y1 = int(rng.integers(y0, H + 1))
        x0 = int(rng.integers(0, W)); x1 = int(rng.integers(x0, W + 1))
        boxes.append((y0, y1, x0, x1))
    boxes = np.array(boxes, np.int64).reshape(-1, 4)
    kinds = rng.integers(-1, 2, len(boxes)).astype(np.int64)
    maxh = max([b[1] - b[0] for b in boxes] + [1])
    full = rng.integers(0, 256, (H, W)).astype(dtype) if dtype == np.uint8 else rng.random((H, W)).astype(dtype)
    passthrough = dtype == np.uint8
    vdiv = 255.0 if passthrough else 1.0
    want = oracle(full, 0, 0, valid, boxes, kinds, passthrough, vdiv, maxh)
    got_sum = np.zeros((len(boxes), maxh)); got_cnt = np.zeros((len(boxes), maxh), np.int64)
    got_hist = np.zeros((2, 65536), np.int64)
    r = 0
    for step in (1, 3, 7, 100):  # bands of varied height, non-contiguous slices included
        if r >= H:
            break
        band = full[r:r + step]
        box_rows(band, r, 0, valid, boxes, kinds, passthrough, vdiv, got_sum, got_cnt, got_hist)
        r += step
    if r < H:
        box_rows(full[r:], r, 0, valid, boxes, kinds, passthrough, vdiv, got_sum, got_cnt, got_hist)
    np.testing.assert_allclose(got_sum, want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got_cnt, want[1])
    np.testing.assert_array_equal(got_hist, want[2])


def test_box_rows_column_offset_and_empty():
    values = np.arange(12, dtype=np.float64).reshape(3, 4) / 12
    boxes = np.array([[1, 3, 11, 13]], np.int64)  # grid columns 11..12 are band columns 1..2
    s = np.zeros((1, 2)); c = np.zeros((1, 2), np.int64); h = np.zeros((2, 65536), np.int64)
    box_rows(values, 0, 10, np.zeros((0, 0), np.uint8), boxes, np.array([1]), False, 1.0, s, c, h)
    np.testing.assert_allclose(s[0], [(5 + 6) / 12, (9 + 10) / 12])
    assert c.tolist() == [[2, 2]] and h[1].sum() == 4
    box_rows(values, 0, 10, np.zeros((0, 0), np.uint8), np.zeros((0, 4), np.int64), np.zeros(0, np.int64),
             False, 1.0, np.zeros((0, 1)), np.zeros((0, 1), np.int64), h)
