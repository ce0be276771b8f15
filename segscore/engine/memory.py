"""Keep the process's resident memory close to what it holds.

glibc raises its mmap threshold each time a large block is freed, after which buffers of a
few MB (a tile of a map, a decoded label chunk) come from the heap, where freed tiles stay
resident as fragments: a streamed scan that holds 100 MB at a time then peaks far above it.
Fixing the threshold makes every buffer of 1 MiB or more its own mapping, returned to the
system when freed. The CLI calls this once; library users may call it too. Elsewhere (no
glibc) it does nothing.
"""

from __future__ import annotations

import sys

_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
_THRESHOLD = 1 << 20
_done = False


def release_large_buffers() -> bool:
    """Serve buffers of 1 MiB and more by mmap (glibc only); True if the setting took."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        _done = bool(libc.mallopt(_M_MMAP_THRESHOLD, _THRESHOLD))
    except (OSError, AttributeError):  # not glibc
        return False
    return _done
