"""The ink AUC pass's windows (moved from engine/plan.py by issue 35: the engine knows no family)."""

from __future__ import annotations

from segscore.ink.scan import ink_sub_bands


def test_an_ink_windows_sub_bands_end_on_the_bootstraps_block_rows():
    window, width = (slice(5, 40), slice(0, 8)), 1 << 18  # rows of 2^18 pixels: sub-bands of 4 rows
    assert [w[0].stop for w in ink_sub_bands(window, width)] == [9, 13, 17, 21, 25, 29, 33, 37, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, block_px=10)] == [10, 20, 30, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, tile_rows=16, block_px=10)] == [21, 37, 40]
