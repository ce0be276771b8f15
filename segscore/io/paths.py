"""What a command may read and where it may write, checked before it reads or writes anything.

- Only regular files and folders are read: a FIFO (a named pipe, or shell process substitution),
  a socket or a character or block device is refused up front, before any ``open`` that could
  block or read without end (``/dev/zero``). A symbolic link is judged by its target.
- An output never replaces an input of the same run: an output path that is an input (the same
  file after symbolic links, hard links and ``..``), or an existing file inside an input folder,
  is refused and nothing is written. A folder
  that merely contains an input is a fine place for an output that does not exist yet.

URLs (``https://``, ``s3://``) are not local paths and are left to their store.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from segscore.errors import ScoreError

_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _local(path) -> bool:
    return path is not None and "://" not in str(path)


def _stat(path):
    try:
        return os.stat(path)  # follows symbolic links: a link is judged by its target; never blocks
    except (OSError, ValueError):  # missing, a dangling link, a NUL in the name: the reader says so
        return None


def special_kind(path) -> str | None:
    """``"a FIFO (named pipe)"``, ``"a socket"``, ``"a character device"`` or ``"a block device"``
    when ``path`` (after links) is one; None for a regular file, a folder, a URL or a missing path."""
    if not _local(path):
        return None
    st = _stat(path)
    if st is None:
        return None
    for test, kind in _SPECIAL:
        if test(st.st_mode):
            return kind
    return None


def check_readable(path, what: str = "input") -> None:
    """Refuse ``path`` in one line when it is a pipe, a socket or a device (module docstring)."""
    kind = special_kind(path)
    if kind is not None:
        raise ScoreError(f"{one_line(path)}: is {kind}, not a regular file or folder; give the {what} as a file "
                         "(segscore reads no pipes or devices)")


def one_line(path) -> str:
    """``path`` as text that fits on one line (a newline in a file name shown as ``\\n``)."""
    return str(path).encode("unicode_escape").decode("ascii") if any(c in str(path) for c in "\n\r\0") else str(path)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def check_outputs(inputs: Iterable, outputs: Iterable) -> None:
    """Refuse, in one line, an output that would replace an input of the same run.

    ``inputs``: the paths the run reads (files or folders); ``outputs``: ``(option, path)`` pairs of
    the files it writes. Checked before anything is written."""
    ins = []
    for p in inputs:
        if _local(p):
            st = _stat(p)
            if st is not None:
                ins.append((str(p), os.path.realpath(p), st))
    for option, out in outputs:
        if not _local(out):
            continue
        real = os.path.realpath(out)
        st = _stat(out)
        for given, in_real, in_st in ins:
            if (st is not None and _same(st, in_st)) or real == in_real:
                raise ScoreError(f"{one_line(out)}: {option} names the input {one_line(given)} of this run; writing it "
                                 "would replace the input: choose another output path")
            if stat.S_ISDIR(in_st.st_mode) and st is not None and not stat.S_ISDIR(st.st_mode) \
                    and _inside(real, in_real):
                raise ScoreError(f"{one_line(out)}: {option} names a file inside the input folder {one_line(given)} "
                                 "of this run; writing it could replace an input: choose a path outside that folder")
