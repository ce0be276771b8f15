"""``segscore warm [COMMAND ...]``: fill numba's on-disk cache for the named commands (all by
default) before the first real run: in a container image, a CI cache step or on fresh cluster
workers. Each family's warm-up runs in its own process (``--processes``, default 2), a progress
bar on stderr; the summary (families warmed, the cache folder, seconds) on stdout, or as JSON
with ``--json``. Exit 2 for an unknown command name."""

from __future__ import annotations

from segscore.commands.warm import OPTIONS, text  # noqa: F401 - declared once there


def run(args) -> int:
    import json
    import sys

    from segscore.api import warm

    out = warm(args.commands or None, processes=args.processes, progress=_bar(sys.stderr))
    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write(text(out) + "\n")
    return 0



def _bar(stream, width: int = 24):
    """``progress(done, total, family)`` drawing ``warm [#####.....] 3/6 objects`` on ``stream``:
    redrawn in place on a terminal, one line per family otherwise (a CI log)."""
    tty = stream.isatty()

    def show(done, total, name):
        filled = width * done // max(total, 1)
        line = f"warm [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name}".rstrip()
        if tty:
            stream.write("\r" + line.ljust(width + 40) + ("\n" if done == total else ""))
        elif done:
            stream.write(line + "\n")
        stream.flush()

    return show
