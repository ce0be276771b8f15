"""IndexedView.read with ``combine``: the planes' box read in strips of shared chunk columns gives
what ``combine`` gives on the whole box, decoding every chunk once."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from segscore.io.grid import IndexedView
from segscore.io.readers import open_zarr
from segscore.io.sources import as_source

zarr = pytest.importorskip("zarr")

from segscore.io import zarr_store  # noqa: E402


def _combine(a, b):
    return (2 * (np.asarray(b) > 3) + (np.asarray(a) > 5)).astype(np.uint8)


def _plane(tmp_path, name, data, chunks):
    if chunks is None:
        return as_source(data)
    zarr.create_array(str(tmp_path / name), shape=data.shape, dtype=data.dtype, chunks=chunks,
                      zarr_format=3)[...] = data
    return open_zarr(tmp_path / name)


@pytest.mark.parametrize("chunks_a, chunks_b", [((9, 7), (9, 7)), ((9, 7), (5, 14)), ((9, 7), (9, 10)),
                                                ((9, 7), None), (None, None)])
def test_combined_strips_equal_the_whole_box(tmp_path, chunks_a, chunks_b, monkeypatch):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 10, (40, 90)).astype(np.uint8)
    b = rng.integers(0, 10, (40, 90)).astype(np.uint8)
    view = IndexedView([_plane(tmp_path, "a.zarr", a, chunks_a), _plane(tmp_path, "b.zarr", b, chunks_b)],
                       np.sort(rng.integers(0, 40, 55)), np.sort(rng.integers(0, 90, 130)))
    decoded = Counter()
    read_chunk = zarr_store.ChunkBook._read_chunk

    def spy(self, array, layout, plan, coords):
        decoded[(self.name, tuple(coords))] += 1
        return read_chunk(self, array, layout, plan, coords)

    monkeypatch.setattr(zarr_store.ChunkBook, "_read_chunk", spy)
    for _ in range(25):
        y0, x0 = rng.integers(0, 55), rng.integers(0, 130)
        window = (slice(y0, rng.integers(y0, 56)), slice(x0, rng.integers(x0, 131)))
        (pa, pb), r, c = view.read(window)
        want = _combine(pa, pb)
        decoded.clear()
        got, r2, c2 = view.read(window, combine=_combine)
        np.testing.assert_array_equal(r, r2)
        np.testing.assert_array_equal(c, c2)
        assert got.dtype == np.uint8 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert all(n == 1 for n in decoded.values()), decoded  # every chunk decoded once
