"""Local chunk files decoded by segscore itself (segscore.io.zarr_store.Layout, CappedStore.direct):
the layouts it takes and those it leaves to zarr-python, and, for every layout it takes, the same
windows, the same absent-chunk counts and the same one-line refusals as the zarr-python path."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.io.readers import open_zarr

zarr = pytest.importorskip("zarr")
from zarr import codecs  # noqa: E402

from segscore.io import zarr_store  # noqa: E402


def _v2(compressor):
    import numcodecs

    return {"zarr_format": 2, "compressors": compressor and {
        "zstd": numcodecs.Zstd(level=3), "gzip": numcodecs.GZip(level=1), "blosc": numcodecs.Blosc(cname="lz4"),
        "zlib": numcodecs.Zlib(level=1), "lz4": numcodecs.LZ4(), "bz2": numcodecs.BZ2()}[compressor]}


#: name -> (zarr.create_array keywords, read by segscore's own decoder)
LAYOUTS = {
    "v2-raw": (_v2(None), True),
    "v2-zstd": (_v2("zstd"), True),
    "v2-gzip": (_v2("gzip"), True),
    "v2-blosc": (_v2("blosc"), True),
    "v2-zlib": (_v2("zlib"), True),
    "v2-lz4": (_v2("lz4"), True),
    "v2-slash": ({**_v2("zstd"), "chunk_key_encoding": {"name": "v2", "separator": "/"}}, True),
    "v3-raw": ({"zarr_format": 3, "compressors": None}, True),
    "v3-zstd": ({"zarr_format": 3, "compressors": codecs.ZstdCodec(level=3)}, True),
    "v3-zstd-checksum": ({"zarr_format": 3, "compressors": codecs.ZstdCodec(level=1, checksum=True)}, True),
    "v3-gzip": ({"zarr_format": 3, "compressors": codecs.GzipCodec(level=1)}, True),
    "v3-blosc": ({"zarr_format": 3, "compressors": codecs.BloscCodec(cname="zstd", shuffle="bitshuffle")}, True),
    "v3-dot": ({"zarr_format": 3, "chunk_key_encoding": {"name": "default", "separator": "."}}, True),
    "v3-v2-keys": ({"zarr_format": 3, "chunk_key_encoding": {"name": "v2", "separator": "."}}, True),
    # left to zarr-python
    "v2-bz2": (_v2("bz2"), False),
    "v2-F-order": ({**_v2("zstd"), "order": "F"}, False),
    "v3-crc32c": ({"zarr_format": 3, "compressors": [codecs.ZstdCodec(), codecs.Crc32cCodec()]}, False),
    "v3-sharded": ({"zarr_format": 3, "shards": (16, 22)}, False),
    "v3-big-endian": ({"zarr_format": 3, "serializer": codecs.BytesCodec(endian="big")}, False),
    "v3-transpose": ({"zarr_format": 3, "filters": [codecs.TransposeCodec(order=(1, 0))]}, False),
}


def _write(path, data, kwargs, fill_value=7):
    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=(8, 11), fill_value=fill_value,
                            **kwargs)
    arr[...] = data
    return arr


def _chunk_files(store):
    return [p for p in sorted(store.rglob("*")) if p.is_file() and p.name not in (
        "zarr.json", ".zarray", ".zattrs", ".zgroup")]


@pytest.fixture
def through_zarr(monkeypatch):
    """Open sources whose chunks zarr-python decodes (the path segscore's decoder replaces)."""
    def use():
        monkeypatch.setattr(zarr_store, "open_plain", lambda *a, **k: None)
        monkeypatch.setattr(zarr_store.CappedStore, "direct", lambda self, array_path="": None)
    return use


@pytest.mark.parametrize("name", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.bool_])
def test_each_layout_reads_as_zarr_python_and_counts_alike(tmp_path, name, dtype, through_zarr):
    kwargs, direct = LAYOUTS[name]
    if np.dtype(dtype).itemsize == 1 and "big-endian" in name:
        direct = True  # one byte a value has no byte order
    rng = np.random.default_rng(len(name))
    data = (rng.random((37, 53)) * 300).astype(dtype)
    fill = 0 if dtype == np.bool_ else 7
    data[8:16] = fill  # a chunk row equal to the fill value: zarr-python writes no file for it
    _write(tmp_path / "a.zarr", data, kwargs, fill_value=fill)
    os.remove(_chunk_files(tmp_path / "a.zarr")[-1])  # and one chunk lost
    expected = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...]
    src = open_zarr(tmp_path / "a.zarr")
    assert (src.store.direct(src.key) is not None) is direct
    windows = [(slice(0, 37), slice(0, 53)), (slice(3, 4), slice(5, 6)), (slice(8, 16), slice(11, 22)),
               (slice(5, 5), slice(0, 53))]
    for _ in range(15):
        y0, x0 = rng.integers(0, 37), rng.integers(0, 53)
        windows.append((slice(y0, rng.integers(y0, 38)), slice(x0, rng.integers(x0, 54))))
    for w in windows:
        got = src.read(w)
        assert got.dtype == data.dtype and got.shape == expected[w].shape
        np.testing.assert_array_equal(got, expected[w])
    assert src.absent_chunks()[1] == (9 if "sharded" in name else 25)  # a shard is one key
    assert src.absent_chunks()[0] >= 1
    # the same counts and warning as the reads through zarr-python
    through_zarr()
    plain = open_zarr(tmp_path / "a.zarr")
    assert plain.store.direct(plain.key) is None and type(plain.store) is zarr_store.CappedStore
    assert (plain.shape, plain.dtype, plain.chunks) == (src.shape, src.dtype, src.chunks)
    assert repr(plain.array.fill_value) == repr(src.array.fill_value)
    for w in windows:
        np.testing.assert_array_equal(plain.read(w), expected[w])
    assert plain.absent_chunks() == src.absent_chunks() and plain.warnings() == src.warnings()


def test_levels_of_a_group(tmp_path):
    for fmt in (2, 3):
        group = zarr.open_group(str(tmp_path / f"g{fmt}.zarr"), mode="w", zarr_format=fmt)
        levels = [np.arange(40 * 30, dtype=np.uint16).reshape(40, 30)]
        levels.append(levels[0][::2, ::2].copy())
        for key, level in zip(("0", "1"), levels):
            group.create_array(key, shape=level.shape, dtype=level.dtype, chunks=(7, 9))[...] = level
        src = open_zarr(tmp_path / f"g{fmt}.zarr", level="1")
        assert src.key == "1" and src.store.direct(src.key) is not None
        np.testing.assert_array_equal(src.read_all(), levels[1])
        assert src.absent_chunks() == (0, 3 * 2)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "short-frame", "long-frame"])
def test_a_damaged_chunk_is_refused_as_through_zarr_python(tmp_path, fmt, damage, through_zarr):
    """The same one line, naming the file and the chunk, whichever path decodes it."""
    import numcodecs

    kwargs = _v2("zstd") if fmt == 2 else {"zarr_format": 3, "compressors": codecs.ZstdCodec()}
    data = np.arange(37 * 53, dtype=np.uint16).reshape(37, 53)
    _write(tmp_path / "a.zarr", data, kwargs)
    chunk = _chunk_files(tmp_path / "a.zarr")[6]
    raw = chunk.read_bytes()
    chunk.write_bytes({"truncate": raw[: len(raw) // 2], "garbage": b"\x00garbage" * 9, "empty": b"",
                       "short-frame": numcodecs.Zstd().encode(bytes(100)),  # a valid frame, too few bytes
                       "long-frame": numcodecs.Zstd().encode(bytes(8 * 11 * 2 + 2))}[damage])
    messages = []
    for direct in (True, False):
        if not direct:
            through_zarr()
        src = open_zarr(tmp_path / "a.zarr")
        assert (src.store.direct(src.key) is not None) is direct
        np.testing.assert_array_equal(src.read((slice(0, 8), slice(0, 53))), data[:8])  # the chunks before it
        with pytest.raises(ScoreError) as err:
            src.read_all()
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "\n" not in messages[0]
    assert str(tmp_path / "a.zarr") in messages[0] and "restore" in messages[0]


def test_a_chunk_file_replaced_by_a_folder_or_a_huge_file(tmp_path):
    data = np.arange(37 * 53, dtype=np.uint8).reshape(37, 53)
    _write(tmp_path / "a.zarr", data, {"zarr_format": 3})
    chunk = _chunk_files(tmp_path / "a.zarr")[0]
    chunk.write_bytes(b"\x00" * (1 << 20))
    src = open_zarr(tmp_path / "a.zarr")
    assert src.store.direct(src.key) is not None
    with pytest.raises(ScoreError, match="more than any encoding of it can"):
        src.read_all()
    os.remove(chunk)
    chunk.mkdir()
    with pytest.raises(ScoreError, match="is a folder"):
        open_zarr(tmp_path / "a.zarr").read_all()


def test_a_pickled_source_reads_its_chunks_directly(tmp_path):
    """A source sent to a dask worker keeps its layout and counts its own reads."""
    data = np.arange(37 * 53, dtype=np.uint16).reshape(37, 53)
    _write(tmp_path / "a.zarr", data, {"zarr_format": 3})
    src = open_zarr(tmp_path / "a.zarr")
    copy = pickle.loads(pickle.dumps(src))
    assert copy.store.direct(copy.key) is not None
    np.testing.assert_array_equal(copy.read_all(), data)
    assert copy.absent_chunks() == (0, 25) and src.absent_chunks() == (0, 0)


def test_layouts_from_documents():
    """What the metadata documents alone decide (no store, no zarr-python)."""
    v3 = {"zarr_format": 3, "node_type": "array", "shape": [10, 10], "data_type": "uint16",
          "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
          "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
          "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}
    layout = zarr_store.layout_v3(v3)
    assert layout.key((2, 1)) == "c/2/1" and layout.nbytes == 32 and layout.compressor == (("id", "zstd"),)
    assert zarr_store.layout_v3({**v3, "codecs": [{"name": "bytes"}]}) is None  # a uint16 needs its byte order
    assert zarr_store.layout_v3({**v3, "data_type": "uint8", "codecs": [{"name": "bytes"}]}).compressor is None
    assert zarr_store.layout_v3({**v3, "storage_transformers": [{"name": "x"}]}) is None
    assert zarr_store.layout_v3({**v3, "codecs": v3["codecs"] + [{"name": "crc32c"}]}) is None
    assert zarr_store.layout_v3({**v3, "chunk_key_encoding": {"name": "v2"}}).key((2, 1)) == "2.1"
    assert zarr_store.layout_v3({**v3, "chunk_key_encoding": {"name": "other"}}) is None
    assert zarr_store.layout_v3({**v3, "shape": [10]}) is None
    v2 = {"zarr_format": 2, "shape": [10, 10], "chunks": [4, 4], "dtype": "<f4", "order": "C", "filters": None,
          "fill_value": 0, "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}}
    assert zarr_store.layout_v2(v2).key((2, 1)) == "2.1"
    assert zarr_store.layout_v2({**v2, "dimension_separator": "/"}).key((2, 1)) == "2/1"
    assert zarr_store.layout_v2({**v2, "dtype": ">f4"}) is None
    assert zarr_store.layout_v2({**v2, "filters": [{"id": "delta", "dtype": "<f4"}]}) is None
    assert zarr_store.layout_v2({**v2, "order": "F"}) is None
    assert zarr_store.layout_v2({**v2, "compressor": {"id": "bz2"}}) is None
    assert zarr_store.layout_v2({**v2, "compressor": None}).compressor is None


# ---------------------------------------------------------------------------------------------
# opened without zarr-python (zarr_store.open_plain)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_plain_store_is_scored_without_importing_zarr(tmp_path, fmt):
    """A group of levels and a bare array of the plain forms open, read and report absent chunks
    with no zarr-python in the process; a sharded array still goes through it."""
    import subprocess
    import sys

    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=fmt)
    data = np.arange(40 * 30, dtype=np.uint16).reshape(40, 30)
    group.create_array("2", shape=data.shape, dtype=data.dtype, chunks=(7, 9), fill_value=5)[...] = data
    os.remove(_chunk_files(tmp_path / "g.zarr" / "2")[0])
    zarr.create_array(str(tmp_path / "s.zarr"), shape=data.shape, dtype=data.dtype, chunks=(4, 5),
                      shards=(8, 10))[...] = data
    code = f"""
import sys
from segscore.io.readers import open_zarr
src = open_zarr({str(tmp_path / 'g.zarr')!r}, level="2")
got = src.read_all()
print(int(got[0, 0]), int(got.sum()), src.warnings()[0], "zarr" in sys.modules)
open_zarr({str(tmp_path / 's.zarr')!r}).read_all()
print("zarr" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    first = data.copy()
    first[:7, :9] = 5
    assert out[0] == f"5 {int(first.sum())} {tmp_path / 'g.zarr'}/2: 1 of 24 chunks absent, read as the fill value 5 " \
                     f"False"
    assert out[1] == "True"


def _v3_doc():
    return {"zarr_format": 3, "node_type": "array", "shape": [20, 30], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 16]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
            "attributes": {}, "storage_transformers": []}


def _v2_doc():
    return {"zarr_format": 2, "shape": [20, 30], "chunks": [8, 16], "dtype": "<f4", "fill_value": 0,
            "order": "C", "filters": None, "dimension_separator": ".", "compressor": {"id": "zstd", "level": 1}}


V3_EDITS = [("fill_value", "NaN"), ("fill_value", "Infinity"), ("fill_value", "-Infinity"), ("fill_value", -2.5),
            ("fill_value", "0x7fc00000"), ("fill_value", None), ("fill_value", True), ("fill_value", 1e300),
            ("data_type", "int16"), ("data_type", "float"), ("data_type", "complex64"), ("data_type", "float16"),
            ("shape", [20, 30, 1]), ("shape", [20.0, 30]), ("shape", [True, 30]), ("attributes", []),
            ("dimension_names", ["y", "x"]), ("dimension_names", ["y"]), ("dimension_names", "yx"),
            ("storage_transformers", [{"name": "x"}]), ("extra", 1), ("chunk_key_encoding", None),
            ("codecs", [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}, {"name": "gzip"}]),
            ("zarr_format", True), ("zarr_format", 3.0), ("node_type", "group")]
V2_EDITS = [("fill_value", "NaN"), ("fill_value", None), ("fill_value", "x"), ("fill_value", 300),
            ("dtype", "<i2"), ("dtype", "<i2 "), ("dtype", "float32"), ("dtype", [["a", "<f4"]]), ("dtype", "<c8"),
            ("order", "F"), ("filters", []), ("filters", [{"id": "delta", "dtype": "<f4"}]),
            ("compressor", {"id": "zstd", "level": "high"}), ("compressor", None), ("dimension_separator", None),
            ("dimension_separator", "/"), ("extra", 1), ("zarr_format", True), ("chunks", [8, 16, 1])]


@pytest.mark.parametrize("fmt, key, value", [(3, k, v) for k, v in V3_EDITS] + [(2, k, v) for k, v in V2_EDITS])
def test_what_opens_without_zarr_python_opens_alike_through_it(tmp_path, fmt, key, value, through_zarr):
    """Edited metadata documents: where segscore opens the array without zarr-python, zarr-python
    opens it too, with the same shape, type, chunks and fill value, and reads the same values;
    anything else is left to zarr-python (which may refuse it)."""
    import json

    doc = _v3_doc() if fmt == 3 else _v2_doc()
    doc[key] = value
    path = tmp_path / "a.zarr"
    path.mkdir()
    (path / ("zarr.json" if fmt == 3 else ".zarray")).write_text(json.dumps(doc))
    plain = zarr_store.open_plain(path)
    if plain is None:
        return
    array, book = plain
    through_zarr()
    try:
        other = open_zarr(path)
        expected = other.read_all()
    except ScoreError as exc:
        pytest.fail(f"opened without zarr-python, refused through it: {exc}")
    assert (array.shape, array.dtype, array.chunks) == (other.shape, other.dtype, other.chunks)
    assert repr(array.fill_value) == repr(other.array.fill_value)
    from segscore.io.sources import ZarrSource

    np.testing.assert_array_equal(ZarrSource(array, "a", store=book).read_all(), expected)


def test_the_plain_opening_declines_what_it_does_not_know(tmp_path):
    data = np.arange(20 * 30, dtype=np.uint16).reshape(20, 30)
    _write(tmp_path / "a.zarr", data, {"zarr_format": 2})
    assert zarr_store.open_plain(tmp_path / "a.zarr") is not None
    (tmp_path / "a.zarr" / ".zattrs").write_text("[1, 2]")  # attributes that are not an object
    assert zarr_store.open_plain(tmp_path / "a.zarr") is None
    (tmp_path / "a.zarr" / ".zattrs").write_text('{"a": 1}')
    assert zarr_store.open_plain(tmp_path / "a.zarr") is not None
    (tmp_path / "a.zarr" / "zarr.json").write_text("{}")  # two formats' documents: zarr-python picks
    assert zarr_store.open_plain(tmp_path / "a.zarr") is None
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=3)
    group.create_array("1", shape=data.shape, dtype=data.dtype, chunks=(7, 9))[...] = data
    group.create_group("sub")
    assert zarr_store.open_plain(tmp_path / "g.zarr", "1") is not None
    for level in (None, "sub", "2", "../g.zarr/1", "/1/"[1:] + "/..", ""):
        assert zarr_store.open_plain(tmp_path / "g.zarr", level) is None, level
    zarr.consolidate_metadata(str(tmp_path / "g.zarr"))  # consolidated metadata: zarr-python reads it
    assert zarr_store.open_plain(tmp_path / "g.zarr", "1") is None
    np.testing.assert_array_equal(open_zarr(tmp_path / "g.zarr", level="1").read_all(), data)


def test_engine_workers_decode_their_own_chunks(tmp_path, monkeypatch):
    """The engine's worker threads read a window's chunk files themselves (no chunk pool under a
    task per core); a read from any other thread still fans out over the pool; the sums agree."""
    import threading

    from segscore.engine import reduce
    from segscore.engine.plan import bands

    data = np.arange(64 * 50, dtype=np.uint16).reshape(64, 50)
    _write(tmp_path / "a.zarr", data, {"zarr_format": 3})
    src = open_zarr(tmp_path / "a.zarr")
    seen = []
    read_chunk = zarr_store.ChunkBook._read_chunk

    def spy(self, *args):
        seen.append(threading.current_thread().name)
        return read_chunk(self, *args)

    monkeypatch.setattr(zarr_store.ChunkBook, "_read_chunk", spy)
    total = reduce([src], lambda tile, a: int(a.sum()), lambda a, b: a + b,
                   windows=bands((slice(0, 64), slice(0, 50)), 16), threads=2)
    assert total == int(data.sum())
    assert seen and all(name.startswith("segscore_") for name in seen), set(seen)
    seen.clear()
    np.testing.assert_array_equal(src.read_all(), data)  # from the main thread: over the chunk pool
    assert seen and all(name.startswith("segscore-chunk") for name in seen), set(seen)
