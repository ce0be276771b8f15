"""``segscore``: one command, one subcommand per scorer.

``main(argv) -> int`` parses the arguments, imports only the chosen subcommand's module and
runs it. Exit codes (DESIGN.md, "Conventions"): 0 scored (a null metric inside is still 0);
2 bad input or usage, one line on stderr naming the file and the fix; 3 a check that ran
and found a violation; 1 only for a crash, which is a bug.

Each command is declared once in :data:`segscore.families.REGISTRY`. Its compute module
(``segscore.commands.NAME``) declares ``OPTIONS`` (:mod:`segscore.commands._declare`: the
subcommand's arguments are built from them) and defines ``compute(**values)`` and
``text(result)``, which the CLI prints; a command that prints more has a module
``segscore.cli.NAME`` with its own ``run(args) -> int``. Heavy dependencies are imported inside
the functions.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from segscore.families import REGISTRY

# views of the one registry, segscore.families.REGISTRY, where each command is declared (so
# ``segscore --help`` imports none of the command modules)
#: command -> its module
COMMANDS = {name: c.cli for name, c in REGISTRY.items()}
#: the spec tools' own names for the same commands
ALIASES = {alias: name for name, c in REGISTRY.items() for alias in c.aliases}
#: one-line help of each command
HELP = {name: c.help for name, c in REGISTRY.items()}


def epilog(command) -> str:
    """The end of ``segscore COMMAND --help``: the shared options it does not take and why, and
    the exit codes."""
    lines = []
    if command.without:
        lines.append("not offered here:")
        lines += [f"  {option}: {why}" for option, why in command.without]
    lines.append("exit codes: 0 it ran and scored (a null metric inside is still 0); 2 bad input or usage (one "
                 "line on stderr naming the file and the fix)"
                 + (f"; 3 {command.exit_3}" if command.exit_3 else "") + "; 1 a crash (a bug: please report it)")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` returns the code."""

    def exit(self, status=0, message=None):
        if message:
            sys.stderr.write(message)
        raise _Exit(status)

    def error(self, message):
        """A usage error: one line naming the command and the fix, exit 2 (not argparse's
        usage block)."""
        self.exit(2, f"{self.prog}: {message}; see `{self.prog} --help`\n")


class _Exit(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to add its arguments."""
    from segscore import __version__

    parser = _Parser(prog="segscore", description="Score segmentations and ink maps against human ground truth.")
    parser.add_argument("--version", action="version", version=f"segscore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in COMMANDS.items():
        aliases = [a for a, target in ALIASES.items() if target == name]
        p = sub.add_parser(name, help=HELP.get(name, ""), aliases=aliases, description=HELP.get(name, ""),
                           epilog=epilog(REGISTRY[name]), formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == command:
            from segscore.commands._declare import add_to_parser

            loaded = importlib.import_module(module)
            add_to_parser(p, loaded.OPTIONS)  # every command's arguments are its declarations
            p.description = getattr(loaded, "HELP_DESCRIPTION", None) or p.description
            p.set_defaults(_module=module)
    return parser


def unrecognized(command: str | None, extras) -> str:
    """The usage error for words no argument of ``command`` takes: the subcommand named, and
    for an unknown option the nearest one it has (difflib), e.g. ``segscore curve:
    unrecognized argument --threads; see `segscore curve --help```."""
    import difflib

    prog = f"segscore {command}" if command in COMMANDS else "segscore"
    flags = []
    if command in COMMANDS:
        module = importlib.import_module(COMMANDS[command])
        for o in module.OPTIONS:
            if o.where != "api":
                flags += list(o.flags)
        flags += ["--help"]
    options = [w for w in extras if w.startswith("-") and len(w) > 1]
    extras = options or list(extras)  # name the unknown options (the words after one are its values)
    hints = []
    for word in extras:
        if word.startswith("--"):
            near = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1)
            if near:
                hints.append(f"did you mean {near[0]}?")
    what = f"unrecognized argument{'' if len(extras) == 1 else 's'} {' '.join(extras)}"
    return f"{prog}: {what}" + "".join(f"; {h}" for h in hints) + f"; see `{prog} --help`\n"


def _command(argv) -> str | None:
    """The subcommand ``argv`` names (its first non-option word, aliases resolved)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    return ALIASES.get(command, command)


def main(argv=None) -> int:
    """Run ``segscore`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    try:
        parser = build_parser(command if command in COMMANDS else None)
        args, extras = parser.parse_known_args(argv)
    except _Exit as exc:
        return exc.code
    if extras:
        sys.stderr.write(unrecognized(command, extras))
        return 2
    if not getattr(args, "_module", None):
        parser.print_help(sys.stderr)
        return 2
    from segscore.cli._common import run_command, run_plain

    module = importlib.import_module(args._module)

    def checked_run(args):
        from segscore.commands._options import check_paths, settle_json

        settle_json(args)  # the words --json took that are inputs go to their place first
        check_paths(vars(args))  # no pipe or device read, no input overwritten: before anything runs
        if command in COMMANDS:
            from segscore.families import first_run

            first_run(command)  # an empty numba cache: the kernels compile in two processes (engine/firstrun.py)
        if hasattr(module, "run"):
            return module.run(args)
        return run_plain(module, args)

    return run_command(checked_run, args)


#: seconds from a ``segscore`` process's start during which the cyclic garbage collector rests
#: (:func:`pause_collector_at_start_up`)
START_UP_SECONDS = 2.0


def pause_collector_at_start_up(seconds: float = START_UP_SECONDS):
    """Rest Python's cyclic garbage collector while a ``segscore`` process starts, then move
    what the start made out of its sight and let it run again.

    Start-up makes about 110,000 objects that live until the process ends (the modules, numba's
    typing registries, the kernels' wrappers), and the collector's default thresholds walk that
    growing graph over and over while it is made: about 0.1 s held under the interpreter lock,
    much of it inside numba's first dispatch, which every command waits for (measured with
    ``gc.callbacks`` on ``objects --surface``: two full collections of 30 and 70 ms and ~40
    younger ones; benchmarks/README.md). After ``seconds`` (a daemon timer) the survivors are
    frozen (``gc.freeze``: never walked again, never freed before the exit, which they would
    not have been anyway) and collection resumes at the default thresholds (at once in a forked
    child), so a long run collects its cycles as before; a short one has made at most
    ``seconds`` of cyclic garbage.
    Objects are freed by reference counting throughout; only the search for cycles rests.
    Only the command-line process does this (:func:`entry`): a notebook's collector is its own.
    Returns the timer."""
    import gc
    import os
    import threading

    def resume():
        gc.freeze()
        gc.enable()

    gc.disable()
    os.register_at_fork(after_in_child=resume)  # a forked child has no timer of its own
    timer = threading.Timer(seconds, resume)
    timer.daemon = True
    timer.start()
    return timer


def entry() -> None:  # console script and ``python -m segscore``
    pause_collector_at_start_up()
    code = main()
    # The result is written: spare the exit's last garbage collection the walk over every object
    # numba and LLVM made (0.2-0.3 s of CPU per process, benchmarks/README.md, bench_exact.py).
    # Objects are still finalized as usual; only the cycle search over them is skipped.
    import gc

    gc.freeze()
    sys.exit(code)
