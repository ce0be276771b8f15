"""Sources opened from a path pickle as the path (segscore.io.sources.by_path): a dask worker
reopens the file and reads its own windows; nothing of the array travels. Chunk counts read by
the copies are added back to the original."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from segscore.io import sources
from segscore.io.readers import open_image, open_labels, open_zarr


def _zarr(path, data, chunks):
    import zarr

    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, fill_value=0,
                            zarr_format=3)
    arr[...] = data
    return str(path)


@pytest.mark.parametrize("kind", ["zarr", "tif", "tif-compressed", "npy", "npy-fortran"])
def test_a_source_opened_from_a_path_pickles_as_its_path(tmp_path, kind):
    import tifffile

    data = np.random.default_rng(0).integers(0, 9, (300, 200)).astype(np.uint16)
    path = tmp_path / {"zarr": "a.zarr", "npy": "a.npy", "npy-fortran": "a.npy"}.get(kind, "a.tif")
    if kind == "zarr":
        _zarr(path, data, (64, 64))
    elif kind == "tif":
        tifffile.imwrite(path, data)
    elif kind == "tif-compressed":
        tifffile.imwrite(path, data, compression="zlib", tile=(64, 64))
    else:
        np.save(path, np.asfortranarray(data) if kind == "npy-fortran" else data)
    with open_labels(path) as src:
        blob = pickle.dumps(src)
        assert len(blob) < 2000 < data.nbytes  # the recipe, not the voxels
        before = sources.reopen_count()
        copy, again = pickle.loads(blob), pickle.loads(blob)
        assert sources.reopen_count() == before  # unpickled, not opened (a scheduler reads nothing)
        window = (slice(17, 131), slice(3, 190))
        np.testing.assert_array_equal(copy.read(window), data[window])
        assert again.read(window).tobytes() == copy.read(window).tobytes()
        # one reopening per process and recipe, whatever number of copies arrive
        assert sources.reopen_count() - before <= 1
        assert copy.name == src.name


def test_an_array_given_in_memory_still_pickles_as_itself():
    src = sources.as_source(np.arange(12).reshape(3, 4))
    assert getattr(src, "reopen", None) is None
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(src)).read_all(), np.arange(12).reshape(3, 4))


def test_chunk_counts_of_the_copies_come_back_to_the_original(tmp_path):
    data = np.zeros((40, 40), np.uint8)
    data[:16] = 1  # chunks of rows 16..39 stay absent
    path = _zarr(tmp_path / "a.zarr", data, (8, 8))
    src = open_zarr(path)
    assert src.absent_chunks() == (0, 0)
    copy = pickle.loads(pickle.dumps(src))
    copy.read((slice(0, 40), slice(0, 40)))
    counts = sources.chunk_counts()
    assert src.reopen.token in counts
    assert src.absent_chunks() == (0, 0)  # nothing read here
    sources.absorb_counts(sources.merge_counts(counts, counts))  # twice the same keys count once
    assert src.absent_chunks() == (15, 25)
    assert src.warnings() == [f"{src.name}: 15 of 25 chunks absent, read as the fill value 0"]
    assert sources.merge_counts({}, counts) == counts


def test_a_relative_path_is_reopened_where_it_was_opened(tmp_path, monkeypatch):
    np.save(tmp_path / "a.npy", np.arange(6, dtype=np.int32))
    monkeypatch.chdir(tmp_path)
    src = open_image("a.npy")
    monkeypatch.chdir("/")
    blob = pickle.dumps(src)
    np.testing.assert_array_equal(sources.Reopen(**{**vars(pickle.loads(blob).reopen), "token": "new"}).open()
                                  .read_all(), np.arange(6))
