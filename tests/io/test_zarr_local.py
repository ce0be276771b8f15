"""The plain-zarr reader against zarr-python, on arrays zarr-python writes."""

import numpy as np
import pytest

from segscore.io import zarr_local
from segscore.io.readers import open_zarr

zarr = pytest.importorskip("zarr")


def write(path, data, fmt, chunks, compressor, separator=None):
    kwargs = {}
    if fmt == 2:
        import numcodecs

        kwargs["compressors"] = None if compressor is None else {
            "zstd": numcodecs.Zstd(level=3), "gzip": numcodecs.GZip(level=1), "blosc": numcodecs.Blosc()}[compressor]
        if separator:
            kwargs["chunk_key_encoding"] = {"name": "v2", "separator": separator}
    else:
        from zarr import codecs

        kwargs["compressors"] = None if compressor is None else {
            "zstd": codecs.ZstdCodec(level=3), "gzip": codecs.GzipCodec(level=1),
            "blosc": codecs.BloscCodec(cname="lz4")}[compressor]
        if separator:
            kwargs["chunk_key_encoding"] = {"name": "default", "separator": separator}
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, zarr_format=fmt,
                            fill_value=7, **kwargs)
    arr[...] = data
    return arr


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("compressor", [None, "zstd", "gzip", "blosc"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.bool_])
def test_windows_equal_zarr_python(tmp_path, fmt, compressor, dtype):
    rng = np.random.default_rng(fmt * 10 + len(compressor or ""))
    data = (rng.random((37, 53)) * 300).astype(dtype)
    write(tmp_path / "a.zarr", data, fmt, (8, 11), compressor)
    ours = zarr_local.open_node(tmp_path / "a.zarr")
    assert ours.shape == data.shape and ours.chunks == (8, 11) and ours.dtype == data.dtype
    for _ in range(20):
        y0, x0 = rng.integers(0, 37), rng.integers(0, 53)
        y1, x1 = rng.integers(y0, 38), rng.integers(x0, 54)
        np.testing.assert_array_equal(ours[y0:y1, x0:x1], data[y0:y1, x0:x1])
    np.testing.assert_array_equal(ours[:, :], data)


@pytest.mark.parametrize("fmt,sep", [(2, "/"), (3, ".")])
def test_other_chunk_key_separators(tmp_path, fmt, sep):
    data = np.arange(30 * 20, dtype=np.uint16).reshape(30, 20)
    write(tmp_path / "a.zarr", data, fmt, (7, 6), "zstd", separator=sep)
    np.testing.assert_array_equal(zarr_local.open_node(tmp_path / "a.zarr")[3:29, 2:19], data[3:29, 2:19])


@pytest.mark.parametrize("fmt", [2, 3])
def test_missing_chunks_read_as_the_fill_value(tmp_path, fmt):
    arr = zarr.create_array(str(tmp_path / "a.zarr"), shape=(20, 20), dtype=np.uint8, chunks=(10, 10),
                            zarr_format=fmt, fill_value=9)
    arr[:10, :10] = 1
    got = zarr_local.open_node(tmp_path / "a.zarr")[:, :]
    np.testing.assert_array_equal(got, arr[:, :])
    assert got[15, 15] == 9


@pytest.mark.parametrize("fmt", [2, 3])
def test_groups_of_levels_and_the_reader_facade(tmp_path, fmt):
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=fmt)
    levels = [np.arange(24 * 24, dtype=np.uint8).reshape(24, 24)]
    levels.append(levels[0][::2, ::2].copy())
    for key, data in zip(("0", "1"), levels):
        group.create_array(key, shape=data.shape, dtype=np.uint8, chunks=(5, 5))[...] = data
    node = zarr_local.open_node(tmp_path / "g.zarr")
    assert isinstance(node, zarr_local.Group) and node.keys() == ["0", "1"]
    src = open_zarr(tmp_path / "g.zarr", level="1")
    assert isinstance(src.array, zarr_local.Array)
    np.testing.assert_array_equal(src.read((slice(0, 12), slice(0, 12))), levels[1])


def test_sharded_arrays_fall_back_to_zarr_python(tmp_path):
    data = np.arange(32 * 32, dtype=np.uint8).reshape(32, 32)
    arr = zarr.create_array(str(tmp_path / "s.zarr"), shape=data.shape, dtype=np.uint8, chunks=(4, 4),
                            shards=(16, 16))
    arr[...] = data
    with pytest.raises(zarr_local.Unsupported):
        zarr_local.open_node(tmp_path / "s.zarr")
    src = open_zarr(tmp_path / "s.zarr")
    assert not isinstance(src.array, zarr_local.Array)
    np.testing.assert_array_equal(src.read((slice(3, 30), slice(5, 31))), data[3:30, 5:31])


def _store(tmp_path, fmt):
    data = np.arange(20 * 30, dtype=np.uint16).reshape(20, 30)
    write(tmp_path / "a.zarr", data, fmt, (8, 16), "zstd")
    meta = tmp_path / "a.zarr" / ("zarr.json" if fmt == 3 else ".zarray")
    import json

    return meta, json.loads(meta.read_text())


V2_MUTATIONS = [("shape", None), ("shape", [20]), ("shape", "20"), ("chunks", [0, 16]), ("chunks", [8]),
                ("chunks", None), ("dtype", None), ("dtype", 7), ("dtype", "<q9"), ("fill_value", "x"),
                ("dimension_separator", "-"), ("zarr_format", 4)]
V3_MUTATIONS = [("shape", None), ("shape", [-1, 30]), ("chunk_grid", None), ("chunk_grid", {"name": 3}),
                ("chunk_grid", {"name": "regular", "configuration": {"chunk_shape": [0, 4]}}),
                ("data_type", None), ("data_type", 5), ("codecs", []), ("codecs", None), ("codecs", [7]),
                ("fill_value", [1]), ("chunk_key_encoding", {"name": "default", "configuration": {"separator": "x"}}),
                ("node_type", "table")]


@pytest.mark.parametrize("fmt, key, value", [(2, k, v) for k, v in V2_MUTATIONS] + [(3, k, v) for k, v in V3_MUTATIONS])
def test_malformed_metadata_is_refused_where_zarr_python_fails_too(tmp_path, fmt, key, value):
    import json

    from segscore.errors import ScoreError

    meta_path, meta = _store(tmp_path, fmt)
    if value is None:
        meta.pop(key, None)
    else:
        meta[key] = value
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(Exception):  # zarr-python refuses the same store, with an error of its own
        zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...]
    with pytest.raises(ScoreError) as err:
        open_zarr(tmp_path / "a.zarr").read_all()
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "a.zarr") in msg


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_corrupt_chunk_is_refused_with_its_key(tmp_path, fmt, damage):
    from segscore.errors import ScoreError

    _store(tmp_path, fmt)
    chunk = next(p for p in sorted((tmp_path / "a.zarr").rglob("*")) if p.is_file() and not p.name.startswith(".")
                 and p.name != "zarr.json")
    data = chunk.read_bytes()
    chunk.write_bytes({"truncate": data[: len(data) // 2], "garbage": b"\x00garbage" * 9, "empty": b""}[damage])
    with pytest.raises(ScoreError) as err:
        open_zarr(tmp_path / "a.zarr").read_all()
    msg = str(err.value)
    assert "\n" not in msg and "chunk" in msg and "restore" in msg
