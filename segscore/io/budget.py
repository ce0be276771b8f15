"""The read budget: how many bytes of memory one read may take, checked before it is done.

Every reader compares what a file *declares* (a PNG's IHDR, a TIFF's strips or tiles, a NIfTI
header and the dtype its scale slope implies, a ``.npy`` header, a text file's size) with
:func:`read_budget` before it allocates or decompresses anything, and refuses a valid file too
large for this machine in one line (:class:`TooLargeError`)::

    FILE: needs 8.1 GB, 3.2 GB available: read it as a zarr store / use --tile-rows

never as corruption and never as a ``MemoryError`` traceback.

The budget is, in this order: the value given to :func:`set_read_budget` (Python), the
environment variable ``SEGSCORE_READ_BUDGET`` (bytes, or a number with ``K``/``M``/``G``/``T``,
``2G``, ``512M``), else :data:`DEFAULT_FRACTION` of the memory available now (``MemAvailable``
of ``/proc/meminfo``, bounded by the cgroup's limit where one is set; ``os.sysconf`` elsewhere;
psutil is not needed).

Text inputs (manifests, JSON, regions, cards, results lines, CSV jobs) are read by
:func:`read_text`, :func:`load_json` and :func:`iter_lines`, which never read more than
:func:`text_limit` bytes (a file, or one line of a results store) whatever the file is: a 100 MB
line, ``/dev/zero`` through a symlink. A parsed JSON document takes many times its text in
memory (a Python object per number), hence the limit is a fraction of the budget
(:data:`TEXT_EXPANSION`) and at most :data:`MAX_TEXT` bytes.
"""

from __future__ import annotations

import json
import os
import re

from segscore.errors import ScoreError

#: the environment variable that sets the budget (bytes, or ``2G``, ``512M``, ...)
ENV = "SEGSCORE_READ_BUDGET"
#: the share of the memory available that one read may take by default: an eighth, as a command
#: works on what it reads (a mask read whole becomes labels, a skeleton, distances: several times
#: its size; benchmarks/README.md), and a machine is often shared
DEFAULT_FRACTION = 0.125
#: what a parsed JSON document may take per byte of its text (a list of small numbers or empty
#: objects: 20 to 40 bytes of Python objects per byte of text); the text limit is the budget over this
TEXT_EXPANSION = 64
#: the most bytes of text read from one file or one results line, whatever the budget
MAX_TEXT = 64 << 20
#: the fix a refusal of an image suggests
IMAGE_FIX = "read it as a zarr store / use --tile-rows"

#: reads of at most this many bytes are never refused (every window of a source is checked)
SMALL = 16 << 20

_setting: int | None = None
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


class TooLargeError(ScoreError):
    """A valid input that needs more memory than the read budget allows (not a damaged one)."""


def parse_size(text) -> int:
    """``"2G"``, ``"512M"``, ``"1.5GB"``, ``"1000000"`` as a number of bytes (``ValueError`` otherwise)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
        if not m or m.group(2).upper() not in _UNITS:
            raise ValueError(f"not a size: {text!r} (give bytes, or a number with K, M, G or T)")
        value, unit = float(m.group(1)), m.group(2).upper()
    n = value * _UNITS[unit]
    if not n >= 1 or n > 1 << 60:
        raise ValueError(f"not a size: {text!r} (give a positive number of bytes)")
    return int(n)


def set_read_budget(nbytes) -> None:
    """Set the read budget of this process (bytes, or ``"2G"``); ``None`` returns to the default
    (``SEGSCORE_READ_BUDGET``, else a fraction of the memory available)."""
    global _setting
    _setting = None if nbytes is None else parse_size(nbytes)


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as fh:
            text = fh.read(1 << 16).decode("ascii", "replace")
    except OSError:
        return None
    m = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text, re.MULTILINE) or re.search(r"^MemFree:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def _cgroup_room() -> int | None:
    """What the cgroup (v2, else v1) this process runs in still allows, or None without a limit."""
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit, "rb") as fh:
                cap = fh.read(64).strip()
            with open(usage, "rb") as fh:
                used = int(fh.read(64).strip())
        except (OSError, ValueError):
            continue
        if not cap.isdigit() or int(cap) >= 1 << 60:
            return None
        return max(int(cap) - used, 0)
    return None


def available_memory() -> int:
    """Bytes of memory available to this process now (``/proc/meminfo``, the cgroup's limit,
    ``os.sysconf``); 1 GiB when nothing says."""
    found = [n for n in (_meminfo_available(), _cgroup_room()) if n is not None]
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    return min(found) if found else 1 << 30


def _source() -> tuple[int, str | None]:
    if _setting is not None:
        return _setting, "segscore.io.budget.set_read_budget"
    text = os.environ.get(ENV, "").strip()
    if text:
        try:
            return parse_size(text), ENV
        except ValueError as exc:
            raise ScoreError(f"{ENV}={text!r}: {exc}; set it to a size such as 2G or 512M") from None
    return max(int(available_memory() * DEFAULT_FRACTION), 1 << 20), None


def read_budget() -> int:
    """The bytes of memory one read may take (module docstring)."""
    return _source()[0]


def human(n: float) -> str:
    """Bytes for a person: ``8.1 GB``, ``512 MB``, ``3 KB``, ``12 bytes`` (powers of 1000)."""
    n = float(n)
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{int(n)} bytes"


def check_bytes(name, need, *, fix: str = IMAGE_FIX) -> None:
    """Refuse (:class:`TooLargeError`) a read of ``name`` that needs ``need`` bytes of memory
    when that is more than the budget: ``NAME: needs 8.1 GB, 3.2 GB available: FIX``."""
    if need <= SMALL:  # a tile's worth: not worth asking the system (sources check every window)
        return
    budget, source = _source()
    if need > budget:
        where = f" (the read budget, {source})" if source else ""
        raise TooLargeError(f"{os.fspath(name)}: needs {human(need)}, {human(budget)} available{where}: {fix}")


def nbytes(shape, dtype) -> int:
    """The bytes an array of ``shape`` and ``dtype`` takes (Python integers: no overflow)."""
    import numpy as np

    n = 1
    for s in shape:
        n *= max(int(s), 0)
    return n * np.dtype(dtype).itemsize


def out_of_memory(name, *, fix: str = IMAGE_FIX) -> TooLargeError:
    """The refusal for a ``MemoryError`` met while reading ``name`` (a file whose declared size
    fits the budget, but not the memory left): one line, never "truncated or corrupt"."""
    return TooLargeError(f"{os.fspath(name)}: needs more memory than is available ({human(available_memory())} "
                         f"free): {fix}")


# ------------------------------------------------------------------ text with a size limit

def text_limit() -> int:
    """The most bytes :func:`read_text` reads from one file (or one line): the budget over
    :data:`TEXT_EXPANSION`, at most :data:`MAX_TEXT`."""
    return max(min(read_budget() // TEXT_EXPANSION, MAX_TEXT), 1 << 16)


def _too_long(name, limit, what, fix) -> TooLargeError:
    return TooLargeError(f"{os.fspath(name)}: {what} is larger than {human(limit)}, the most segscore reads of "
                         f"{'a text input' if what == 'the file' else 'one line'} ({ENV} / {TEXT_EXPANSION}, at most "
                         f"{human(MAX_TEXT)}); {fix}")


def read_bytes(path, *, fix: str, limit: int | None = None, text: bool = True) -> bytes:
    """The bytes of the file at ``path``, refused (one line naming it) when longer than
    ``limit`` (default :func:`text_limit`), or, as ``text``, when they hold a NUL byte. Never
    reads more than ``limit + 1`` bytes: a device (``/dev/zero``) or a file that grows is
    refused, not read whole. ``OSError`` (a missing file, a folder) passes through."""
    limit = text_limit() if limit is None else int(limit)
    with open(path, "rb") as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:  # pragma: no cover
            size = 0
        if size > limit:
            raise _too_long(path, limit, "the file", fix)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise _too_long(path, limit, "the file", fix)
    if text and b"\0" in data:
        raise ScoreError(f"{os.fspath(path)}: holds NUL bytes, so it is not a text file; {fix}")
    return data


def read_text(path, *, fix: str, limit: int | None = None) -> str:
    """The UTF-8 text of the file at ``path`` (:func:`read_bytes`'s limit; a file that is not
    UTF-8 or holds NUL bytes is refused naming it). ``OSError`` passes through."""
    data = read_bytes(path, fix=fix, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScoreError(f"{os.fspath(path)}: not UTF-8 text; {fix}") from None


def parse_json(text, where, *, fix: str, allow_nan: bool = False):
    """``json.loads(text)``, refused in one line naming ``where`` when it does not parse, nests
    too deeply (``RecursionError``: 100,000 ``[``), or holds ``NaN``/``Infinity``/a number too
    large for a float (``1e400``). ``allow_nan``: ``NaN`` and ``Infinity`` are read as floats (a
    peer's file that writes them for undefined values: curvicost's audit)."""

    def constant(name):
        if allow_nan:
            return float(name)
        raise ValueError(f"holds {name}")

    def finite(token):
        value = float(token)
        if value in (float("inf"), float("-inf")) and not allow_nan:
            raise ValueError(f"holds {token}, a number too large for a float")
        return value

    try:
        return json.loads(text, parse_constant=constant, parse_float=finite)
    except RecursionError:
        raise ScoreError(f"{where}: JSON nested too deeply; {fix}") from None
    except json.JSONDecodeError as exc:
        raise ScoreError(f"{where}: not valid JSON (line {exc.lineno} column {exc.colno}); {fix}") from None
    except ValueError as exc:
        raise ScoreError(f"{where}: not valid JSON ({exc}); {fix}") from None


def load_json(path, *, fix: str, limit: int | None = None, allow_nan: bool = False):
    """The JSON document at ``path``, read with :func:`read_text`'s limit and parsed by
    :func:`parse_json` (non-finite numbers, unless ``allow_nan``, and absurd nesting refused).
    ``OSError`` passes through."""
    return parse_json(read_text(path, fix=fix, limit=limit), os.fspath(path), fix=fix, allow_nan=allow_nan)


def iter_lines(path, *, fix: str, limit: int | None = None, total: int | None = None):
    """``(number, bytes)`` of each line of the file at ``path`` (without its newline), never
    holding more than ``limit`` (default :func:`text_limit`) bytes of one line: a longer line is
    refused naming ``PATH:LINE``. ``total`` (default: the budget over 16) bounds the whole file."""
    limit = text_limit() if limit is None else int(limit)
    total = read_budget() // 16 if total is None else int(total)
    seen = 0
    with open(path, "rb") as fh:
        number = 0
        while True:
            raw = fh.readline(limit + 1)
            if not raw:
                return
            number += 1
            seen += len(raw)
            if len(raw) > limit and not (len(raw) == limit + 1 and raw.endswith(b"\n")):
                raise _too_long(f"{os.fspath(path)}:{number}", limit, "the line", fix)
            if seen > total:
                raise TooLargeError(f"{os.fspath(path)}: needs more than {human(total)} of text, the most a "
                                    f"results file may take with {human(read_budget())} available; {fix}")
            yield number, raw.rstrip(b"\n")
