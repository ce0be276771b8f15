"""``segscore``: one command, one subcommand per scorer.

``main(argv) -> int`` parses the arguments, imports only the chosen subcommand's module and
runs it. Exit codes (DESIGN.md, "Conventions"): 0 scored (a null metric inside is still 0);
2 bad input or usage, one line on stderr naming the file and the fix; 3 a check that ran
and found a violation; 1 only for a crash, which is a bug.

A subcommand module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; it imports its heavy dependencies inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: subcommand -> module. Aliases are the spec tools' own names for the same command.
COMMANDS = {
    "auc": "segscore.cli.auc",
    "demo": "segscore.cli.demo",
    "run": "segscore.cli.run",
    "target": "segscore.cli.target",
    "columns": "segscore.cli.columns",
    "check": "segscore.cli.check",
    "placement": "segscore.cli.placement",
    "curve": "segscore.cli.curve",
    "perturb": "segscore.cli.perturb",
    "audit": "segscore.cli.audit",
    "profile": "segscore.cli.profile",
    "objects": "segscore.cli.objects",
    "holdout": "segscore.cli.holdout",
    "fibers": "segscore.cli.fibers",
    "fibers-aggregate": "segscore.cli.fibers_aggregate",
    "fibers-target": "segscore.cli.fibers_target",
    "surfaces": "segscore.cli.surfaces",
}
#: commands that run other commands' jobs (no family's: the registry names them, see segscore.families)
RUNNERS = {"batch": "segscore.cli.batch", "report": "segscore.cli.report"}
#: commands that run numba kernels: ``entry`` starts numba for them without its BLAS probe, where
#: their kernels run in the command's own process (a module's ``runs_kernels_here(args)`` decides:
#: ``audit`` and ``batch`` with ``--processes`` or ``--scheduler`` run theirs on the workers)
KERNEL_COMMANDS = {"auc", "demo", "target", "columns", "curve", "perturb", "audit", "profile", "objects", "holdout",
                   "fibers", "batch", "surfaces"}
ALIASES: dict[str, str] = {
    "score": "target",
    "score-columns": "columns",
    "score-fibers": "fibers",
}

#: one-line help of each command, so ``segscore --help`` imports none of them
HELP = {
    "auc": "pixel AUC of an ink map inside a supervision mask, with control, bootstrap and compare",
    "demo": "score a built-in synthetic segment (offline), as `segscore auc` prints it",
    "run": "experiment ledger: `segscore run init SLUG` starts ROOT/SLUG/run.json",
    "target": "ScrollGT ink target: F1 sweep, AP-prevalence-lift, ROC-AUC and floors of a prediction",
    "columns": "ScrollGT column target: text columns vs gutters and line periodicity, with floors",
    "check": "prize pre-check: ML window cap and train/predict region overlap (exit 3 on a violation)",
    "placement": "placement probe: where prediction and label agree best (NCC over shifts), per tile too",
    "objects": "object scorecard of an instance segmentation (matching, AP sweep, Dice, boundary F1, splits/merges)",
    "holdout": "score predictions on a versioned held-out set (scorecard table, CSV), or --verify its digests",
    "curve": "curvilinear masks: Dice, clDice, Betti-0, ERL beside reachable length and Kirchhoff conductance",
    "perturb": "curvilinear masks: apply one typed error operator (break, bridge, truncate, radius, boundary)",
    "audit": "curvilinear masks: audit which metric tracks which cost per error type (curvicost's audit)",
    "profile": "curvilinear masks: which error types a method makes (shares of the five operators, and the "
               "unexplained part)",
    "fibers": "fiber connectivity (ScrollGT score-fibers): ERL, merge-penalized ERL, splits, merges, floors",
    "fibers-aggregate": "mean ERL over `segscore fibers` cards of one cube size class",
    "fibers-target": "build a fiber target folder from WEBKNOSSOS .nml traces and a reference fiber mask",
    "surfaces": "3D surfaces: TopoScore (Betti matching), surface Dice and VOI, and the Vesuvius leaderboard score",
    "batch": "run a manifest of scoring jobs (CSV, JSON, JSON Lines, grid) on threads or a dask cluster, resumably",
    "report": "leaderboard of a batch results folder: each family's headline numbers beside its floors or control",
}


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
    for name, module in {**COMMANDS, **RUNNERS}.items():
        aliases = [a for a, target in ALIASES.items() if target == name]
        p = sub.add_parser(name, help=HELP.get(name, ""), aliases=aliases, description=HELP.get(name, ""))
        if name == command:
            importlib.import_module(module).add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def _command(argv) -> str | None:
    """The subcommand ``argv`` names (its first non-option word, aliases resolved)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    return ALIASES.get(command, command)


def main(argv=None, *, own_process: bool = False) -> int:
    """Run ``segscore`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    ``own_process``: this process is the command's own (the console script's, :func:`entry`), so
    it may be set up for the command: numba started without its BLAS probe where the command's
    kernels run here, and whatever else a command does only in a process it owns (its ``args``
    carry ``own_process``). Called from Python, a command changes nothing process-wide."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    try:
        parser = build_parser(command if command in COMMANDS or command in RUNNERS else None)
        args = parser.parse_args(argv)
    except _Exit as exc:
        return exc.code
    if not getattr(args, "_module", None):
        parser.print_help(sys.stderr)
        return 2
    from segscore.cli._common import run_command
    from segscore.engine.memory import release_large_buffers

    module = importlib.import_module(args._module)
    args.own_process = own_process
    if own_process and command in KERNEL_COMMANDS and getattr(
            module, "runs_kernels_here", lambda a: True)(args):
        # this process is the command's own and runs its kernels: start numba lean, before any
        # thread exists
        from segscore.kernels._jit import start_without_blas_probe

        start_without_blas_probe()
    release_large_buffers()
    return run_command(module.run, args)


def entry() -> None:  # console script and ``python -m segscore``
    exit_now(main(own_process=True))


def exit_now(code: int) -> None:
    """End the process with ``code`` without tearing the interpreter down.

    With numba and LLVM loaded, Python's teardown (releasing every module and object) takes
    0.5-1 s on a small machine, often longer than the command's own work. Standard output and
    error are flushed and the ``atexit`` handlers run first; every file a command writes is
    closed before it returns.
    """
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    atexit._run_exitfuncs()
    os._exit(code)
