"""``segscore warm [COMMAND ...]``: its options, declared once (the CLI, :func:`segscore.api.warm`)."""

from __future__ import annotations

from segscore.commands._declare import Option
from segscore.commands._options import positive_int  # noqa: E402

OPTIONS = (
    Option("commands", nargs="*", metavar="COMMAND", role="commands",
           help="the commands to warm (names or the spec tools' aliases; default: every command)"),
    Option("processes", ("--processes",), type=positive_int, default=2,
           help="warm-ups run at once, each in its own process (default 2; 1: one after another in this process)"),
    Option("json", ("--json",), kind="flag", where="cli",
           help="print the summary as JSON (the Python API's dict)"),
)


def text(out: dict) -> str:
    n = len(out["families"])
    return (f"warmed {n} famil{'y' if n == 1 else 'ies'} ({', '.join(out['families']) or 'none needed'}) "
            f"for {', '.join(out['commands'])} in {out['seconds']:.1f} s; cache: {out['cache']}")
