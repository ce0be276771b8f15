"""A small reader for the plain zarr arrays label stores are made of, without zarr-python.

Label pyramids are local folders of regularly chunked arrays with one compressor. Reading
those needs the metadata, a chunk's file name and its decompressor; zarr-python's import
and its asynchronous machinery cost more than the whole read of a label band. This module
reads exactly that case, zarr formats 2 and 3, and raises :class:`Unsupported` for anything
else (sharding, filters, Fortran order, other codecs, remote stores), which the caller hands
to zarr-python. Reads are stateless, so threads may share an array.

Malformed metadata (a missing or mistyped ``shape``, ``chunks``, ``dtype``, ``fill_value``,
codec list or separator; chunks of 0) and a chunk that does not decode to its declared size
are refused with :class:`Malformed` (a ScoreError): one line naming the metadata file or the
chunk and the fix, where zarr-python would raise its own error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from segscore.errors import ScoreError


class Unsupported(Exception):
    """Not a layout this reader handles; use zarr-python."""


class Malformed(ScoreError):
    """A store whose metadata or a chunk is broken: refused, naming the file and the fix."""


def _positive_ints(value, n=None) -> bool:
    return (isinstance(value, list) and (n is None or len(value) == n)
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value))


def _shape_ok(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)


def _require(ok: bool, where, what: str, value, want: str) -> None:
    if not ok:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise Malformed(f"{where}: {what} is {shown}; it should be {want} (restore the store's metadata)")


_V3_TYPES = {"bool": "|b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
             "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4", "float64": "f8"}


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        raise Malformed(f"{path}: not valid JSON; restore the store's metadata") from None
    if not isinstance(data, dict):
        raise Malformed(f"{path}: not a JSON object; restore the store's metadata")
    return data


def open_node(path):
    """The array or group at a local folder ``path``."""
    p = Path(os.fspath(path))
    if not p.is_dir():
        raise Unsupported("not a local folder")
    meta = _load(p / "zarr.json")
    if meta is not None:
        if meta.get("zarr_format") != 3:
            raise Malformed(f"{p / 'zarr.json'}: zarr_format is {meta.get('zarr_format')!r}; a zarr.json "
                            f"declares zarr_format 3 (restore the store's metadata)")
        if meta.get("node_type") == "group":
            return Group(p)
        if meta.get("node_type") == "array":
            return Array.from_v3(p, meta)
        raise Malformed(f"{p / 'zarr.json'}: node_type is {meta.get('node_type')!r}; it should be \"array\" or "
                        f"\"group\" (restore the store's metadata)")
    meta = _load(p / ".zarray")
    if meta is not None:
        return Array.from_v2(p, meta)
    if (p / ".zgroup").exists():
        return Group(p)
    raise Unsupported("no zarr metadata")


class Group:
    """A local zarr group: its members are the sub-folders holding zarr metadata."""

    def __init__(self, path: Path):
        self.path = path

    def keys(self):
        return sorted(c.name for c in self.path.iterdir()
                      if c.is_dir() and any((c / m).exists() for m in ("zarr.json", ".zarray", ".zgroup")))

    def __contains__(self, key) -> bool:
        return key in self.keys()

    def __getitem__(self, key):
        if key not in self:
            raise KeyError(key)
        return open_node(self.path / key)


class Array:
    """A regularly chunked, C-ordered local zarr array with at most one decompressor."""

    def __init__(self, path: Path, shape, chunks, dtype, fill_value, decoder, chunk_name, meta_file=None):
        self.path = path
        self.meta_file = meta_file or path
        self.shape = tuple(int(n) for n in shape)
        self.chunks = tuple(int(c) for c in chunks)
        self.dtype = np.dtype(dtype)
        self.fill_value = fill_value
        self._decoder = decoder
        self._chunk_name = chunk_name
        if len(self.chunks) != len(self.shape) or any(c < 1 for c in self.chunks):
            raise Malformed(f"{self.meta_file}: chunks {list(self.chunks)} do not fit shape {list(self.shape)}; "
                            f"each axis needs a chunk size of at least 1 (restore the store's metadata)")

    @classmethod
    def from_v2(cls, path: Path, meta: dict):
        where = path / ".zarray"
        _require(meta.get("zarr_format") == 2, where, "zarr_format", meta.get("zarr_format"), "2")
        _require(_shape_ok(meta.get("shape")), where, "shape", meta.get("shape"), "a list of whole numbers >= 0")
        _require(_positive_ints(meta.get("chunks"), len(meta["shape"])), where, "chunks", meta.get("chunks"),
                 f"a list of {len(meta['shape'])} whole numbers >= 1")
        _require(meta.get("order", "C") in ("C", "F"), where, "order", meta.get("order"), '"C" or "F"')
        if meta.get("order", "C") != "C" or meta.get("filters"):
            raise Unsupported("v2 layout")
        try:
            dtype = np.dtype(meta.get("dtype"))
            if meta.get("dtype") is None:
                raise TypeError
        except (TypeError, ValueError):
            raise Malformed(f"{where}: dtype is {meta.get('dtype')!r}; it should be a numpy type string such as "
                            f"\"|u1\" (restore the store's metadata)") from None
        if dtype.kind not in "biuf":
            raise Unsupported("v2 dtype")
        compressor = meta.get("compressor")
        decoder = None
        if compressor is not None:
            import numcodecs

            try:
                decoder = numcodecs.get_codec(dict(compressor)).decode
            except Exception:  # noqa: BLE001
                raise Unsupported("v2 compressor") from None
        sep = meta.get("dimension_separator") or "."
        _require(sep in (".", "/"), where, "dimension_separator", sep, '"." or "/"')
        return cls(path, meta["shape"], meta["chunks"], dtype, _fill(meta.get("fill_value"), dtype, where), decoder,
                   lambda idx: sep.join(map(str, idx)) or "0", where)

    @classmethod
    def from_v3(cls, path: Path, meta: dict):
        where = path / "zarr.json"
        _require(_shape_ok(meta.get("shape")), where, "shape", meta.get("shape"), "a list of whole numbers >= 0")
        grid = meta.get("chunk_grid")
        _require(isinstance(grid, dict) and isinstance(grid.get("name"), str), where, "chunk_grid", grid,
                 'an object with a "name"')
        if grid.get("name") != "regular" or meta.get("storage_transformers"):
            raise Unsupported("v3 chunk grid")
        conf = grid.get("configuration")
        chunk_shape = conf.get("chunk_shape") if isinstance(conf, dict) else None
        _require(_positive_ints(chunk_shape, len(meta["shape"])), where, "chunk_grid.configuration.chunk_shape",
                 chunk_shape, f"a list of {len(meta['shape'])} whole numbers >= 1")
        _require(isinstance(meta.get("data_type"), str), where, "data_type", meta.get("data_type"),
                 'a data type name such as "uint8"')
        name = _V3_TYPES.get(meta.get("data_type"))
        if name is None:
            raise Unsupported("v3 data type")
        codecs = meta.get("codecs")
        _require(isinstance(codecs, list) and len(codecs) > 0 and all(isinstance(c, dict) and isinstance(
            c.get("name"), str) for c in codecs), where, "codecs", codecs,
            'a non-empty list of objects with a "name"')
        if codecs[0].get("name") != "bytes":
            raise Unsupported("v3 codecs")  # transpose, sharding, ...
        for c in codecs:
            _require(c.get("configuration") is None or isinstance(c.get("configuration"), dict), where,
                     f"codecs ({c['name']}).configuration", c.get("configuration"), "an object")
        endian = (codecs[0].get("configuration") or {}).get("endian", "little")
        _require(endian in ("little", "big"), where, "codecs (bytes).configuration.endian", endian,
                 '"little" or "big"')
        dtype = np.dtype(name).newbyteorder("<" if endian == "little" else ">") if name[-1] != "1" else np.dtype(name)
        decoders = [_v3_decoder(c) for c in codecs[1:]]

        def decoder(data, _ds=tuple(reversed(decoders))):
            for d in _ds:
                data = d(data)
            return data

        enc = meta.get("chunk_key_encoding") or {"name": "default"}
        _require(isinstance(enc, dict) and isinstance(enc.get("configuration") or {}, dict), where,
                 "chunk_key_encoding", enc, 'an object with a "name"')
        sep = (enc.get("configuration") or {}).get("separator", "/" if enc.get("name") == "default" else ".")
        _require(sep in (".", "/"), where, "chunk_key_encoding.configuration.separator", sep, '"." or "/"')
        if enc.get("name") == "default":
            def chunk_name(idx):
                return sep.join(("c",) + tuple(map(str, idx)))
        elif enc.get("name") == "v2":
            def chunk_name(idx):
                return sep.join(map(str, idx)) or "0"
        else:
            raise Unsupported("v3 chunk key encoding")
        return cls(path, meta["shape"], chunk_shape, dtype, _fill(meta.get("fill_value"), dtype, where),
                   decoder if decoders else None, chunk_name, where)

    def _chunk(self, idx) -> np.ndarray | None:
        key = self._chunk_name(idx)
        try:
            with open(self.path / key, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise Malformed(f"{self.path}: chunk {key} is a folder, not a chunk file; restore the store") from None
        fix = "restore or re-write the store (the chunk is truncated or corrupt)"
        try:
            if self._decoder is not None:
                data = self._decoder(data)
            data = np.frombuffer(data, dtype=self.dtype)
        except Exception:  # noqa: BLE001 - any codec's failure is the same corrupt chunk
            raise Malformed(f"{self.path}: chunk {key} does not decode; {fix}") from None
        n = int(np.prod(self.chunks, dtype=np.int64))
        if data.size != n:
            raise Malformed(f"{self.path}: chunk {key} holds {data.size} values, not the {n} of a "
                            f"{' x '.join(map(str, self.chunks))} chunk; {fix}")
        return data.reshape(self.chunks)

    def __getitem__(self, window):
        if not isinstance(window, tuple):
            window = (window,)
        window = window + (slice(None),) * (len(self.shape) - len(window))
        box = []
        for s, n in zip(window, self.shape):
            if not isinstance(s, slice):
                raise Unsupported("only slices")
            start, stop, step = s.indices(n)
            if step != 1:
                raise Unsupported("only unit steps")
            box.append((start, max(start, stop)))
        out = np.empty([b - a for a, b in box], self.dtype.newbyteorder("="))
        if out.size == 0:
            return out
        ranges = [range(a // c, (b - 1) // c + 1) for (a, b), c in zip(box, self.chunks)]
        for idx in np.ndindex(*[len(r) for r in ranges]):
            cidx = tuple(r[i] for r, i in zip(ranges, idx))
            src, dst = [], []
            for (a, b), c, k in zip(box, self.chunks, cidx):
                lo, hi = max(a, k * c), min(b, (k + 1) * c)
                src.append(slice(lo - k * c, hi - k * c))
                dst.append(slice(lo - a, hi - a))
            chunk = self._chunk(cidx)
            out[tuple(dst)] = self.fill_value if chunk is None else chunk[tuple(src)]
        return out


def _v3_decoder(codec: dict):
    import numcodecs

    name = codec.get("name")
    if name == "zstd":
        return numcodecs.Zstd().decode
    if name == "gzip":
        return numcodecs.GZip().decode
    if name == "blosc":
        return numcodecs.Blosc().decode
    raise Unsupported(f"v3 codec {name}")


def _fill(value, dtype: np.dtype, where=None):
    if value is None:
        return 0
    if isinstance(value, str):  # "NaN", "Infinity", "-Infinity" or hex bytes
        try:
            value = float(value)
        except ValueError:
            raise Unsupported("fill value") from None
    _require(isinstance(value, (int, float)), where, "fill_value", value, "a number or null")
    try:
        np.array(value).astype(dtype, casting="unsafe")
    except (OverflowError, ValueError):
        raise Malformed(f"{where}: fill_value {value!r} does not fit {dtype}; restore the store's metadata") \
            from None
    return value
