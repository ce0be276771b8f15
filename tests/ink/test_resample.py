"""The bootstrap's resampling: exact integer sums through float64 products, in any chunking."""

import numpy as np
import pytest

from segscore.ink import bootstrap as BS
from segscore.ink.scan import ScanResult, block_table
from segscore.kernels.blocks import BOOT_BINS


def random_result(rng, n_grid, paired, n_entries=400):
    nkeys = (4 if paired else 2) * BOOT_BINS
    ids = rng.choice(n_grid, size=max(2, n_grid // 3), replace=False)
    block_ids = rng.choice(ids, size=n_entries).astype(np.int64)  # duplicates: blocks split over tiles
    keys = rng.integers(0, nkeys, n_entries).astype(np.int32)
    keys[: n_entries // 4] = rng.integers(0, BOOT_BINS, n_entries // 4)  # every set has ink
    keys[n_entries // 4: n_entries // 2] = BOOT_BINS + rng.integers(0, BOOT_BINS, n_entries // 4)
    if paired:
        keys[n_entries // 2: 3 * n_entries // 4] = 2 * BOOT_BINS + rng.integers(0, BOOT_BINS, n_entries // 4)
    counts = rng.integers(1, 5000, n_entries).astype(np.int64)
    return ScanResult(np.zeros((1, 2, 65536), np.int64), np.zeros(1, np.int64), block_ids, keys, counts,
                      n_grid=n_grid)


def oracle(result, paired, draws, seed):
    """Dense int64 block histograms in raster order, the documented draws, exact AUCs."""
    nkeys = (4 if paired else 2) * BOOT_BINS
    ids = np.unique(result.block_ids)
    dense = np.zeros((ids.size, nkeys), np.int64)
    np.add.at(dense, (np.searchsorted(ids, result.block_ids), result.block_keys), result.block_counts)
    rng = np.random.default_rng(seed)
    B = ids.size
    hists = np.array([np.bincount(rng.integers(0, B, B), minlength=B) @ dense for _ in range(draws)])
    a = BS.auc_of_histograms(hists[:, :BOOT_BINS], hists[:, BOOT_BINS:2 * BOOT_BINS])
    b = BS.auc_of_histograms(hists[:, 2 * BOOT_BINS:3 * BOOT_BINS], hists[:, 3 * BOOT_BINS:]) if paired else None
    return ids, a, b


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("batch_bytes", [None, 3000, 100_000])
def test_resample_equals_the_int64_oracle_in_any_chunking(monkeypatch, paired, batch_bytes):
    if batch_bytes:  # many draw batches and many dense chunks of blocks
        monkeypatch.setattr(BS, "_BATCH_BYTES", batch_bytes)
    rng = np.random.default_rng(5 + paired)
    res = random_result(rng, 300, paired)
    table = block_table(res, paired)
    ids, want_a, want_b = oracle(res, paired, 45, seed=7)
    np.testing.assert_array_equal(table.block_ids, ids)
    got_a, got_b = BS.resample(table, 45, 7, paired)
    np.testing.assert_array_equal(got_a, want_a)
    if paired:
        np.testing.assert_array_equal(got_b, want_b)


def test_block_numbering_by_lookup_equals_numbering_by_sort(monkeypatch):
    rng = np.random.default_rng(11)
    res = random_result(rng, 5000, False)
    dense = block_table(res, False)
    monkeypatch.setattr("segscore.ink.scan._DENSE_GRID_MAX", 10)
    by_sort = block_table(res, False)
    np.testing.assert_array_equal(dense.block_ids, by_sort.block_ids)
    np.testing.assert_array_equal(dense.rows, by_sort.rows)
    np.testing.assert_array_equal(dense.block_ids[dense.rows], res.block_ids)
