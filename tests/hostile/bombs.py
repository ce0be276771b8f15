"""Bombs built small: files a few hundred bytes long whose headers declare huge images.

Each declares a size no reader may allocate or decompress before checking it against the read
budget (segscore.io.budget); the data that follows the header is short or absent, so a reader
that trusted the header would either allocate gigabytes or fail late and call the file corrupt.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
import zlib

import numpy as np


def sha256(path) -> str:
    """The file's digest, read in blocks (a sparse bomb is gigabytes of holes)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(path, width: int, height: int, *, color_type: int = 0, bit_depth: int = 8) -> None:
    """A PNG with valid chunks (CRCs right, IHDR first, IEND last) declaring ``width x height``;
    its IDAT holds one compressed row only."""
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    idat = zlib.compress(b"\0" * (1 + width))
    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b""))


def nifti_gz(path, shape=(1000, 1000, 1000), *, dtype=np.int16, slope: float = 2.0) -> None:
    """A ``.nii.gz`` whose header declares ``shape`` of ``dtype`` with scale ``slope`` (nibabel
    would return float64); the gzip stream holds the header and a few bytes of data."""
    import nibabel

    header = nibabel.Nifti1Header()
    header.set_data_shape(shape)
    header.set_data_dtype(dtype)
    header["scl_slope"] = slope
    header["scl_inter"] = 0.0
    header["vox_offset"] = 352
    with gzip.open(path, "wb") as fh:
        fh.write(header.binaryblock + b"\0" * 4 + b"\0" * 64)


def tiff(path, width: int, height: int, *, tile: int | None = None, compressed: bool = True) -> None:
    """A little-endian grey uint8 TIFF declaring ``width x height``: one strip (``tile`` None) or
    tiles of ``tile x tile``, deflate-compressed (``compressed``) with each strip or tile a few
    bytes of deflate data that decode to far less than declared."""
    # a tile's data is valid (zeros); a strip's is not (it is refused before it is decoded)
    body = zlib.compress(b"\0" * (tile * tile if tile else 64)) if compressed else b"\0" * 64
    if tile is None:
        n_chunks = 1
    else:
        n_chunks = -(-width // tile) * -(-height // tile)
    entries = []
    data_at = 8
    ifd_at = data_at + len(body)
    # the chunk offsets and byte counts: every chunk points at the same few bytes
    n_tags = 10
    arrays_at = ifd_at + 2 + n_tags * 12 + 4
    offsets = struct.pack(f"<{n_chunks}I", *([data_at] * n_chunks))
    counts = struct.pack(f"<{n_chunks}I", *([len(body)] * n_chunks))

    def entry(tag, typ, count, value):
        return struct.pack("<HHI", tag, typ, count) + value

    def short(v):
        return struct.pack("<HH", v, 0)

    def long(v):
        return struct.pack("<I", v)

    def chunk_tag(tag, blob, at):
        return entry(tag, 4, n_chunks, long(at) if n_chunks > 1 else blob)

    entries.append(entry(256, 4, 1, long(width)))
    entries.append(entry(257, 4, 1, long(height)))
    entries.append(entry(258, 3, 1, short(8)))
    entries.append(entry(259, 3, 1, short(8 if compressed else 1)))
    entries.append(entry(262, 3, 1, short(1)))
    entries.append(entry(277, 3, 1, short(1)))
    if tile is None:
        entries.append(chunk_tag(273, offsets, arrays_at))
        entries.append(entry(278, 4, 1, long(height)))
        entries.append(chunk_tag(279, counts, arrays_at + len(offsets)))
        entries.append(entry(284, 3, 1, short(1)))
    else:
        entries.append(entry(322, 4, 1, long(tile)))
        entries.append(entry(323, 4, 1, long(tile)))
        entries.append(chunk_tag(324, offsets, arrays_at))
        entries.append(chunk_tag(325, counts, arrays_at + len(offsets)))
    entries.sort(key=lambda e: struct.unpack("<H", e[:2])[0])
    assert len(entries) == n_tags
    with open(path, "wb") as fh:
        fh.write(b"II*\0" + long(ifd_at) + body + struct.pack("<H", n_tags) + b"".join(entries) + long(0))
        if n_chunks > 1:
            fh.write(offsets + counts)


# ------------------------------------------------------------------ running a case

#: the peak memory (bytes) no hostile case may exceed
PEAK_LIMIT = 1 << 30

_WRAPPER = """
import json, resource, subprocess, sys
argv, env_budget = json.loads(sys.argv[1]), sys.argv[2]
p = subprocess.run(argv, capture_output=True, text=True, timeout=float(sys.argv[3]))
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: kilobytes
print(json.dumps({"code": p.returncode, "out": p.stdout, "err": p.stderr, "peak": peak}))
"""


def run_measured(args, *, budget: str | None = "1G", timeout: float = 120, cwd=None) -> dict:
    """``python -m segscore ARGS`` in a fresh process, its peak memory measured (the resident
    set's high-water mark, ``getrusage(RUSAGE_CHILDREN)`` of a wrapper that runs nothing else):
    ``{"code", "out", "err", "peak"}``. ``budget``: ``SEGSCORE_READ_BUDGET`` (None: unset, the
    default fraction of this machine's memory). ``ulimit``-free: a case that allocated more than
    the machine has would fail the peak check, not the machine."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("SEGSCORE_READ_BUDGET", None)
    if budget is not None:
        env["SEGSCORE_READ_BUDGET"] = budget
    argv = [sys.executable, "-m", "segscore", *[str(a) for a in args]]
    done = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(argv), budget or "", str(timeout)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout + 30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def refused_in_one_line(result: dict, *names) -> str:
    """Assert ``result`` is a refusal: exit 2, nothing on stdout, one line on stderr naming each
    of ``names`` and no traceback; return the line."""
    lines = result["err"].strip().splitlines()
    assert result["code"] == 2, result
    assert "Traceback" not in result["err"], result["err"]
    assert len(lines) == 1, result["err"]
    for name in names:
        assert str(name) in lines[0], (name, lines[0])
    return lines[0]


def digests(paths) -> dict:
    """sha256 of each file in ``paths`` (what must not change)."""
    return {str(p): sha256(p) for p in paths}


def one_line(cli, argv, *names, code=2):
    """Run ``argv``: exit ``code``, one line on stderr naming each of ``names``, no traceback."""
    got, out, err = cli(*argv)
    lines = err.strip().splitlines()
    assert got == code, (got, err[-1500:])
    assert len(lines) == 1 and "Traceback" not in err, err[-1500:]
    for n in names:
        assert str(n) in lines[0], lines[0]
    return lines[0]
