"""A small reader for the plain zarr arrays label stores are made of, without zarr-python.

Label pyramids are local folders of regularly chunked arrays with one compressor. Reading
those needs the metadata, a chunk's file name and its decompressor; zarr-python's import
and its asynchronous machinery cost more than the whole read of a label band. This module
reads exactly that case, zarr formats 2 and 3, and raises :class:`Unsupported` for anything
else (sharding, filters, Fortran order, other codecs, remote stores), which the caller hands
to zarr-python. Reads are stateless, so threads may share an array.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


class Unsupported(Exception):
    """Not a layout this reader handles; use zarr-python."""


_V3_TYPES = {"bool": "|b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
             "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4", "float64": "f8"}


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise Unsupported(str(exc)) from None


def open_node(path):
    """The array or group at a local folder ``path``."""
    p = Path(os.fspath(path))
    if not p.is_dir():
        raise Unsupported("not a local folder")
    meta = _load(p / "zarr.json")
    if meta is not None:
        if meta.get("zarr_format") != 3:
            raise Unsupported("unknown zarr.json")
        if meta.get("node_type") == "group":
            return Group(p)
        if meta.get("node_type") == "array":
            return Array.from_v3(p, meta)
        raise Unsupported("unknown node type")
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

    def __init__(self, path: Path, shape, chunks, dtype, fill_value, decoder, chunk_name):
        self.path = path
        self.shape = tuple(int(n) for n in shape)
        self.chunks = tuple(int(c) for c in chunks)
        self.dtype = np.dtype(dtype)
        self.fill_value = fill_value
        self._decoder = decoder
        self._chunk_name = chunk_name
        if len(self.chunks) != len(self.shape) or any(c < 1 for c in self.chunks):
            raise Unsupported("irregular chunks")

    @classmethod
    def from_v2(cls, path: Path, meta: dict):
        if meta.get("zarr_format") != 2 or meta.get("order", "C") != "C" or meta.get("filters"):
            raise Unsupported("v2 layout")
        try:
            dtype = np.dtype(meta["dtype"])
        except (TypeError, KeyError):
            raise Unsupported("v2 dtype") from None
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
        return cls(path, meta["shape"], meta["chunks"], dtype, _fill(meta.get("fill_value"), dtype), decoder,
                   lambda idx: sep.join(map(str, idx)) or "0")

    @classmethod
    def from_v3(cls, path: Path, meta: dict):
        grid = meta.get("chunk_grid", {})
        if grid.get("name") != "regular" or meta.get("storage_transformers"):
            raise Unsupported("v3 chunk grid")
        name = _V3_TYPES.get(meta.get("data_type"))
        if name is None:
            raise Unsupported("v3 data type")
        codecs = list(meta.get("codecs", []))
        if not codecs or codecs[0].get("name") != "bytes":
            raise Unsupported("v3 codecs")  # transpose, sharding, ...
        endian = (codecs[0].get("configuration") or {}).get("endian", "little")
        dtype = np.dtype(name).newbyteorder("<" if endian == "little" else ">") if name[-1] != "1" else np.dtype(name)
        decoders = [_v3_decoder(c) for c in codecs[1:]]

        def decoder(data, _ds=tuple(reversed(decoders))):
            for d in _ds:
                data = d(data)
            return data

        enc = meta.get("chunk_key_encoding", {"name": "default"})
        sep = (enc.get("configuration") or {}).get("separator", "/" if enc.get("name") == "default" else ".")
        if enc.get("name") == "default":
            def chunk_name(idx):
                return sep.join(("c",) + tuple(map(str, idx)))
        elif enc.get("name") == "v2":
            def chunk_name(idx):
                return sep.join(map(str, idx)) or "0"
        else:
            raise Unsupported("v3 chunk key encoding")
        return cls(path, meta["shape"], grid["configuration"]["chunk_shape"], dtype,
                   _fill(meta.get("fill_value"), dtype), decoder if decoders else None, chunk_name)

    def _chunk(self, idx) -> np.ndarray | None:
        try:
            with open(self.path / self._chunk_name(idx), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        if self._decoder is not None:
            data = self._decoder(data)
        return np.frombuffer(data, dtype=self.dtype).reshape(self.chunks)

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


def _fill(value, dtype: np.dtype):
    if value is None:
        return 0
    if isinstance(value, str):  # "NaN", "Infinity", "-Infinity" or hex bytes
        try:
            return float(value)
        except ValueError:
            raise Unsupported("fill value") from None
    return value
