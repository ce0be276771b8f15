"""The one store every zarr read of segscore goes through: absent chunks counted, decoding capped.

:func:`capped` wraps a zarr 3 store (a :class:`zarr.storage.LocalStore` for a folder, the
:mod:`segscore.io.remote` FsspecStore for a URL) in a :class:`zarr.storage.WrapperStore` that

- learns each array's chunk size and codecs from the metadata documents it serves (an array's
  ``zarr.json`` or ``.zarray``, or a group's consolidated metadata), so it needs no private
  name of zarr and no extra request;
- counts, per array, the chunk keys read and those absent (a ``get`` that returns None). zarr
  reads an absent chunk as the fill value; :meth:`segscore.io.sources.ZarrSource.warnings`
  turns the count into the result's ``warnings`` line;
- checks a chunk's encoded bytes before zarr decodes them: the declared chunk size (chunk shape
  x itemsize) is the most it may decode to. zstd, blosc and lz4 state the decoded size in their
  headers (a zstd frame without it is bounded by its blocks); gzip, zlib, bz2 and lzma chunks
  are decompressed by a streaming decoder that stops one byte past the cap (so those chunks are
  decompressed twice: the price of leaving zarr's codecs alone). A chunk that would decode to
  more, whose header is cut short, or whose codec cannot be bounded this way is refused in one
  line naming the chunk. Sharded arrays are checked inner chunk by inner chunk.
- on a local disk, stats a key before reading it: a folder, FIFO or device where a chunk or a
  metadata document should be is refused (a FIFO would block the read), and so is a file larger
  than any encoding of its chunk; over http(s), reads at most that many bytes of the server's
  answer (a larger Content-Length is refused before the body is read, a longer body at one byte
  past the bound: :meth:`segscore.io.remote.GuardedStore.get_bounded`).

Reading a window (:func:`read_window`, what :class:`segscore.io.sources.ZarrSource` reads through):
one zarr-python call per chunk (an inner chunk of a shard), run side by side on a thread pool,
all ended before the first failure in chunk order is raised. zarr-python reads a selection's chunks
as tasks on its event loop and raises the first failure while the others still run; a command
that reported it and exited left asyncio printing each of them. One call per chunk leaves no
other task behind, whatever fails (a fetch, a codec, a refusal of this store), local or remote.

A local array of the plainest layout (:class:`Layout`: a regular grid of C-order chunks, one
file per chunk holding its bytes raw or through zstd, gzip, blosc, zlib or lz4, in this machine's
byte order; no sharding, transpose, checksum or filter) is read without zarr-python: each chunk
file is stat-ed, read, checked as :meth:`CappedStore.get` checks it, and decoded by numcodecs in
one call (the file read and the decode release the GIL; zarr-python's event loop took about 3 ms
of Python a chunk). The windows, the counts and the refusals are those of the zarr-python path,
which every other layout and every remote store keep.

Not counted: an inner chunk a shard's index marks empty (the shard itself is a key; an absent
shard is counted as one chunk). Reads done in another process (a distributed client as the
executor) are counted there, not in the caller's store.

This module imports zarr only when a store is built (:func:`capped`).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from segscore.errors import ScoreError

#: metadata documents of zarr formats 2 and 3
METADATA = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")
#: the largest metadata document read (a consolidated one lists every array of a store)
MAX_METADATA_BYTES = 64 << 20
#: compressors whose decoded size the check can bound before zarr decodes
COMPRESSORS = ("zstd", "blosc", "lz4", "gzip", "zlib", "bz2", "lzma")
_FIX = "restore or re-write the store"
_UNSET = (1 << 64) - 1  # a shard index entry of an empty inner chunk


class ChunkRefused(ScoreError):
    """A chunk (or a key of a store) refused before zarr decodes it: one line naming it."""


@dataclass(frozen=True)
class Encoding:
    """How one chunk's bytes are stored: ``tail`` checksum bytes after the compressor's stream,
    one ``compressor`` (or None) whose output may be at most ``cap`` bytes."""

    compressor: str | None
    cap: int
    tail: int = 0

    @property
    def max_stored(self) -> int:
        """The most bytes any valid encoding of the chunk can take on disk."""
        if self.compressor is None:
            return self.cap + self.tail
        return self.cap + self.cap // 64 + 65536 + self.tail


@dataclass(frozen=True)
class Shard:
    """A ``sharding_indexed`` array's shard: ``n`` inner chunks encoded as ``inner``, an index
    of ``index_bytes`` at the end (or the start) of the shard."""

    inner: Encoding
    n: int
    index_bytes: int
    index_at_end: bool


@dataclass(frozen=True)
class Plan:
    """What the store knows about one array: its declared chunk, the chunks' encoding (or the
    shard's), or why its chunks cannot be bounded (``unsupported``)."""

    chunk_shape: tuple
    dtype: str
    encoding: Encoding | None = None
    shard: Shard | None = None
    unsupported: str | None = None

    @property
    def decoded_bytes(self) -> int:
        """The most bytes zarr decodes one stored chunk (an inner chunk of a shard) into."""
        if self.shard is not None:
            return self.shard.inner.cap
        return self.encoding.cap if self.encoding is not None else 0

    @property
    def max_stored(self) -> int:
        if self.shard is not None:
            return self.shard.n * self.shard.inner.max_stored + self.shard.index_bytes
        return self.encoding.max_stored if self.encoding is not None else 0


def _product(values) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out


def _v3_itemsize(name) -> int | None:
    if not isinstance(name, str) or not name.isidentifier():
        return None
    try:
        dtype = np.dtype(name)
    except TypeError:
        return None
    return dtype.itemsize if dtype.kind in "biufc" else None


def _codec_name(codec) -> str | None:
    name = codec.get("name") if isinstance(codec, dict) else codec if isinstance(codec, str) else None
    if isinstance(name, str) and name.startswith("numcodecs."):
        name = name[len("numcodecs."):]
    return name


def _v3_bytes_chain(codecs, declared: int) -> Encoding | str:
    """The encoding of bytes->bytes ``codecs`` (encode order) over ``declared`` bytes, or why not."""
    compressor, tail, inner = None, 0, 0
    for codec in reversed(codecs):  # decode order
        name = _codec_name(codec)
        if name == "crc32c":
            if compressor is None:
                tail += 4
            else:
                inner += 4
        elif name in COMPRESSORS:
            if compressor is not None:
                return f"two compressors ({compressor}, {name})"
            compressor = name
        else:
            return f"the codec {name!r}"
    if compressor is None:
        return Encoding(None, declared + inner, tail)
    return Encoding(compressor, declared + inner, tail)


def _v3_codecs(codecs, chunk_shape, itemsize) -> tuple[Encoding | None, Shard | None, str | None]:
    if not isinstance(codecs, list) or not codecs:
        return None, None, "no codec list"
    declared = _product(chunk_shape) * itemsize
    for i, codec in enumerate(codecs):
        name = _codec_name(codec)
        if name == "transpose":
            continue
        if name == "bytes":
            enc = _v3_bytes_chain(codecs[i + 1:], declared)
            return (enc, None, None) if isinstance(enc, Encoding) else (None, None, enc)
        if name == "sharding_indexed":
            if codecs[i + 1:]:
                return None, None, "codecs after sharding_indexed"
            conf = codec.get("configuration") or {}
            inner_shape = conf.get("chunk_shape")
            if not (isinstance(inner_shape, list) and len(inner_shape) == len(chunk_shape)
                    and all(isinstance(v, int) and v > 0 for v in inner_shape)):
                return None, None, "a sharding_indexed codec without an inner chunk shape"
            inner, shard, why = _v3_codecs(conf.get("codecs"), inner_shape, itemsize)
            if why or shard is not None:
                return None, None, why or "nested sharding"
            index = conf.get("index_codecs") or [{"name": "bytes"}, {"name": "crc32c"}]
            extra = 0
            for c in index:
                if _codec_name(c) == "crc32c":
                    extra += 4
                elif _codec_name(c) != "bytes":
                    return None, None, f"the shard index codec {_codec_name(c)!r}"
            n = _product(-(-int(s) // int(c)) for s, c in zip(chunk_shape, inner_shape))
            return None, Shard(inner, n, 16 * n + extra, conf.get("index_location", "end") != "start"), None
        return None, None, f"the codec {name!r}"
    return None, None, "no bytes codec"


def plan_v3(meta: dict) -> Plan | None:
    """The plan of an array's ``zarr.json`` document, or None where it is not an array's."""
    if not isinstance(meta, dict) or meta.get("node_type") != "array":
        return None
    grid = meta.get("chunk_grid") if isinstance(meta.get("chunk_grid"), dict) else {}
    shape = (grid.get("configuration") or {}).get("chunk_shape") if isinstance(
        grid.get("configuration"), dict) else None
    if not (isinstance(shape, list) and all(isinstance(v, int) and v > 0 for v in shape)):
        return Plan((), "?", unsupported="no regular chunk grid")
    itemsize = _v3_itemsize(meta.get("data_type"))
    if itemsize is None:
        return Plan(tuple(shape), str(meta.get("data_type")), unsupported=f"the data type {meta.get('data_type')!r}")
    encoding, shard, why = _v3_codecs(meta.get("codecs"), shape, itemsize)
    return Plan(tuple(shape), str(meta.get("data_type")), encoding, shard, why)


def plan_v2(meta: dict) -> Plan | None:
    """The plan of an array's ``.zarray`` document (filters may widen a chunk up to 8 bytes a value)."""
    if not isinstance(meta, dict):
        return None
    shape = meta.get("chunks")
    if not (isinstance(shape, list) and all(isinstance(v, int) and v > 0 for v in shape)):
        return Plan((), "?", unsupported="no chunk shape")
    try:
        dtype = np.dtype(meta.get("dtype"))
        if meta.get("dtype") is None or dtype.kind not in "biufc":
            raise TypeError
    except (TypeError, ValueError):
        return Plan(tuple(shape), str(meta.get("dtype")), unsupported=f"the dtype {meta.get('dtype')!r}")
    declared = _product(shape) * (max(dtype.itemsize, 8) if meta.get("filters") else dtype.itemsize)
    compressor = meta.get("compressor")
    if compressor is None:
        return Plan(tuple(shape), dtype.name, Encoding(None, declared))
    name = compressor.get("id") if isinstance(compressor, dict) else None
    if name not in COMPRESSORS:
        return Plan(tuple(shape), dtype.name, unsupported=f"the compressor {name!r}")
    return Plan(tuple(shape), dtype.name, Encoding(name, declared))


#: compressors a local chunk file is decoded with directly (numcodecs, by the same name in zarr 2
#: and zarr 3's core codecs); any other is left to zarr-python
DIRECT_V3 = ("zstd", "gzip", "blosc")
DIRECT_V2 = ("zstd", "gzip", "blosc", "zlib", "lz4")


@dataclass(frozen=True)
class Layout:
    """A local array whose chunk files segscore decodes itself (:func:`read_window`): a regular
    grid of C-order chunks, each file the raw bytes of one whole chunk in this machine's byte
    order, or one compressor's stream of them. Everything else (sharding, transpose, checksums,
    filters, F order, a foreign byte order, other codecs) is read by zarr-python."""

    chunk_shape: tuple
    dtype: str
    compressor: tuple | None  # the numcodecs config, as sorted (key, value) pairs
    prefix: str  # of a chunk's key: "c/" (zarr 3's default encoding) or ""
    separator: str

    def key(self, coords) -> str:
        return self.prefix + self.separator.join(map(str, coords))

    @property
    def nbytes(self) -> int:
        return _product(self.chunk_shape) * np.dtype(self.dtype).itemsize

    def decode(self, raw) -> np.ndarray:
        """One chunk file's bytes as the chunk; raises where they do not decode to exactly one chunk."""
        data = raw if self.compressor is None else _codec(self.compressor).decode(raw)
        flat = np.frombuffer(data, self.dtype)
        if flat.nbytes != self.nbytes:
            raise ValueError(f"decoded {flat.nbytes} bytes, not {self.nbytes}")
        return flat.reshape(self.chunk_shape)


_CODECS: dict = {}


def _codec(config: tuple):
    codec = _CODECS.get(config)
    if codec is None:
        import numcodecs

        codec = _CODECS[config] = numcodecs.get_codec(dict(config))
    return codec


def _native(dtype: np.dtype) -> bool:
    little = sys.byteorder == "little"
    return dtype.kind in "biufc" and (dtype.byteorder in "|=" or (dtype.byteorder == "<") == little)


def _separator(conf, default: str) -> str | None:
    sep = (conf or {}).get("separator", default) if isinstance(conf, dict) or conf is None else None
    return sep if sep in ("/", ".") else None


def layout_v3(meta: dict) -> Layout | None:
    """The :class:`Layout` of a zarr 3 array's ``zarr.json``, or None where zarr-python must read it."""
    plan = plan_v3(meta)
    if plan is None or plan.unsupported or plan.encoding is None or plan.encoding.tail or meta.get(
            "storage_transformers") or len(plan.chunk_shape) != len(meta.get("shape") or ()):
        return None
    dtype = np.dtype(meta["data_type"])
    codecs = meta["codecs"]
    first = codecs[0] if isinstance(codecs[0], dict) else {"name": codecs[0]}
    endian = (first.get("configuration") or {}).get("endian")
    if _codec_name(first) != "bytes" or not _native(dtype) or (dtype.itemsize > 1 and endian != sys.byteorder):
        return None
    compressor = None
    if len(codecs) == 2:
        c = codecs[1] if isinstance(codecs[1], dict) else {"name": codecs[1]}
        if c.get("name") not in DIRECT_V3:
            return None
        compressor = (("id", c["name"]),)
    elif len(codecs) > 2:
        return None
    keys = meta.get("chunk_key_encoding")
    if not isinstance(keys, dict) or keys.get("name") not in ("default", "v2"):
        return None
    default = keys["name"] == "default"
    sep = _separator(keys.get("configuration"), "/" if default else ".")
    if sep is None:
        return None
    return Layout(plan.chunk_shape, dtype.str, compressor, "c" + sep if default else "", sep)


def layout_v2(meta: dict) -> Layout | None:
    """The :class:`Layout` of a zarr 2 array's ``.zarray``, or None where zarr-python must read it."""
    plan = plan_v2(meta)
    if plan is None or plan.unsupported or meta.get("filters") or meta.get("order", "C") != "C" or len(
            plan.chunk_shape) != len(meta.get("shape") or ()):
        return None
    dtype = np.dtype(meta["dtype"])
    if not _native(dtype):
        return None
    compressor = meta.get("compressor")
    if compressor is not None:
        if compressor.get("id") not in DIRECT_V2:
            return None
        compressor = tuple(sorted((str(k), v) for k, v in compressor.items()))
        if any(isinstance(v, (dict, list)) for _, v in compressor):
            return None
    sep = meta.get("dimension_separator", ".")
    if sep not in ("/", "."):
        return None
    return Layout(plan.chunk_shape, dtype.str, compressor, "", sep)


# ---------------------------------------------------------------------------------------------
# decoded sizes, read from headers or by a streaming decoder stopped past the cap


class _Corrupt(Exception):
    """The encoded bytes do not parse (cut short, not the codec's format)."""


def _le(buf, lo, n) -> int:
    if lo + n > len(buf):
        raise _Corrupt("cut short")
    return int.from_bytes(buf[lo:lo + n], "little")


def zstd_size(buf, cap: int) -> int:
    """The decoded size of zstd frames (their content sizes; a frame without one: the most its
    blocks can produce), stopping once past ``cap``."""
    pos, total, n = 0, 0, len(buf)
    if n == 0:
        raise _Corrupt("empty")
    while pos < n:
        magic = _le(buf, pos, 4)
        if 0x184D2A50 <= magic <= 0x184D2A5F:  # a skippable frame
            pos += 8 + _le(buf, pos + 4, 4)
            if pos > n:
                raise _Corrupt("cut short")
            continue
        if magic != 0xFD2FB528:
            raise _Corrupt("not a zstd frame")
        fhd = _le(buf, pos + 4, 1)
        pos += 5
        if fhd & 0x08:
            raise _Corrupt("a reserved bit is set")
        single = (fhd >> 5) & 1
        window = None
        if not single:
            wd = _le(buf, pos, 1)
            pos += 1
            base = 1 << ((wd >> 3) + 10)
            window = base + (base >> 3) * (wd & 7)
        pos += (0, 1, 2, 4)[fhd & 3]
        fcs_len = (single, 2, 4, 8)[fhd >> 6]
        fcs = None
        if fcs_len:
            fcs = _le(buf, pos, fcs_len) + (256 if fcs_len == 2 else 0)
            pos += fcs_len
            if single:
                window = fcs
            if total + fcs > cap:
                return total + fcs
        block_max = min(window, 1 << 17) if window is not None else 1 << 17
        bound = 0
        while True:
            head = _le(buf, pos, 3)
            pos += 3
            kind, size = (head >> 1) & 3, head >> 3
            if kind == 3:
                raise _Corrupt("a reserved block type")
            pos += 1 if kind == 1 else size
            bound += block_max if kind == 2 else size
            if pos > n:
                raise _Corrupt("cut short")
            if fcs is None and total + bound > cap:
                return total + bound
            if head & 1:
                break
        if fhd & 0x04:
            pos += 4
            if pos > n:
                raise _Corrupt("cut short")
        total += fcs if fcs is not None else bound
    return total


def blosc_size(buf, cap: int) -> int:
    """The decoded size a blosc (1) header states (its compressed size checked against the bytes)."""
    if len(buf) < 16:
        raise _Corrupt("cut short")
    if _le(buf, 12, 4) != len(buf):
        raise _Corrupt("its header's size is not the chunk's")
    return _le(buf, 4, 4)


def lz4_size(buf, cap: int) -> int:
    """The decoded size numcodecs' LZ4 states in its 4-byte prefix."""
    return _le(buf, 0, 4)


def _stream_size(new, buf, cap: int, *, members: bytes | None = None) -> int:
    """Decoded size by a streaming decoder, stopped one byte past ``cap``; ``members``: the magic
    of a further member (gzip's multi-member streams)."""
    total = 0
    data = buf
    while True:
        d = new()
        try:
            out = d.decompress(data, cap + 1 - total)
        except Exception as exc:  # noqa: BLE001 - zlib.error, OSError, LZMAError: corrupt data
            raise _Corrupt(type(exc).__name__) from None
        total += len(out)
        del out
        if total > cap:
            return total
        if not d.eof:
            raise _Corrupt("cut short")
        data = d.unused_data
        if not members or not bytes(data[:len(members)]) == members:
            return total


def _gzip_size(buf, cap):
    import zlib

    return _stream_size(lambda: zlib.decompressobj(wbits=31), buf, cap, members=b"\x1f\x8b")


def _zlib_size(buf, cap):
    import zlib

    return _stream_size(lambda: zlib.decompressobj(wbits=15), buf, cap)


def _bz2_size(buf, cap):
    import bz2

    return _stream_size(bz2.BZ2Decompressor, buf, cap, members=b"BZh")


def _lzma_size(buf, cap):
    import lzma

    return _stream_size(lzma.LZMADecompressor, buf, cap)


SIZERS = {"zstd": zstd_size, "blosc": blosc_size, "lz4": lz4_size, "gzip": _gzip_size, "zlib": _zlib_size,
          "bz2": _bz2_size, "lzma": _lzma_size}


def decoded_size(buf, encoding: Encoding) -> int:
    """The most bytes ``buf`` (one chunk as stored) decodes to, or past ``encoding.cap``; raises
    :class:`_Corrupt` where the bytes do not parse."""
    if encoding.tail:
        if len(buf) < encoding.tail:
            raise _Corrupt("cut short")
        buf = buf[:len(buf) - encoding.tail]
    if encoding.compressor is None:
        return len(buf)
    return SIZERS[encoding.compressor](buf, encoding.cap)


# ---------------------------------------------------------------------------------------------
# the store


@dataclass
class _Counts:
    read: set = field(default_factory=set)
    absent: set = field(default_factory=set)


def _split(key: str) -> tuple[str, str]:
    prefix, _, last = key.rpartition("/")
    return prefix, last


def _join(prefix: str, key: str) -> str:
    return f"{prefix}/{key}" if prefix else key


class ChunkBook:
    """What every segscore zarr store knows and does without zarr-python: the arrays' plans and
    layouts learnt from their metadata documents, the chunk keys read and absent, the checks of a
    chunk's bytes before they are decoded, and (on a local disk) the chunk files it decodes itself
    (:meth:`direct`). :class:`CappedStore` adds zarr-python's store interface to it."""

    def _init_book(self, name: str, root: str | None) -> None:
        self.name = name
        self.plans: dict[str, Plan] = {}
        self.counts: dict[str, _Counts] = {}
        self.layouts: dict[str, Layout] = {}  # the arrays whose chunk files segscore decodes itself
        self._root = root

    def __getstate__(self):
        state = dict(self.__dict__)
        state["counts"] = {}  # a copy (a dask worker's) counts its own reads
        return state

    @property
    def is_local(self) -> bool:
        """Whether the store is a local folder (its chunk reads use the CPU, not the network)."""
        return self._root is not None

    # -- what the store knows

    def absent(self, array_path: str = "") -> tuple[int, int]:
        """``(absent, read)``: the distinct chunk keys of the array at ``array_path`` read so
        far, and how many of them were absent (read as the fill value)."""
        c = self.counts.get(array_path.strip("/"))
        return (len(c.absent), len(c.read)) if c is not None else (0, 0)

    def add_counts(self, array_path: str, read, absent) -> None:
        """Count the chunk keys ``read`` (and ``absent``) of the array at ``array_path`` as read
        here: what a copy of this store on a dask worker read (:func:`segscore.io.sources.absorb_counts`)."""
        c = self.counts.setdefault(array_path.strip("/"), _Counts())
        c.read.update(read)
        c.absent.update(absent)

    def check_array(self, array_path: str = "") -> None:
        """Refuse, before any chunk is read, an array whose chunks the store cannot bound, or
        whose declared chunk is larger than the read budget (:mod:`segscore.io.budget`, where
        it is present: zarr decodes a chunk whole, whatever window is asked of it)."""
        key = array_path.strip("/")
        plan = self.plans.get(key)
        if plan is None:
            return
        where = self.name if not key or self.name.rstrip("/").endswith("/" + key) else _join(self.name, key)
        if plan.unsupported:
            raise ChunkRefused(f"{where}: its chunks use {plan.unsupported}, whose decoded size segscore "
                               f"cannot bound before decoding; re-write the store with zstd, blosc, gzip or "
                               f"no compressor")
        try:
            from segscore.io import budget
        except ImportError:  # no read budget in this tree: the decode cap alone bounds a chunk
            return
        budget.check_bytes(where, plan.decoded_bytes,
                           fix=f"its {' x '.join(map(str, plan.chunk_shape))} chunks are decoded whole: "
                               f"re-write the store with smaller chunks")

    def _learn(self, key: str, raw) -> None:
        prefix, last = _split(key)
        try:
            doc = json.loads(bytes(raw))
        except (ValueError, RecursionError):
            return
        if not isinstance(doc, dict):
            return
        if last == "zarr.json":
            plan = plan_v3(doc)
            if plan is not None:
                self.plans[prefix] = plan
                self._learn_layout(prefix, layout_v3, doc)
            consolidated = doc.get("consolidated_metadata")
            members = consolidated.get("metadata") if isinstance(consolidated, dict) else None
            for sub, meta in (members.items() if isinstance(members, dict) else ()):
                plan = plan_v3(meta)
                if plan is not None and isinstance(sub, str):
                    self.plans.setdefault(_join(prefix, sub.strip("/")), plan)
        elif last == ".zarray":
            plan = plan_v2(doc)
            if plan is not None:
                self.plans[prefix] = plan
                self._learn_layout(prefix, layout_v2, doc)
        elif last == ".zmetadata":
            members = doc.get("metadata")
            for sub, meta in (members.items() if isinstance(members, dict) else ()):
                if isinstance(sub, str) and _split(sub)[1] == ".zarray":
                    plan = plan_v2(meta)
                    if plan is not None:
                        self.plans.setdefault(_join(prefix, _split(sub)[0]), plan)

    def _learn_layout(self, prefix: str, layout_of, doc) -> None:
        layout = layout_of(doc) if self._root is not None else None
        if layout is None:
            self.layouts.pop(prefix, None)
        else:
            self.layouts[prefix] = layout

    def direct(self, array_path: str = ""):
        """``read(coords)``: one chunk of the array at ``array_path``, decoded by segscore from its
        file in the local folder (None where it is absent), counted and capped as :meth:`get`
        counts and caps; or None where zarr-python reads the array's chunks (a remote store, a
        layout :class:`Layout` does not describe)."""
        key = array_path.strip("/")
        layout, plan = self.layouts.get(key), self.plans.get(key)
        if layout is None or plan is None or plan.unsupported or plan.encoding is None:
            return None
        import functools

        return functools.partial(self._read_chunk, key, layout, plan)

    def _read_chunk(self, array: str, layout: Layout, plan: Plan, coords):
        key = _join(array, layout.key(coords))
        counts = self.counts.setdefault(array, _Counts())
        counts.read.add(key)
        if not self._stat(key, plan.max_stored, "chunk"):
            counts.absent.add(key)
            return None
        try:
            with open(os.path.join(self._root, key), "rb") as f:
                raw = f.read(plan.max_stored + 1)
        except FileNotFoundError:  # removed since its stat
            counts.absent.add(key)
            return None
        if len(raw) > plan.max_stored:  # grown since its stat
            self._stat(key, plan.max_stored, "chunk")
        self._check_one(key, memoryview(raw), plan.encoding, plan)
        return layout.decode(raw)

    def _stat(self, key: str, limit: int, what: str) -> bool:
        """On a local disk: whether ``key`` is there; refuse what is not a regular file, or is
        larger than ``limit`` bytes."""
        path = os.path.join(self._root, key)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            raise ChunkRefused(f"{self.name}: {what} {key} cannot be read ({exc.strerror}); {_FIX}") from None
        if stat.S_ISDIR(st.st_mode):
            if what == "metadata":
                return False
            raise ChunkRefused(f"{self.name}: {what} {key} is a folder, not a file; {_FIX}")
        if not stat.S_ISREG(st.st_mode):
            raise ChunkRefused(f"{self.name}: {what} {key} is not a regular file (a FIFO, socket or device); "
                               f"give a store of regular files")
        if st.st_size > limit:
            raise ChunkRefused(f"{self.name}: {what} {key} holds {st.st_size:,} bytes, more than any "
                               f"encoding of it can ({limit:,}); {_FIX}")
        return True

    def _corrupt(self, key, why):
        raise ChunkRefused(f"{self.name}: chunk {key} does not decode ({why}); {_FIX}")

    def _check_one(self, key, buf, encoding: Encoding, plan: Plan) -> None:
        try:
            size = decoded_size(buf, encoding)
        except _Corrupt as exc:
            self._corrupt(key, f"{encoding.compressor or 'raw'} data {exc}")
        if size > encoding.cap:
            shape = " x ".join(map(str, plan.chunk_shape))
            raise ChunkRefused(f"{self.name}: chunk {key} would decode to more than {encoding.cap:,} bytes "
                               f"(at least {size:,}), the most a {shape} {plan.dtype} chunk holds; the chunk "
                               f"is corrupt or hostile: {_FIX}")


# ---------------------------------------------------------------------------------------------
# a local array of the plainest layout, opened without zarr-python


#: zarr 3 data types an array opened without zarr-python may have
PLAIN_V3_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
                  "float64")
_V3_ARRAY_KEYS = frozenset({"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
                            "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names"})
_V3_ARRAY_REQUIRED = frozenset({"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
                                "fill_value", "codecs"})
_V3_GROUP_KEYS = frozenset({"zarr_format", "node_type", "attributes", "consolidated_metadata"})
_V2_ARRAY_KEYS = frozenset({"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters",
                            "dimension_separator"})
_V2_ARRAY_REQUIRED = _V2_ARRAY_KEYS - {"dimension_separator"}
_SPECIAL_FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def plain_fill_value(value, dtype: np.dtype):
    """A metadata document's fill value as a scalar of ``dtype``, or None where it is not one of
    the plain forms (a JSON number in range, a boolean for a bool array, "NaN", "Infinity",
    "-Infinity" for a float array)."""
    if dtype.kind == "b":
        return np.bool_(value) if isinstance(value, bool) else None
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(value) if _is_int(value) and info.min <= value <= info.max else None
    if dtype.kind == "f":
        if isinstance(value, str):
            value = _SPECIAL_FLOATS.get(value)
            return None if value is None else dtype.type(value)
        if _is_int(value) or isinstance(value, float):
            with np.errstate(over="ignore"):
                out = dtype.type(value)
            return out if np.isfinite(out) or not np.isfinite(float(value)) else None
    return None


def _plain_shape(shape, ndim: int) -> tuple | None:
    if isinstance(shape, list) and len(shape) == ndim and all(_is_int(v) and v >= 0 for v in shape):
        return tuple(shape)
    return None


@dataclass(frozen=True)
class PlainArray:
    """A local zarr array opened without zarr-python (:func:`open_plain`): all that
    :class:`segscore.io.sources.ZarrSource` asks of an array; its chunks are read by the
    store's :meth:`ChunkBook.direct`."""

    shape: tuple
    dtype: np.dtype
    chunks: tuple
    fill_value: object
    path: str


class LocalBook(ChunkBook):
    """The store of a local folder opened without zarr-python (:func:`open_plain`)."""

    def __init__(self, root: str, name: str):
        self._init_book(name, root)

    def _doc(self, key: str):
        """The JSON object of the metadata document at ``key`` (learnt as the zarr-python path
        learns it), or None where it is not one."""
        with open(os.path.join(self._root, key), "rb") as f:
            raw = f.read(MAX_METADATA_BYTES + 1)
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        if not isinstance(doc, dict):
            return None
        self._learn(key, raw)
        return doc

    def node(self, key: str):
        """``(kind, zarr_format, document)`` of the node at ``key`` where its metadata is of the
        plain forms :func:`open_plain` takes, else None. Every metadata name of the node is checked
        as the zarr-python path checks it (a FIFO or a device is refused in one line)."""
        present = {d for d in METADATA if self._stat(_join(key, d), MAX_METADATA_BYTES, "metadata")}
        if ".zattrs" in present:
            attrs = self._doc(_join(key, ".zattrs"))
            if attrs is None or "zarr.json" in present:
                return None
            present.discard(".zattrs")
        if len(present) != 1:
            return None
        name = present.pop()
        doc = self._doc(_join(key, name))
        if doc is None:
            return None
        if name == "zarr.json":
            if doc.get("zarr_format") != 3 or not isinstance(doc.get("attributes", {}), dict):
                return None
            if doc.get("node_type") == "group":
                return ("group", 3, doc) if set(doc) <= _V3_GROUP_KEYS and doc.get(
                    "consolidated_metadata") is None else None
            return ("array", 3, doc) if doc.get("node_type") == "array" else None
        if name == ".zgroup":
            return ("group", 2, doc) if doc == {"zarr_format": 2} else None
        if name == ".zarray":
            return ("array", 2, doc) if doc.get("zarr_format") == 2 and not isinstance(
                doc.get("zarr_format"), bool) else None
        return None  # consolidated metadata: zarr-python reads it

    def array(self, key: str, fmt: int, doc: dict) -> PlainArray | None:
        """The array of ``doc`` at ``key`` where it is of the plain forms, else None."""
        if fmt == 3:
            if not (_V3_ARRAY_REQUIRED <= set(doc) <= _V3_ARRAY_KEYS) or doc["data_type"] not in PLAIN_V3_TYPES \
                    or doc.get("storage_transformers", []) != []:
                return None
            names = doc.get("dimension_names")
            if names is not None and not (isinstance(names, list) and all(
                    n is None or isinstance(n, str) for n in names) and len(names) == len(doc["shape"] or ())):
                return None
            dtype = np.dtype(doc["data_type"])
        else:
            if not (_V2_ARRAY_REQUIRED <= set(doc) <= _V2_ARRAY_KEYS) or not isinstance(doc["dtype"], str) \
                    or len(doc["dtype"]) != 3 or doc["dtype"][0] not in "<>|" or doc["dtype"][1] not in "biuf" \
                    or doc["dtype"][2] not in "1248":
                return None
            dtype = np.dtype(doc["dtype"])
        layout = self.layouts.get(key)
        if layout is None or self.direct(key) is None:
            return None
        shape = _plain_shape(doc.get("shape"), len(layout.chunk_shape))
        fill = plain_fill_value(doc.get("fill_value"), dtype)
        if shape is None or fill is None or np.dtype(layout.dtype) != dtype:
            return None
        if layout.compressor is not None:
            try:  # a compressor's configuration numcodecs refuses: zarr-python says why
                _codec(layout.compressor)
            except Exception:  # noqa: BLE001
                return None
        return PlainArray(shape, dtype, layout.chunk_shape, fill, key)


def _plain_level(level) -> str | None:
    if not isinstance(level, str):
        return None
    parts = level.strip("/").split("/")
    return "/".join(parts) if all(p and p not in (".", "..") and "\\" not in p for p in parts) else None


def open_plain(path, level: str | None = None, name: str | None = None) -> tuple[PlainArray, LocalBook] | None:
    """The array at the local folder ``path`` (or its member ``level`` where ``path`` is a group),
    opened without importing zarr-python, and its store: where every metadata document on the way
    is of the plainest forms (zarr 3 or 2, no consolidated metadata, a plain data type and fill
    value) and the array's chunks are of a :class:`Layout`. None for anything else, which
    zarr-python opens (and refuses, with its own reason). A metadata name that is a FIFO, a device
    or too large is refused in one line, as through zarr-python."""
    root = os.fspath(path)
    book = LocalBook(root, name or root)
    node = book.node("")
    if node is None:
        return None
    key = ""
    if node[0] == "group":
        key = _plain_level(level)
        if key is None:
            return None
        fmt = node[1]
        node = book.node(key)
        if node is None or node[1] != fmt:
            return None
    if node[0] != "array":
        return None
    array = book.array(key, node[1], node[2])
    return (array, book) if array is not None else None


def _make_store_class():
    from zarr.abc.store import RangeByteRequest, SuffixByteRequest
    from zarr.storage import LocalStore, WrapperStore

    class CappedStore(ChunkBook, WrapperStore):
        """A read-only :class:`zarr.storage.WrapperStore` that counts absent chunks and refuses a chunk
        that would decode past its declared size (see :mod:`segscore.io.zarr_store`)."""

        def __init__(self, store, name: str | None = None):
            super().__init__(store)
            self.inner = store
            self._init_book(name or str(store), os.fspath(store.root) if isinstance(store, LocalStore) else None)

        async def _plan_for(self, key: str, prototype) -> tuple[str, Plan]:
            parts = key.split("/")
            ancestors = ["/".join(parts[:i]) for i in range(len(parts) - 1, -1, -1)]
            for prefix in ancestors:
                if prefix in self.plans:
                    return prefix, self.plans[prefix]
            for prefix in ancestors:  # metadata zarr did not read through this store: read it
                for doc in ("zarr.json", ".zarray"):
                    value = await self.get(_join(prefix, doc), prototype)
                    if value is not None and prefix in self.plans:
                        return prefix, self.plans[prefix]
            raise ChunkRefused(f"{self.name}: key {key} belongs to no array whose metadata the store holds; "
                               f"{_FIX}")

        # -- reads

        async def get(self, key, prototype=None, byte_range=None):
            if prototype is None:
                from zarr.buffer import default_buffer_prototype

                prototype = default_buffer_prototype()
            prefix, last = _split(key)
            if last in METADATA:
                if self._root is not None and not self._stat(key, MAX_METADATA_BYTES, "metadata"):
                    return None
                value = await self._read(key, prototype, byte_range, MAX_METADATA_BYTES)
                if value is not None and byte_range is None:
                    if len(value) > MAX_METADATA_BYTES:
                        raise ChunkRefused(f"{self.name}: metadata {key} holds over {MAX_METADATA_BYTES:,} "
                                           f"bytes; {_FIX}")
                    self._learn(key, value.to_bytes())
                return value
            array, plan = await self._plan_for(key, prototype)
            counts = self.counts.setdefault(array, _Counts())
            counts.read.add(key)
            if plan.unsupported:
                self.check_array(array)
            if self._root is not None and not self._stat(key, plan.max_stored, "chunk"):
                counts.absent.add(key)
                return None
            value = await self._read(key, prototype, byte_range, plan.max_stored)
            if value is None:
                counts.absent.add(key)
                return None
            self._check(key, value, plan, byte_range)
            return value

        async def _read(self, key, prototype, byte_range, limit: int):
            """The inner store's ``get``, bounded to ``limit`` bytes where the inner store can bound a
            read as it is done (the remote store's ``get_bounded``: a server's answer); a local file
            was bounded by :meth:`_stat` before it is read."""
            bounded = getattr(self.inner, "get_bounded", None)
            if bounded is None:
                return await self.inner.get(key, prototype, byte_range)
            return await bounded(key, prototype, byte_range, limit=limit)

        async def get_partial_values(self, prototype, key_ranges):
            import asyncio

            return list(await asyncio.gather(*(self.get(k, prototype, r) for k, r in key_ranges)))

        def _check(self, key, value, plan: Plan, byte_range) -> None:
            buf = memoryview(value.as_numpy_array()).cast("B")
            if plan.shard is None:
                if byte_range is None:
                    self._check_one(key, buf, plan.encoding, plan)
                return
            shard = plan.shard
            if byte_range is None:  # a whole shard: its index, then each inner chunk
                if len(buf) < shard.index_bytes:
                    self._corrupt(key, "its shard index is cut short")
                at = len(buf) - shard.index_bytes if shard.index_at_end else 0
                index = np.frombuffer(buf[at:at + 16 * shard.n], "<u8").reshape(-1, 2)
                for i, (offset, nbytes) in enumerate(index.tolist()):
                    if offset == _UNSET and nbytes == _UNSET:
                        continue
                    if offset + nbytes > len(buf):
                        self._corrupt(key, f"its shard index points past its end (inner chunk {i})")
                    self._check_one(f"{key} (inner chunk {i})", buf[offset:offset + nbytes], shard.inner, plan)
                return
            if isinstance(byte_range, SuffixByteRequest) and byte_range.suffix == shard.index_bytes or (
                    isinstance(byte_range, RangeByteRequest) and byte_range.start == 0
                    and byte_range.end == shard.index_bytes and not shard.index_at_end):
                return  # the index: fixed size
            if isinstance(byte_range, RangeByteRequest):
                self._check_one(f"{key} (bytes {byte_range.start}-{byte_range.end})", buf, shard.inner, plan)

    CappedStore.__module__ = __name__
    CappedStore.__qualname__ = "CappedStore"
    return CappedStore


def __getattr__(name):  # the store class is built on first use, so importing this module stays light
    if name == "CappedStore":
        cls = globals().get("_CappedStore") or _make_store_class()  # built once: pickle finds it by name (dask workers)
        globals()["_CappedStore"] = globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# reading a window chunk by chunk: every fetch and decode has ended before a failure is raised


#: chunk reads of one window run at once (zarr-python's own default ``async.concurrency``): a remote
#: store's fetches wait on the network, so many overlap
READ_CONCURRENCY = 10
_POOL: dict = {}  # the thread pools of chunk reads by size, made on first use (per process)


def local_concurrency() -> int:
    """Chunk reads at once from a local folder: its reads and decodes use the CPU, so one per core
    (at most :data:`READ_CONCURRENCY`); more only add threads, each of which keeps its own
    allocator arena of freed chunk buffers (about 250 MB more peak RSS on a 2-core machine
    reading 2 GB zarr volumes, issue 36)."""
    return max(1, min(READ_CONCURRENCY, os.cpu_count() or 1))


def _pool(size: int = READ_CONCURRENCY):
    if size not in _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL[size] = ThreadPoolExecutor(size, thread_name_prefix="segscore-chunk")
    return _POOL[size]


def _forget_pool() -> None:  # a forked child has none of its parent's threads: it makes its own pool
    _POOL.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def chunk_windows(window: tuple, chunks: tuple | None):
    """The pieces of ``window`` (a tuple of slices with explicit bounds) that each lie in one chunk
    of the grid ``chunks``, in C order: ``(piece, where)`` with ``piece`` in the array's coordinates
    and ``where`` in the window's."""
    import itertools

    if chunks is None or len(chunks) != len(window):
        yield window, tuple(slice(0, s.stop - s.start) for s in window)
        return
    axes = []
    for s, c in zip(window, chunks):
        c = max(int(c), 1)
        edges = [s.start, *range((s.start // c + 1) * c, s.stop, c), s.stop] if s.stop > s.start \
            else [s.start, s.stop]
        axes.append([(slice(a, b), slice(a - s.start, b - s.start)) for a, b in zip(edges, edges[1:])])
    for combo in itertools.product(*axes):
        yield tuple(p for p, _ in combo), tuple(w for _, w in combo)


def read_window(array, window: tuple, *, local: bool = False, direct=None) -> np.ndarray:
    """``array[window]`` (a zarr array, read through zarr-python's public synchronous API), one
    chunk per call, :data:`READ_CONCURRENCY` calls at once (:func:`local_concurrency` for a
    ``local`` store), every call ended before the result
    (or the first failure, in chunk order) is returned. With ``direct`` (the store's
    :meth:`CappedStore.direct` reader of the array), each chunk is read and decoded by it
    instead: a file read and one decoder call, both of which release the GIL, where zarr-python
    takes about 3 ms of Python per chunk through its event loop (issue 36).

    zarr-python reads a selection's chunks as concurrent tasks on its event loop and raises the
    first failure while the others still run; a command that then reports it and exits leaves
    asyncio printing each of them ("Task was destroyed but it is pending", "Event loop is
    closed") after the one-line refusal. A call that touches one chunk has no other task to
    leave behind, whatever fails in it (a fetch, a codec, a store's refusal), local or remote;
    and the failure reported is the same on every run (the first failing chunk in C order)."""
    chunks = getattr(array, "chunks", None)
    pieces = list(chunk_windows(window, chunks))
    out = np.empty(tuple(s.stop - s.start for s in window), dtype=np.dtype(array.dtype))
    if direct is not None:
        fill = array.fill_value

        def one(piece, where):
            coords = tuple(p.start // c for p, c in zip(piece, chunks))
            chunk = direct(coords)
            out[where] = fill if chunk is None else chunk[
                tuple(slice(p.start - i * c, p.stop - i * c) for p, i, c in zip(piece, coords, chunks))]

        return _each_piece(out, pieces, one, getattr(_CALLER, "serial", False), local_concurrency())

    def one(piece, where):
        out[where] = array[piece]

    return _each_piece(out, pieces, one, False, local_concurrency() if local else READ_CONCURRENCY)


def _each_piece(out, pieces, one, serial: bool, size: int) -> np.ndarray:
    """``one(piece, where)`` for every piece, one after another (``serial``, or a single piece) or
    on the chunk pool of ``size`` threads; every call has ended before the first failure in C order
    is raised: a refusal or a MemoryError as it is, any other as :class:`ChunkUnreadable`."""
    if serial or len(pieces) == 1:
        for piece, where in pieces:
            try:
                one(piece, where)
            except (ScoreError, MemoryError):
                raise
            except Exception as exc:  # noqa: BLE001 - a codec's or a store's own failure, named
                raise ChunkUnreadable(piece) from exc
        return out
    from concurrent.futures import wait

    futures = [_pool(size).submit(one, piece, where) for piece, where in pieces]
    wait(futures)
    for future, (piece, _) in zip(futures, pieces):
        exc = future.exception()
        if isinstance(exc, (ScoreError, MemoryError)):
            raise exc
        if exc is not None:
            raise ChunkUnreadable(piece) from exc
    return out


_CALLER = threading.local()


def read_chunks_in_caller() -> None:
    """From now on, the calling thread reads and decodes a window's local chunk files itself, one
    after another, instead of handing them to the chunk pool: for the engine's worker threads
    (:func:`segscore.engine.executor.reduce_windows`), which already run one task per core, so a
    second pool only adds hand-offs between threads (0.07 s of the 1.07 s of the 4x-area ``auc``).
    Reads through zarr-python (remote stores, other layouts) are not affected."""
    _CALLER.serial = True


class ChunkUnreadable(Exception):
    """zarr-python (a codec, a store) failed reading the chunk that holds ``piece`` (a tuple of
    slices); the caller names its file."""

    def __init__(self, piece):
        self.piece = piece
        super().__init__(", ".join(f"{s.start}:{s.stop}" for s in piece))


def capped(store, name: str | None = None):
    """``store`` (a zarr 3 store) wrapped so that every read counts absent chunks and is capped."""
    return __getattr__("CappedStore")(store, name)


def local(path, name: str | None = None):
    """A read-only, capped store of the local folder ``path``."""
    from zarr.storage import LocalStore

    return capped(LocalStore(os.fspath(path), read_only=True), name or os.fspath(path))
