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

A source opened from a path (:func:`segscore.io.readers.open_image`, ``open_zarr``) carries a
:class:`Reopen` recipe and pickles as that recipe: a dask worker reopens the file itself and
reads its own windows, and no voxel travels with a task (:func:`by_path`). The chunk counts
a worker's copy of a zarr source gathers come back with the partial results
(:func:`chunk_counts`) and are added to the caller's source (:func:`absorb_counts`), so the
``warnings`` it reports are the ones one process would report.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import threading
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
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

    def __reduce_ex__(self, protocol):
        recipe = self.__dict__.get("reopen")
        if recipe is not None:  # pickled by path: the receiving process opens the file itself
            return (reopened, (recipe,))
        return super().__reduce_ex__(protocol)


@dataclass(frozen=True)
class Reopen:
    """How to open a source again in another process: ``opener`` ("module:function") called with
    ``args`` and ``kwargs`` (a path and plain options). ``token`` names this opening: every copy
    of the source a process unpickles with one token is one source there (opened once), and the
    chunk counts of the copies are added back to the original (:func:`absorb_counts`)."""

    opener: str
    args: tuple
    kwargs: tuple = ()  # (name, value) pairs
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    name: str | None = None  # the source's name where it was opened (messages name it alike)

    def open(self) -> Source:
        module, _, name = self.opener.partition(":")
        fn = getattr(importlib.import_module(module), name)
        return fn(*self.args, **dict(self.kwargs))


#: this process's sources reopened from a recipe, by token, the most recently used last
_REOPENED: OrderedDict = OrderedDict()
#: sources reopened and kept per process (a worker serving many jobs closes the oldest)
REOPENED_KEEP = 32
_REOPEN_LOCK = threading.Lock()
#: this process's sources that carry a recipe, by token (the originals counts are added to)
_BY_TOKEN: "weakref.WeakValueDictionary[str, Source]" = weakref.WeakValueDictionary()
_OPENS = [0]


def by_path(source: Source, opener: str, *args, **kwargs) -> Source:
    """``source``, opened by ``opener(*args, **kwargs)``, made to pickle as that call
    (:class:`Reopen`) instead of its state: what :mod:`segscore.io.readers` does for every
    source it opens from a path. Returns ``source``."""
    recipe = Reopen(opener, tuple(os.fspath(a) if isinstance(a, os.PathLike) else a for a in args),
                    tuple(sorted(kwargs.items())), name=getattr(source, "name", None))
    source.reopen = recipe
    _BY_TOKEN[recipe.token] = source
    return source


def reopened(recipe: Reopen) -> Source:
    """A :func:`by_path` source as it arrives in another process: a :class:`Reopened` that opens
    the file when it is first read (a dask scheduler unpickles tasks and reads nothing)."""
    return Reopened(recipe)


class Reopened(Source):
    """A source pickled by path, in the process that unpickled it. Its name comes with the recipe;
    the file is opened on first use (shape, dtype, read ...), once per process and recipe, and
    shared by every copy (:func:`open_once`). Closing a copy leaves the shared source open."""

    def __init__(self, recipe: Reopen):
        self.recipe = recipe
        self.reopen = recipe
        self.name = recipe.name or "<reopened>"

    @property
    def source(self) -> Source:
        return open_once(self.recipe)

    @property
    def chunks(self):
        return self.source.chunks

    def read(self, window):
        return self.source.read(window)

    def __getattr__(self, name):  # shape, dtype, store, warnings ...: the opened source's
        if name.startswith("__") or name in ("recipe", "reopen", "name"):
            raise AttributeError(name)
        return getattr(self.source, name)

    def __reduce_ex__(self, protocol):
        return (reopened, (self.recipe,))


def open_once(recipe: Reopen) -> Source:
    """The source of ``recipe`` in this process: opened on first use, then shared by every
    :class:`Reopened` copy of it (at most :data:`REOPENED_KEEP` are kept open, the least recently
    used closed first)."""
    with _REOPEN_LOCK:
        source = _REOPENED.get(recipe.token)
        if source is not None:
            _REOPENED.move_to_end(recipe.token)
            return source
    source = recipe.open()
    source.reopen = recipe
    if recipe.name is not None:
        source.name = recipe.name
    with _REOPEN_LOCK:
        if recipe.token in _REOPENED:  # another thread opened it meanwhile: keep one
            source.close()
            return _REOPENED[recipe.token]
        _REOPENED[recipe.token] = source
        _OPENS[0] += 1
        while len(_REOPENED) > REOPENED_KEEP:
            _, old = _REOPENED.popitem(last=False)
            old.close()
    return source


def reopen_count() -> int:
    """How many sources this process has reopened from a recipe (tests count them)."""
    return _OPENS[0]


def _stores(source):
    while isinstance(source, (Squeezed, Reopened)):
        source = source.base if isinstance(source, Squeezed) else source.source
    store = getattr(source, "store", None)
    return store if store is not None and hasattr(store, "counts") else None


def chunk_counts() -> dict:
    """``{token: {array path: (read keys, absent keys)}}``: the chunks this process's reopened
    zarr sources have read so far (what a task hands back beside its partial result)."""
    out = {}
    with _REOPEN_LOCK:
        items = list(_REOPENED.items())
    for token, source in items:
        store = _stores(source)
        if store is None:
            continue
        counts = {key: (frozenset(c.read), frozenset(c.absent)) for key, c in list(store.counts.items())}
        if counts:
            out[token] = counts
    return out


def merge_counts(a: dict, b: dict) -> dict:
    """Two :func:`chunk_counts` together (sets of keys: union, so a chunk two tasks or a rerun
    task read counts once)."""
    if not b:
        return a
    if not a:
        return b
    out = dict(a)
    for token, counts in b.items():
        mine = dict(out.get(token, {}))
        for key, (read, absent) in counts.items():
            r0, a0 = mine.get(key, (frozenset(), frozenset()))
            mine[key] = (r0 | read, a0 | absent)
        out[token] = mine
    return out


def absorb_counts(counts: dict) -> None:
    """Add :func:`chunk_counts` gathered on workers to the chunk counts of this process's
    original sources (by token; tokens of other processes' sources are ignored)."""
    for token, per_key in (counts or {}).items():
        store = _stores(_BY_TOKEN.get(token))
        if store is None:
            continue
        for key, (read, absent) in per_key.items():
            store.add_counts(key, read, absent)


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
            direct = self.store.direct(self.key) if self.local else None
            return read_window(self.array, window, local=self.local, direct=direct)
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
