"""Local zarr stores read by zarr-python through the capped store wrapper (segscore.io.zarr_store).

Arrays are written by zarr-python (formats 2 and 3, each compressor); windows are compared with
zarr-python's own reading. Absent chunks are counted; malformed metadata and corrupt chunks are
refused in one line; decompression bombs (built small: a chunk of zeros, or a hand-made zstd
frame of RLE blocks, under a small declared chunk) are refused before they are decompressed.
"""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.io.readers import open_zarr

zarr = pytest.importorskip("zarr")


def write(path, data, fmt, chunks, compressor, separator=None, fill_value=7):
    kwargs = {}
    if fmt == 2:
        import numcodecs

        kwargs["compressors"] = None if compressor is None else {
            "zstd": numcodecs.Zstd(level=3), "gzip": numcodecs.GZip(level=1), "blosc": numcodecs.Blosc(),
            "zlib": numcodecs.Zlib(level=1), "lz4": numcodecs.LZ4(), "bz2": numcodecs.BZ2(),
            "lzma": numcodecs.LZMA()}[compressor]
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
                            fill_value=fill_value, **kwargs)
    arr[...] = data
    return arr


def chunk_files(store):
    return [p for p in sorted(store.rglob("*")) if p.is_file() and p.name not in ("zarr.json", ".zarray", ".zattrs",
                                                                                   ".zgroup")]


@pytest.mark.parametrize("fmt, compressor", [(2, c) for c in (None, "zstd", "gzip", "blosc", "zlib", "lz4", "bz2",
                                                               "lzma")] + [(3, c) for c in (None, "zstd", "gzip",
                                                                                            "blosc")])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.bool_])
def test_windows_equal_zarr_python(tmp_path, fmt, compressor, dtype):
    """Every compressor the cap can bound reads as zarr-python reads it (no chunk refused)."""
    rng = np.random.default_rng(fmt * 10 + len(compressor or ""))
    data = (rng.random((37, 53)) * 300).astype(dtype)
    write(tmp_path / "a.zarr", data, fmt, (8, 11), compressor)
    src = open_zarr(tmp_path / "a.zarr")
    assert src.shape == data.shape and src.chunks == (8, 11) and src.dtype == data.dtype
    for _ in range(20):
        y0, x0 = rng.integers(0, 37), rng.integers(0, 53)
        y1, x1 = rng.integers(y0, 38), rng.integers(x0, 54)
        np.testing.assert_array_equal(src.read((slice(y0, y1), slice(x0, x1))), data[y0:y1, x0:x1])
    np.testing.assert_array_equal(src.read_all(), data)
    written = len(chunk_files(tmp_path / "a.zarr"))  # zarr-python skips chunks equal to the fill value
    assert src.absent_chunks() == (25 - written, 25) and bool(src.warnings()) == (written < 25)


@pytest.mark.parametrize("fmt,sep", [(2, "/"), (3, ".")])
def test_other_chunk_key_separators(tmp_path, fmt, sep):
    data = np.arange(30 * 20, dtype=np.uint16).reshape(30, 20)
    write(tmp_path / "a.zarr", data, fmt, (7, 6), "zstd", separator=sep)
    src = open_zarr(tmp_path / "a.zarr")
    np.testing.assert_array_equal(src.read((slice(3, 29), slice(2, 19))), data[3:29, 2:19])
    assert src.absent_chunks() == (0, 5 * 4)


@pytest.mark.parametrize("fmt", [2, 3])
def test_absent_chunks_are_counted(tmp_path, fmt):
    arr = zarr.create_array(str(tmp_path / "a.zarr"), shape=(20, 30), dtype=np.uint8, chunks=(10, 10),
                            zarr_format=fmt, fill_value=9)
    arr[...] = 1
    removed = chunk_files(tmp_path / "a.zarr")[:2]
    for p in removed:
        os.remove(p)
    src = open_zarr(tmp_path / "a.zarr")
    assert src.read((slice(0, 5), slice(0, 30))).tolist() == zarr.open_array(str(tmp_path / "a.zarr"))[:5].tolist()
    got = src.read_all()
    assert (got == 9).sum() == 200 and (got == 1).sum() == 400
    assert src.absent_chunks() == (2, 6)  # each chunk once, however often it was read
    assert src.warnings() == [f"{tmp_path / 'a.zarr'}: 2 of 6 chunks absent, read as the fill value 9"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_groups_of_levels(tmp_path, fmt):
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=fmt)
    levels = [np.arange(24 * 24, dtype=np.uint8).reshape(24, 24)]
    levels.append(levels[0][::2, ::2].copy())
    for key, data in zip(("0", "1"), levels):
        group.create_array(key, shape=data.shape, dtype=np.uint8, chunks=(5, 5))[...] = data
    os.remove(sorted((tmp_path / "g.zarr" / "1").rglob("*"))[-1]) if fmt == 2 else \
        os.remove(tmp_path / "g.zarr" / "1" / "c" / "2" / "2")
    src = open_zarr(tmp_path / "g.zarr", level="1")
    got = src.read((slice(0, 12), slice(0, 12)))
    assert (got != levels[1]).sum() > 0 and src.absent_chunks() == (1, 9)
    assert src.warnings()[0].startswith(f"{tmp_path / 'g.zarr'}/1: 1 of 9 chunks absent")
    with pytest.raises(ScoreError, match="is a zarr group, not an array"):
        open_zarr(tmp_path / "g.zarr")
    with pytest.raises(ScoreError, match="no level '7'"):
        open_zarr(tmp_path / "g.zarr", level="7")


def test_sharded_arrays(tmp_path):
    data = np.arange(32 * 32, dtype=np.uint8).reshape(32, 32)
    arr = zarr.create_array(str(tmp_path / "s.zarr"), shape=data.shape, dtype=np.uint8, chunks=(4, 4),
                            shards=(16, 16))
    arr[...] = data
    src = open_zarr(tmp_path / "s.zarr")
    np.testing.assert_array_equal(src.read((slice(3, 30), slice(5, 31))), data[3:30, 5:31])
    np.testing.assert_array_equal(src.read_all(), data)
    os.remove(tmp_path / "s.zarr" / "c" / "1" / "1")  # a shard: counted as one chunk
    src = open_zarr(tmp_path / "s.zarr")
    assert (src.read_all()[16:, 16:] == 0).all() and src.absent_chunks() == (1, 4)


def _store(tmp_path, fmt):
    data = np.arange(20 * 30, dtype=np.uint16).reshape(20, 30)
    write(tmp_path / "a.zarr", data, fmt, (8, 16), "zstd")
    meta = tmp_path / "a.zarr" / ("zarr.json" if fmt == 3 else ".zarray")
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
def test_malformed_metadata_is_refused_in_one_line(tmp_path, fmt, key, value):
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
    _store(tmp_path, fmt)
    chunk = chunk_files(tmp_path / "a.zarr")[0]
    data = chunk.read_bytes()
    chunk.write_bytes({"truncate": data[: len(data) // 2], "garbage": b"\x00garbage" * 9, "empty": b""}[damage])
    with pytest.raises(ScoreError) as err:
        open_zarr(tmp_path / "a.zarr").read_all()
    msg = str(err.value)
    key = chunk.relative_to(tmp_path / "a.zarr").as_posix()
    assert "\n" not in msg and f"chunk {key} " in msg and "restore" in msg


def test_a_chunk_that_is_a_folder_or_a_fifo(tmp_path):
    _store(tmp_path, 3)
    chunk = chunk_files(tmp_path / "a.zarr")[0]
    os.remove(chunk)
    os.mkfifo(chunk)  # no writer: opening it would block
    with pytest.raises(ScoreError, match="not a regular file"):
        open_zarr(tmp_path / "a.zarr").read_all()
    os.remove(chunk)
    chunk.mkdir()
    with pytest.raises(ScoreError, match="is a folder"):
        open_zarr(tmp_path / "a.zarr").read_all()


def test_a_codec_that_cannot_be_bounded_is_refused_at_open(tmp_path):
    import numcodecs

    zarr.create_array(str(tmp_path / "a.zarr"), shape=(8, 8), dtype=np.uint8, chunks=(4, 4), zarr_format=2,
                      compressors=numcodecs.Zstd(), filters=None)[...] = 1
    meta = json.loads((tmp_path / "a.zarr" / ".zarray").read_text())
    meta["compressor"] = {"id": "pcodec"}
    (tmp_path / "a.zarr" / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(ScoreError) as err:
        open_zarr(tmp_path / "a.zarr")
    assert "cannot bound" in str(err.value) or "cannot open" in str(err.value)


# ---------------------------------------------------------------------------------------------
# decompression bombs: refused before the decompression allocates


def zstd_rle_bomb(total: int, fcs: bool) -> bytes:
    """A valid zstd frame of RLE blocks of 128 KiB zeros, ``total`` bytes decoded, 4 bytes a block;
    with ``fcs`` its header declares the content size, else only the blocks bound it."""
    block = 1 << 17
    n = total // block
    head = b"\x28\xb5\x2f\xfd"
    if fcs:
        head += bytes([0xE0]) + total.to_bytes(8, "little")  # single segment, 8-byte content size
    else:
        head += bytes([0x00, (17 - 10) << 3])  # a 128 KiB window, no content size
    rle = ((block << 3) | (1 << 1)).to_bytes(3, "little") + b"\x00"
    last = ((block << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"\x00"
    return head + rle * (n - 1) + last


@pytest.mark.parametrize("fcs", [True, False])
def test_the_rle_bomb_is_a_real_zstd_frame(fcs):
    import numcodecs

    frame = zstd_rle_bomb(4 << 20, fcs)
    assert len(frame) < 200 and numcodecs.Zstd().decode(frame) == bytes(4 << 20)


def _bomb_store(path, fmt, compressor, payload):
    """A 256 x 256 uint8 array of one chunk (64 KiB declared) whose chunk file is ``payload``."""
    write(path, np.ones((256, 256), np.uint8), fmt, (256, 256), compressor)
    (chunk,) = chunk_files(path)
    chunk.write_bytes(payload)
    return chunk.relative_to(path).as_posix()


def _zeros(codec, n):
    return bytes(codec.encode(np.zeros(n, np.uint8)))


def _gzip_members(n_members, member_bytes):
    import gzip

    return gzip.compress(bytes(member_bytes), compresslevel=9) * n_members


#: bombs small enough on disk for a 64 KiB chunk (a larger file is refused by its size first)
BOMBS = {
    "zstd-1GiB-declared": (3, "zstd", lambda: zstd_rle_bomb(1 << 30, True)),
    "zstd-1GiB-blocks": (3, "zstd", lambda: zstd_rle_bomb(1 << 30, False)),
    "zstd-numcodecs": (2, "zstd", lambda: _zeros(__import__("numcodecs").Zstd(), 1 << 20)),
    "blosc": (3, "blosc", lambda: _zeros(__import__("numcodecs").Blosc(), 1 << 20)),
    "lz4": (2, "lz4", lambda: _zeros(__import__("numcodecs").LZ4(), 1 << 20)),
    "gzip-64MiB-members": (3, "gzip", lambda: _gzip_members(64, 1 << 20)),
    "zlib": (2, "zlib", lambda: _zeros(__import__("numcodecs").Zlib(), 1 << 20)),
    "bz2": (2, "bz2", lambda: _zeros(__import__("numcodecs").BZ2(), 1 << 20)),
    "lzma": (2, "lzma", lambda: _zeros(__import__("numcodecs").LZMA(), 1 << 20)),
}
#: the issue's bombs: 5 GiB of zeros (160 KB of zstd, 5 MB of gzip members) behind a 64 KiB chunk
BIG_BOMBS = {
    "zstd-5GiB-declared": (3, "zstd", lambda: zstd_rle_bomb(5 << 30, True)),
    "zstd-5GiB-blocks": (3, "zstd", lambda: zstd_rle_bomb(5 << 30, False)),
    "gzip-5GiB-members": (3, "gzip", lambda: _gzip_members(5 << 10, 1 << 20)),
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_decompression_bomb_is_refused_naming_the_chunk(tmp_path, bomb):
    fmt, compressor, payload = BOMBS[bomb]
    key = _bomb_store(tmp_path / "b.zarr", fmt, compressor, payload())
    src = open_zarr(tmp_path / "b.zarr")
    start = time.monotonic()
    with pytest.raises(ScoreError) as err:
        src.read((slice(0, 1), slice(0, 1)))
    assert time.monotonic() - start < 5
    msg = str(err.value)
    assert "\n" not in msg and f"chunk {key} would decode to more than 65,536 bytes" in msg
    assert "256 x 256 uint8" in msg and str(tmp_path / "b.zarr") in msg


def test_a_sharded_bomb_is_refused(tmp_path):
    arr = zarr.create_array(str(tmp_path / "s.zarr"), shape=(64, 64), dtype=np.uint8, chunks=(16, 16),
                            shards=(32, 32))
    arr[...] = 1
    shard = tmp_path / "s.zarr" / "c" / "0" / "0"
    raw = bytearray(shard.read_bytes())
    index = np.frombuffer(bytes(raw[-(16 * 4 + 4):-4]), "<u8").reshape(-1, 2)
    offset, nbytes = (int(v) for v in index[0])
    bomb = zstd_rle_bomb(1 << 30, True)  # 1 GiB in a 16 x 16 inner chunk
    body = bytes(raw[:offset]) + bomb + bytes(raw[offset + nbytes:-(16 * 4 + 4)])
    index = index.copy()
    index[:, 0] = np.where(index[:, 0] > offset, index[:, 0] - nbytes + len(bomb), index[:, 0])
    index[0, 1] = len(bomb)
    import google_crc32c  # noqa: F401 - zarr's crc32c codec needs it, so it is there

    crc = __import__("google_crc32c").value(index.tobytes()).to_bytes(4, "little")
    shard.write_bytes(body + index.tobytes() + crc)
    for window in ((slice(0, 4), slice(0, 4)), (slice(0, 64), slice(0, 64))):  # partial, whole shard
        with pytest.raises(ScoreError, match="chunk c/0/0 .*would decode to more than 256 bytes"):
            open_zarr(tmp_path / "s.zarr").read(window)


def test_a_bomb_is_refused_under_1_gb_and_fast(tmp_path):
    """The issue's bombs (5 GiB of zeros behind a 64 KiB chunk), end to end in a fresh process:
    the time and the peak memory (the process's own maxrss) of the refusal. On a local disk the
    file is refused by its size before it is read (over HTTP, by its decoded size: test_remote)."""
    for name in sorted(BIG_BOMBS):
        fmt, compressor, payload = BIG_BOMBS[name]
        _bomb_store(tmp_path / f"{name}.zarr", fmt, compressor, payload())
        code = ("import resource, sys\nfrom segscore.io.readers import open_zarr\n"
                "from segscore.errors import ScoreError\n"
                f"try:\n    open_zarr({str(tmp_path / (name + '.zarr'))!r}).read_all()\n"
                "except ScoreError as e:\n    print(e)\n"
                # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's peak across exec)
                "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')))\n")
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        elapsed = time.monotonic() - start
        message, peak_kb = proc.stdout.strip().splitlines()
        assert "chunk c/0/0 holds" in message and "more than any encoding of it can" in message, proc.stderr
        assert int(peak_kb) < 1 << 20 and elapsed < 45, (name, peak_kb, elapsed)  # a refusal, not a decompression: seconds


def test_sources_pickle_and_share_one_store_class(tmp_path):
    """Sources go to dask workers by pickle: every store is of the one CappedStore class (built once),
    and a copy counts its own reads."""
    import pickle

    from segscore.io import zarr_store

    _store(tmp_path, 3)  # a plain layout, opened without zarr-python (zarr_store.open_plain)
    data = np.arange(20 * 30, dtype=np.uint16).reshape(20, 30)
    zarr.create_array(str(tmp_path / "s.zarr"), shape=data.shape, dtype=data.dtype, chunks=(4, 4),
                      shards=(8, 16))[...] = data  # sharded: opened by zarr-python
    for path, kind, n in (("a.zarr", zarr_store.LocalBook, 6), ("s.zarr", zarr_store.CappedStore, 6)):
        first, second = open_zarr(tmp_path / path), open_zarr(tmp_path / path)
        assert type(first.store) is type(second.store) is kind
        first.read_all()
        copy = pickle.loads(pickle.dumps(first))
        assert copy.absent_chunks() == (0, 0) and first.absent_chunks() == (0, n)
        np.testing.assert_array_equal(copy.read_all(), first.read_all())
        np.testing.assert_array_equal(copy.read_all(), data)


def test_metadata_that_is_a_fifo_is_never_opened(tmp_path):
    """A FIFO (no writer) where a metadata document should be: the store refuses it in one line
    instead of blocking on it."""
    _store(tmp_path, 2)
    attrs = tmp_path / "a.zarr" / ".zattrs"
    if attrs.exists():
        os.remove(attrs)
    os.mkfifo(attrs)
    with pytest.raises(ScoreError, match=r"metadata .zattrs is not a regular file"):
        open_zarr(tmp_path / "a.zarr")


def test_a_chunk_declared_larger_than_the_read_budget(tmp_path, monkeypatch):
    """zarr decodes a chunk whole: a chunk declared larger than the read budget (the hostile-input
    issue's segscore.io.budget) is refused at open, before any read."""
    budget = pytest.importorskip("segscore.io.budget", reason="the read budget is not in this tree")
    monkeypatch.setenv(budget.ENV, "20M")
    zarr.create_array(str(tmp_path / "big.zarr"), shape=(8192, 8192), dtype=np.uint8, chunks=(8192, 4096))
    with pytest.raises(budget.TooLargeError) as err:
        open_zarr(tmp_path / "big.zarr")
    assert "8192 x 4096 chunks are decoded whole" in str(err.value) and "\n" not in str(err.value)
    zarr.create_array(str(tmp_path / "ok.zarr"), shape=(8192, 8192), dtype=np.uint8, chunks=(1024, 1024))
    assert open_zarr(tmp_path / "ok.zarr").read((slice(0, 2), slice(0, 2))).shape == (2, 2)


def test_reading_chunk_by_chunk_equals_zarr_python(tmp_path):
    """Windows that cut chunks anywhere (and one chunk, and none) read as zarr-python reads them."""
    from segscore.io.readers import open_zarr

    rng = np.random.default_rng(0)
    data = rng.integers(0, 60000, (37, 53), dtype=np.uint16)
    zarr.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype=data.dtype, chunks=(8, 11),
                      zarr_format=3)[...] = data
    src = open_zarr(tmp_path / "a.zarr")
    for y0, y1, x0, x1 in [(0, 37, 0, 53), (3, 4, 5, 6), (8, 16, 11, 22), (7, 9, 10, 12), (5, 5, 0, 53),
                           (0, 37, 52, 53), *[sorted(rng.integers(0, 38, 2)) + sorted(rng.integers(0, 54, 2))
                                              for _ in range(20)]]:
        got = src.read((slice(y0, y1), slice(x0, x1)))
        assert got.dtype == data.dtype
        np.testing.assert_array_equal(got, data[y0:y1, x0:x1])


def test_a_failed_window_leaves_no_read_running(tmp_path):
    """zarr-python raises a selection's first failure while its other chunk reads still run; a
    window read chunk by chunk (segscore.io.zarr_store.read_window) raises only once every read
    has ended, and names the first failing chunk in C order, whichever failed first in time."""
    import asyncio

    from zarr.storage import LocalStore, WrapperStore

    from segscore.io.sources import ZarrSource

    data = np.arange(40 * 40, dtype=np.uint16).reshape(40, 40)
    write(tmp_path / "a.zarr", data, 3, (8, 8), "zstd")
    state = {"running": 0, "most": 0, "ended": 0}

    class Slow(WrapperStore):
        async def get(self, key, prototype, byte_range=None):
            state["running"] += 1
            state["most"] = max(state["most"], state["running"])
            try:
                if key.startswith("c/"):
                    await asyncio.sleep(0.02 if key in ("c/0/3", "c/2/1") else 0.2)
                    if key in ("c/0/3", "c/2/1"):
                        raise OSError(f"cannot read {key}")
                return await super().get(key, prototype, byte_range)
            finally:
                state["running"] -= 1
                state["ended"] += key.startswith("c/")

    array = zarr.open_array(Slow(LocalStore(str(tmp_path / "a.zarr"), read_only=True)), mode="r")
    with pytest.raises(ScoreError) as caught:
        ZarrSource(array, "a.zarr").read((slice(0, 40), slice(0, 40)))
    assert str(caught.value) == ("a.zarr: the chunk holding [0:8, 24:32] cannot be read; the store or file is "
                                 "truncated or corrupt: restore it")
    assert state["running"] == 0 and state["ended"] == 25  # every chunk's read ended before the refusal
    assert state["most"] > 1  # and they ran side by side
