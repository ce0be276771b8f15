"""Sources: arrays that know their shape and dtype and read one window at a time.

Every scorer reads its inputs through a source, so an image is never held whole unless it
is already in memory. A window is a tuple of slices with explicit, in-range bounds.

- :class:`ArraySource`: anything NumPy can slice (an ndarray, a memmap, a NIfTI proxy).
- :class:`RawFileSource`: a C-ordered array stored contiguously in a file (an uncompressed
  TIFF, a ``.npy``), read with ``os.pread`` so pages are not kept mapped: peak memory is
  the window, not the file.
- :class:`ZarrSource`: a zarr array (any pyramid level, a compressed TIFF through
  tifffile's zarr store).
- :class:`DaskSource`: a dask array; the dask executor hands its blocks to tasks directly.
- :class:`Squeezed`: a view that drops singleton axes of another source.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Any

import numpy as np

from segscore.io import budget


def _full(shape):
    return tuple(slice(0, n) for n in shape)


class Source:
    """A lazily read array. Subclasses set ``shape``, ``dtype``, ``name`` and ``read``."""

    shape: tuple[int, ...]
    dtype: np.dtype
    name: str
    #: chunk shape a reader should align windows to, or None
    chunks: tuple[int, ...] | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def read(self, window: tuple[slice, ...]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_all(self) -> np.ndarray:
        return self.read(_full(self.shape))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, shape={self.shape}, dtype={self.dtype})"


class ArraySource(Source):
    """An in-memory (or memory-mapped, or proxied) array."""

    def __init__(self, array: Any, name: str = "<array>", chunks=None):
        self.array = array
        self.shape = tuple(int(n) for n in array.shape)
        self.dtype = np.dtype(array.dtype)
        self.name = name
        self.chunks = chunks

    def read(self, window):
        if not isinstance(self.array, np.ndarray):  # a proxy (NIfTI) or a map: the window is allocated
            budget.check_bytes(self.name, budget.nbytes((s.stop - s.start for s in window), self.dtype))
        return np.asarray(self.array[window])


class RawFileSource(Source):
    """A C-ordered array stored contiguously at ``offset`` in a file.

    Reads the span of leading-axis rows a window needs with ``os.pread`` and slices the rest,
    so a row-band plan reads each byte once and nothing stays mapped.
    """

    def __init__(self, path, offset: int, shape, dtype, name: str | None = None):
        self.path = os.fspath(path)
        self.offset = int(offset)
        self.shape = tuple(int(n) for n in shape)
        self.file_dtype = np.dtype(dtype)
        self.dtype = self.file_dtype.newbyteorder("=")
        self.name = name or self.path
        self._fd = None
        self._row_bytes = int(np.prod(self.shape[1:], dtype=np.int64)) * self.file_dtype.itemsize

    def _handle(self):
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return self._fd

    def read(self, window):
        lead = window[0]
        start, stop = lead.start, lead.stop
        nrows = max(stop - start, 0)
        budget.check_bytes(self.name, nrows * self._row_bytes * (1 if self.file_dtype.isnative else 2))
        buf = np.empty((nrows,) + self.shape[1:], self.file_dtype)
        want = nrows * self._row_bytes
        if want:
            view = memoryview(buf.reshape(-1).view(np.uint8))
            got = 0
            fd = self._handle()
            pos = self.offset + start * self._row_bytes
            while got < want:
                n = os.preadv(fd, [view[got:]], pos + got)
                if n <= 0:
                    raise OSError(f"{self.name}: file ends before its declared shape {self.shape}")
                got += n
        out = buf[(slice(None),) + tuple(window[1:])]
        if not self.file_dtype.isnative:
            out = out.astype(self.dtype)
        return out

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __getstate__(self):  # picklable for dask workers: reopen there
        state = dict(self.__dict__)
        state["_fd"] = None
        return state


class ZarrSource(Source):
    """A zarr array (or anything with zarr's slicing and a ``chunks`` attribute).

    ``store`` is the :mod:`segscore.io.zarr_store` wrapper the array reads through (every store
    segscore opens has one): it counts the chunks that were absent, and :meth:`warnings` says
    how many, for the result's ``warnings`` list. A source opened inside :func:`collecting`
    is listed there."""

    def __init__(self, array, name: str, closer=None, store=None):
        self.array = array
        self.shape = tuple(int(n) for n in array.shape)
        self.dtype = np.dtype(array.dtype)
        self.name = name
        chunks = getattr(array, "chunks", None)
        self.chunks = tuple(int(c) for c in chunks) if chunks is not None else None
        self._closer = closer
        self.store = store
        #: read from a local folder (segscore's capped store says), not over a network
        self.local = bool(getattr(store, "is_local", False))
        self.key = str(getattr(array, "path", "") or "").strip("/")
        opened = _OPENED.get()
        if opened is not None and store is not None:
            opened.append(self)

    def read(self, window):
        from segscore.errors import ScoreError
        from segscore.io.zarr_store import ChunkUnreadable, read_window

        budget.check_bytes(self.name, budget.nbytes((s.stop - s.start for s in window), self.dtype))
        try:  # chunk by chunk: every fetch has ended before a failure is raised
            return read_window(self.array, window, local=self.local)
        except MemoryError:  # a chunk larger than its window declared: too large, not corrupt
            raise budget.out_of_memory(self.name) from None
        except ChunkUnreadable as exc:  # a codec's or a store's failure mid-run
            raise ScoreError(f"{self._where()}: the chunk holding [{exc}] cannot be read; the store or file is "
                             f"truncated or corrupt: restore it") from None

    def _where(self) -> str:
        """The name, with the array's path inside its store when the name does not end with it."""
        where = self.name.rstrip("/")
        return f"{where}/{self.key}" if self.key and not where.endswith("/" + self.key) else where

    def absent_chunks(self) -> tuple[int, int]:
        """``(absent, read)``: how many distinct chunks this process has read from the array so far,
        and how many of them were absent (read as the fill value); ``(0, 0)`` without a store."""
        return self.store.absent(self.key) if self.store is not None else (0, 0)

    def warnings(self) -> list[str]:
        """One line when chunks read were absent, else none."""
        absent, read = self.absent_chunks()
        if not absent:
            return []
        fill = getattr(self.array, "fill_value", None)
        fill = fill.item() if hasattr(fill, "item") else fill
        return [f"{self._where()}: {absent} of {read} chunks absent, read as the fill value {fill}"]

    def close(self):
        if self._closer is not None:
            self._closer()
            self._closer = None


#: the sources opened by the innermost :func:`collecting` block of this thread (or context)
_OPENED: contextvars.ContextVar = contextvars.ContextVar("segscore_opened_sources", default=None)


@contextlib.contextmanager
def collecting():
    """List the zarr sources opened inside the block (and hand them to an enclosing block too),
    so that a scoring call can report what its reads found (:func:`read_warnings`)."""
    mine: list = []
    token = _OPENED.set(mine)
    try:
        yield mine
    finally:
        _OPENED.reset(token)
        outer = _OPENED.get()
        if outer is not None:
            outer.extend(mine)


def read_warnings(sources) -> list[str]:
    """The ``warnings`` lines of ``sources`` (absent chunks), each once, in order."""
    lines: list[str] = []
    for source in sources:
        for line in source.warnings():
            if line not in lines:
                lines.append(line)
    return lines


class DaskSource(Source):
    """A dask array. ``read`` computes one window; the dask executor uses ``array`` directly."""

    def __init__(self, array, name: str = "<dask array>"):
        self.array = array
        self.shape = tuple(int(n) for n in array.shape)
        self.dtype = np.dtype(array.dtype)
        self.name = name
        self.chunks = tuple(int(c[0]) for c in array.chunks)

    def read(self, window):
        return np.asarray(self.array[window].compute(scheduler="synchronous"))


class Squeezed(Source):
    """A view of ``base`` without its singleton axes."""

    def __init__(self, base: Source):
        self.base = base
        self._keep = [i for i, n in enumerate(base.shape) if n != 1]
        self.shape = tuple(base.shape[i] for i in self._keep)
        self.dtype = base.dtype
        self.name = base.name
        ch = base.chunks
        self.chunks = tuple(ch[i] for i in self._keep) if ch is not None else None

    def read(self, window):
        full = [slice(0, 1)] * self.base.ndim
        for axis, sl in zip(self._keep, window):
            full[axis] = sl
        return self.base.read(tuple(full)).reshape(tuple(s.stop - s.start for s in window))

    def close(self):
        self.base.close()


def squeeze(source: Source) -> Source:
    """``source`` without singleton axes (itself when it has none)."""
    if all(n != 1 for n in source.shape):
        return source
    return Squeezed(source)


def as_source(obj, name: str | None = None) -> Source:
    """Wrap an array-like (NumPy, memmap, zarr, dask) in the matching source."""
    if isinstance(obj, Source):
        return obj
    module = type(obj).__module__
    if module.startswith("dask"):
        return DaskSource(obj, name or "<dask array>")
    if module.startswith("zarr"):
        return _zarr_source(obj, name or "<zarr array>")
    if not hasattr(obj, "shape") or not hasattr(obj, "dtype"):
        obj = np.asarray(obj)
    return ArraySource(obj, name or "<array>")


def _zarr_source(array, name: str) -> ZarrSource:
    """A zarr array given by the caller, re-opened read-only through the capped store wrapper
    (:mod:`segscore.io.zarr_store`) when it is a zarr 3 array; as it is otherwise."""
    store = getattr(array, "store", None)
    if store is None or not hasattr(array, "metadata") or type(store).__module__.startswith("tifffile"):
        return ZarrSource(array, name)
    import zarr

    from segscore.io import zarr_store

    if isinstance(store, zarr_store.CappedStore):
        wrapped = store
    else:
        try:
            store = store.with_read_only(True)
        except NotImplementedError:  # a store that cannot make a read-only copy is read as it is
            pass
        wrapped = zarr_store.capped(store, name)
    reopened = zarr.open_array(wrapped, path=array.path, mode="r")
    wrapped.check_array(reopened.path)
    return ZarrSource(reopened, name, store=wrapped)
