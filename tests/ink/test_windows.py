"""The ink AUC pass's windows (moved from engine/plan.py by issue 35: the engine knows no family)."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.ink.scan import ink_sub_bands


def test_an_ink_windows_sub_bands_end_on_the_bootstraps_block_rows():
    window, width = (slice(5, 40), slice(0, 8)), 1 << 18  # rows of 2^18 pixels: sub-bands of 4 rows
    assert [w[0].stop for w in ink_sub_bands(window, width)] == [9, 13, 17, 21, 25, 29, 33, 37, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, block_px=10)] == [10, 20, 30, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, tile_rows=16, block_px=10)] == [21, 37, 40]


def test_scan_keeps_the_bootstrap_bins_of_the_kernel():
    from segscore.ink import scan
    from segscore.kernels import blocks

    assert scan.BOOT_BINS == blocks.BOOT_BINS


def test_importing_the_scan_leaves_numba_to_the_loading_thread():
    """ink.scan must not import numba itself: its kernels load on a thread (start_loading) beside the
    first windows' reads, and an import at the top of the module would make the reads wait for it."""
    import subprocess
    import sys

    code = ("import sys, segscore.ink.auc, segscore.ink.scan; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_start_loading_loads_the_kernels_of_a_local_scan_only():
    from segscore.ink.scan import ScanSpec, start_loading
    from segscore.io.sources import ArraySource

    maps = [ArraySource(np.zeros((4, 4), np.uint8)), ArraySource(np.zeros((4, 4), np.float32))]
    assert start_loading(maps, ScanSpec(executor="dask")) is None  # a cluster's workers load their own


def test_the_kernels_loaded_ahead_are_the_ones_the_scan_calls():
    """The head start loads the very specializations the scan and the AUC then call: each kernel
    has one signature per map dtype after a score (none compiled twice for a layout or a type the
    warm-up got wrong), in a fresh process."""
    import subprocess
    import sys

    code = """
import numpy as np
from segscore.ink import auc
rng = np.random.default_rng(0)
ink, mask = rng.random((60, 70)) < 0.3, np.ones((60, 70), bool)
for dtype in (np.uint8, np.float32):
    pred = (rng.random((60, 70)) * 200 + 1).astype(dtype)
    auc._score_array(pred, ink, mask)
    auc.block_bootstrap(pred, ink, mask, draws=20, block_px=16, other=pred)
from segscore.kernels.blocks import block_entries
from segscore.kernels.levels import auc_rows, class_histograms, value_stats
print([len(k.signatures) for k in (class_histograms, value_stats, block_entries, auc_rows)])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[2, 1, 1, 1]"


@pytest.mark.parametrize("dtype", [np.uint8, np.bool_, np.int16, np.float32])
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (5, 3), (37, 11)])
def test_label_codes_match_the_whole_plane_oracle(dtype, shape, monkeypatch):
    from segscore.ink import scan

    rng = np.random.default_rng(len(shape) + shape[0])
    ink = (rng.integers(-2, 3, size=shape)).astype(dtype)
    sup = (rng.integers(-2, 3, size=shape)).astype(dtype)
    want = (np.greater(sup, 0).astype(np.uint8) << 1) | np.greater(ink, 0).astype(np.uint8)
    for block in (1, 7, 64, 1 << 18):  # row blocks of one row, of uneven rows, of the whole plane
        monkeypatch.setattr(scan, "CODES_BLOCK_BYTES", block)
        got = scan.label_codes(ink, sup)
        assert got.dtype == np.uint8 and got.shape == shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("keep_zero", [False, True])
@pytest.mark.parametrize("tile_rows", [None, 7])
def test_uint8_maps_score_alike_by_byte_table_and_by_level_histogram(keep_zero, tile_rows, monkeypatch):
    """A uint8 map (and its control) counted by value and label code (scan.byte_path) gives the
    result of the level-histogram kernel, bootstrap and all."""
    from segscore import api
    from segscore.ink import scan

    rng = np.random.default_rng(11)
    ink = np.repeat(np.repeat(rng.random((12, 15)) < 0.3, 5, 0), 5, 1)
    mask = rng.random(ink.shape) < 0.9
    pred = np.clip(ink * 60 + rng.normal(90, 40, ink.shape), 0, 255).astype(np.uint8)
    pred[rng.random(ink.shape) < 0.05] = 0
    control = rng.integers(0, 256, ink.shape).astype(np.uint8)
    other = np.clip(pred.astype(int) + rng.integers(-30, 30, ink.shape), 0, 255).astype(np.uint8)
    kwargs = dict(truth=ink, pred=pred, mask=mask, control=control, keep_zero=keep_zero, tile_rows=tile_rows)
    runs = []
    for byte in (True, False):
        if not byte:
            monkeypatch.setattr(scan, "byte_path", lambda values, q: False)
        # two byte maps share a pass; a third (compared) is counted alone, or paired where the
        # bootstrap's own maps take the level kernel
        runs.append((api.auc(**kwargs), api.auc(**kwargs, bootstrap=50, seed=3),
                     api.auc(**kwargs, compare=other), api.auc(**kwargs, compare=other, bootstrap=40, seed=5)))
    assert runs[0] == runs[1]
