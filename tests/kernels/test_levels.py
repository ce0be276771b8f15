"""The level kernels against brute-force NumPy oracles."""

import numpy as np
import pytest

from segscore.ink.quantize import Quantizer, kernel_array
from segscore.kernels.levels import BYTE_TABLE, auc_rows, byte_class_counts, class_histograms, label_codes, value_stats

EMPTY = np.zeros((0, 0), np.int32)


def oracle_hist(values, q, keep_zero, codes, ridx, cidx):
    c = codes[np.ix_(ridx, cidx)]
    sup = (c & 2) > 0
    ink = (c & 1) > 0
    zero = values == 0
    use = sup & (keep_zero | ~zero)
    lev = q.levels(values)
    hi = np.bincount(lev[use & ink], minlength=65536)
    hb = np.bincount(lev[use & ~ink], minlength=65536)
    levels = np.where(use, lev, -1)
    return hi, hb, int((sup & zero).sum()), levels


QUANTS = [Quantizer(True, top=255), Quantizer(False, 0.0, 65535.0), Quantizer(False, -3.5, 1234.5),
          Quantizer(False, 2.0, 0.0)]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.uint16])
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (7, 13), (40, 31)])
def test_class_histograms_matches_oracle(dtype, shape):
    rng = np.random.default_rng(hash((np.dtype(dtype).str, shape)) % 2**32)
    h, w = shape
    if np.dtype(dtype).kind == "u":
        values = rng.integers(0, 4 if h < 5 else np.iinfo(dtype).max, size=shape).astype(dtype)
        qs = [Quantizer(True)]
    else:
        values = (rng.random(shape) * rng.choice([1, 300])).astype(dtype)
        values[rng.random(shape) < 0.2] = 0
        qs = QUANTS[1:]
    lh, lw = max(h // 2, 1), max(w // 2, 1)
    codes = rng.integers(0, 4, size=(lh, lw)).astype(np.uint8)
    ridx = np.sort(rng.integers(0, lh, h)).astype(np.int64)
    cidx = rng.integers(0, lw, w).astype(np.int64)
    for q in qs:
        for keep_zero in (False, True):
            hi, hb = np.zeros(65536, np.int64), np.zeros(65536, np.int64)
            out = np.empty(shape, np.int32)
            zeros = class_histograms(values, q.passthrough, q.offset, q.scale, keep_zero, codes, ridx, cidx,
                                     hi, hb, out)
            ohi, ohb, oz, olev = oracle_hist(values, q, keep_zero, codes, ridx, cidx)
            np.testing.assert_array_equal(hi, ohi)
            np.testing.assert_array_equal(hb, ohb)
            assert zeros == oz
            np.testing.assert_array_equal(out, olev)
            # without the levels output, the histograms are the same and accumulate
            zeros2 = class_histograms(values, q.passthrough, q.offset, q.scale, keep_zero, codes, ridx, cidx,
                                      hi, hb, EMPTY)
            assert zeros2 == oz
            np.testing.assert_array_equal(hi, 2 * ohi)


def test_class_histograms_on_a_non_contiguous_window_via_kernel_array():
    rng = np.random.default_rng(1)
    full = rng.random((30, 40)).astype(np.float32)
    window = full[3:25:2, 5:37:3]
    assert not window.flags.c_contiguous
    values = kernel_array(window)
    codes = np.full((window.shape[0], window.shape[1]), 3, np.uint8)
    r = np.arange(window.shape[0], dtype=np.int64)
    c = np.arange(window.shape[1], dtype=np.int64)
    q = Quantizer(False, 0.0, 65535.0)
    hi, hb = np.zeros(65536, np.int64), np.zeros(65536, np.int64)
    class_histograms(values, False, 0.0, 65535.0, True, codes, r, c, hi, hb, EMPTY)
    np.testing.assert_array_equal(hi, np.bincount(q.levels(window).ravel(), minlength=65536))


def test_kernel_array_converts_other_dtypes_exactly():
    a = np.array([[-7, 0, 32767]], np.int16)
    k = kernel_array(a)
    assert k.dtype == np.float64 and np.array_equal(k, a)
    b = np.array([[True, False]])
    assert kernel_array(b).dtype == np.float32
    assert kernel_array(np.array([[1, 2]], np.uint8)).dtype == np.uint8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_value_stats_matches_oracle(dtype):
    rng = np.random.default_rng(3)
    v = (rng.normal(0, 50, (23, 17))).astype(dtype)
    v[0, 0], v[1, 1], v[2, 2] = np.nan, np.inf, -np.inf
    occ = np.zeros((3, 65536), np.uint8)
    lo, hi, bad, good = value_stats(v, occ[0], occ[1], occ[2])
    f = v[np.isfinite(v)].astype(np.float64)
    assert (lo, hi, bad, good) == (f.min(), f.max(), 3, f.size)
    inr = f[(f >= 0) & (f <= 65535)]
    for row, scale in zip(occ, (65535.0, 257.0, 1.0)):
        want = np.zeros(65536, np.uint8)
        want[np.clip(np.rint(inr * scale), 0, 65535).astype(np.int64)] = 1
        np.testing.assert_array_equal(row, want)


def test_value_stats_of_nothing():
    occ = np.zeros((3, 65536), np.uint8)
    lo, hi, bad, good = value_stats(np.zeros((0, 0), np.float32), occ[0], occ[1], occ[2])
    assert (lo, hi, bad, good) == (np.inf, -np.inf, 0, 0) and occ.sum() == 0


def pairwise_auc(ink, bg):
    ink = np.asarray(ink, np.float64)[:, None]
    bg = np.asarray(bg, np.float64)[None, :]
    return ((ink > bg).sum() + 0.5 * (ink == bg).sum()) / (ink.size * bg.size)


def test_auc_rows_equals_the_pairwise_definition_with_many_ties():
    rng = np.random.default_rng(5)
    for trial in range(30):
        n_levels = int(rng.integers(1, 12))
        a = rng.integers(0, n_levels, int(rng.integers(1, 60)))
        b = rng.integers(0, n_levels, int(rng.integers(1, 60)))
        ha = np.bincount(a, minlength=n_levels)[None, :].astype(np.int64)
        hb = np.bincount(b, minlength=n_levels)[None, :].astype(np.int64)
        out = auc_rows(ha, hb, np.empty(1))
        assert out[0] == pytest.approx(pairwise_auc(a, b), abs=1e-15)


def test_auc_rows_is_nan_when_a_class_is_empty():
    z = np.zeros((2, 5), np.int64)
    o = np.ones((2, 5), np.int64)
    out = auc_rows(z, o, np.empty(2))
    assert np.isnan(out).all()
    out = auc_rows(o, z, np.empty(2))
    assert np.isnan(out).all()


@pytest.mark.parametrize("shape", [(1, 1), (3, 70), (41, 9)])
def test_label_codes_match_oracle(shape):
    rng = np.random.default_rng(shape[1])
    for _ in range(5):
        ink = rng.integers(0, 256, shape).astype(np.uint8) * (rng.random(shape) < 0.5)
        sup = rng.integers(0, 256, shape).astype(np.uint8) * (rng.random(shape) < 0.5)
        out = np.full(shape, 9, np.uint8)
        label_codes(ink.astype(np.uint8), sup.astype(np.uint8), out)
        np.testing.assert_array_equal(out, 2 * (sup > 0) + (ink > 0))


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (3, 70), (41, 9), (5, 255)])
def test_byte_class_counts_match_oracle(shape):
    """Every pixel counted once by label code and value (both sub-tables together), for odd and
    even widths, label windows larger than the tile, and repeated calls accumulating."""
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    alone, first, second = (np.zeros(2 * BYTE_TABLE, np.int64) for _ in range(3))
    want, want_other = np.zeros((4, 256), np.int64), np.zeros((4, 256), np.int64)
    for _ in range(3):
        values = rng.integers(0, 256, shape).astype(np.uint8)
        other = rng.integers(0, 256, shape).astype(np.uint8)
        codes = rng.integers(0, 4, (shape[0] + 3, shape[1] + 5)).astype(np.uint8)
        ridx = rng.integers(0, codes.shape[0], shape[0])
        cidx = rng.integers(0, codes.shape[1], shape[1])
        byte_class_counts(values, np.zeros((0, 0), np.uint8), codes, ridx, cidx, alone, np.zeros(0, np.int64))
        byte_class_counts(values, other, codes, ridx, cidx, first, second)  # a pair in one pass
        np.add.at(want, (codes[np.ix_(ridx, cidx)], values), 1)
        np.add.at(want_other, (codes[np.ix_(ridx, cidx)], other), 1)
    for table, expected in ((alone, want), (first, want), (second, want_other)):
        np.testing.assert_array_equal((table[:BYTE_TABLE] + table[BYTE_TABLE:]).reshape(4, 256), expected)


@pytest.mark.parametrize("keep_zero", [False, True])
def test_the_byte_table_folds_to_class_histograms(keep_zero):
    """scan.fold_byte_table turns the counts into exactly class_histograms' histograms and zeros."""
    from segscore.ink import scan

    assert scan.BYTE_TABLE == BYTE_TABLE
    rng = np.random.default_rng(3)
    values = rng.integers(0, 256, (50, 77)).astype(np.uint8)
    values[rng.random(values.shape) < 0.2] = 0
    codes = rng.integers(0, 4, (50, 77)).astype(np.uint8)
    idx_r, idx_c = np.arange(50), np.arange(77)
    hi, hb = np.zeros(65536, np.int64), np.zeros(65536, np.int64)
    z = class_histograms(values, True, 0.0, 1.0, keep_zero, codes, idx_r, idx_c, hi, hb, EMPTY)
    table = np.zeros(2 * BYTE_TABLE, np.int64)
    byte_class_counts(values, np.zeros((0, 0), np.uint8), codes, idx_r, idx_c, table, np.zeros(0, np.int64))
    fi, fb = np.zeros(65536, np.int64), np.zeros(65536, np.int64)
    assert scan.fold_byte_table(table, fi, fb, keep_zero) == z
    np.testing.assert_array_equal(fi, hi)
    np.testing.assert_array_equal(fb, hb)
