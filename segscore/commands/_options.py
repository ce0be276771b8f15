"""Argument types and option groups every command shares (``--json``, ``--tile-rows`` ...)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os


def number(kind=float, *, lo=None, hi=None, lo_open=False, whole_float=False):
    """An option type for a finite number in a range: ``kind`` int or float; ``lo``/``hi``
    bounds (``lo_open``: ``lo`` itself excluded). It takes a command-line word or a Python
    number (a bool is neither); anything else (text, NaN, inf, out of range) is refused saying
    what is allowed (on the command line a usage error, exit 2). ``whole_float``: a float that
    is whole comes back as an int (a length in voxels)."""
    import numbers

    def parse(text):
        if isinstance(text, str):
            try:
                value = int(text) if kind is int else float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole number' if kind is int else 'number'}") \
                    from None
        elif isinstance(text, numbers.Integral if kind is int else numbers.Real) and not isinstance(text, bool):
            value = int(text) if kind is int else float(text)
        else:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole number' if kind is int else 'number'}")
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if lo is not None and (value < lo or (lo_open and value == lo)):
            raise argparse.ArgumentTypeError(f"{text} must be {'more than' if lo_open else 'at least'} {lo}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{text} must be at most {hi}")
        if whole_float and float(value).is_integer():
            return int(value)
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its message
    return parse


#: argparse types used across commands
positive_int = number(int, lo=1)
nonnegative_int = number(int, lo=0)
#: a length in pixels or voxels: finite, >= 0, at most a million
length_px = number(float, lo=0, hi=1e6, whole_float=True)
#: a share in (0, 1]
share = number(float, lo=0, hi=1, lo_open=True)


def output_options(*, csv: bool = False, json_path: str | None = None, csv_help: str | None = None) -> tuple:
    """``--json``, ``--json-out FILE`` and (optionally) ``--csv FILE``.

    ``json_path``: the name of the command's positional input(s); ``--json`` then also takes an
    optional PATH, as curvicost's ``--json PATH`` (:class:`JsonTarget`; :func:`settle_json` puts
    the words it took back). Without it ``--json`` is a flag. ``--json`` is the command line's
    (the API returns the dict it prints)."""
    from segscore.commands._declare import Option

    if json_path:
        json = Option("json", ("--json",), action=JsonTarget, nargs="?", default=False, metavar="FILE.json",
                      where="cli", extra={"positional": json_path},
                      help="alone: print the result as JSON (the Python API's dict) on stdout; with a FILE ending in "
                           ".json: write it there and print the text report (curvicost's --json PATH); a word after "
                           "--json not ending in .json is read as the input it is")
    else:
        json = Option("json", ("--json",), kind="flag", where="cli",
                      help="print the result as JSON (the Python API's dict)")
    out = (json, Option("json_out", ("--json-out",), metavar="FILE", help="also write the JSON result to FILE"))
    if csv:
        out += (Option("csv", ("--csv",), metavar="FILE",
                       help=csv_help or "also write the result as CSV (a header and rows)"),)
    return out


def missing_option(what: str) -> tuple:
    """``--missing null|worst``: the aggregation policy for misses (:mod:`segscore.metrics.missing`);
    ``what``: what the option adds to the command's output. Default: not given (``null``'s output,
    today's); another value is refused."""
    from segscore.commands._declare import Option
    from segscore.metrics.missing import POLICIES

    return (Option("missing", ("--missing",), choices=POLICIES,
                   help=f"{what}; null: a miss is left out and counted; worst: a miss (truth present and "
                        "prediction empty, or the reverse; both empty is not a miss) counts as the metric's "
                        "worst value (Dice, F1 0; a distance the image diagonal; VOI none: not imputable), "
                        "and each unmatched object counts in a per-object mean"),)


def scheduler_address(value):
    """``--scheduler``'s type: a scheduler's address as text (``tcp://HOST:PORT``); a
    ``distributed.Client`` goes to ``executor=`` instead."""
    if not isinstance(value, str) or not value.strip():
        raise argparse.ArgumentTypeError(f"{value!r} is not a scheduler address (tcp://HOST:PORT); pass a "
                                         "distributed.Client as executor= instead")
    return value.strip()


scheduler_address.__name__ = "address"


def cluster_options(*, single: str | None = None, only: str | None = None, fans: str | None = None,
                    group: str = "cluster") -> tuple:
    """``--processes N`` and ``--scheduler ADDRESS`` (one or the other): run the command's streamed
    pass as one job spread over a ``dask.distributed`` cluster, each worker reading its own windows
    (:func:`cluster_executor`); in the API ``processes=`` and ``scheduler=``. ``single``: the
    command runs in one process only, for this reason (the options are then refused in one line,
    and ``--help`` says so); ``only``: what of the command cannot (refused with it, said in ``--help``).
    ``fans``: what goes to the cluster when it is not one job's windows (``batch``'s jobs, ``audit``'s
    cases); ``group``: the name of their mutually exclusive group."""
    from segscore.commands._declare import Option

    if fans:
        helps = (f"run {fans} on a local dask.distributed cluster of N worker processes (127.0.0.1; one thread "
                 "each unless --threads)", f"run {fans} on the running dask.distributed cluster at ADDRESS "
                 "(tcp://HOST:PORT)")
    elif single:
        helps = (f"not for this command (refused: {single})",) * 2
    else:
        but = f"; not with {only}, which runs in one process" if only else ""
        helps = ("run this one job on a local dask.distributed cluster of N worker processes (127.0.0.1; --threads "
                 f"threads each, default 1): the same numbers as one process{but}",
                 "run this one job on the running dask.distributed cluster at ADDRESS (tcp://HOST:PORT): its workers "
                 "read their own windows of the files (paths they can see, or http/s3 zarr); the same numbers as one "
                 f"process (docs/cluster.md){but}")
    return (Option("processes", ("--processes",), type=number(int, lo=1, hi=512), metavar="N", group=group,
                   help=helps[0]),
            Option("scheduler", ("--scheduler",), type=scheduler_address, metavar="ADDRESS", group=group,
                   help=helps[1]))


@contextlib.contextmanager
def cluster_executor(o: dict, *, single: str | None = None, warm: str | None = None):
    """Within the block, the executor a command's engine runs on: ``o["executor"]`` (the API's),
    or a client of the cluster ``o["processes"]``/``o["scheduler"]`` name (:func:`cluster_options`),
    reached through :func:`segscore.engine.executor.connect` and closed (a local cluster shut down,
    a running one left running) when the block ends. ``single``: why this run cannot go to a
    cluster (then the options are refused in one line). ``warm``: "module:function" loading the
    kernels the tasks run, on one worker first and then the others (numba's cache is built once)."""
    from segscore.errors import ScoreError

    processes, scheduler = o.get("processes"), o.get("scheduler")
    if processes is None and scheduler is None:
        yield o.get("executor")
        return
    flag = "--scheduler" if scheduler is not None else "--processes"
    if single:
        refuse_cluster(o, single)
    if processes is not None and scheduler is not None:
        raise ScoreError("--processes and --scheduler: give one (a local cluster, or a running one)")
    if o.get("executor") is not None:
        raise ScoreError(f"{flag} and executor= both name where the work runs; give one")
    from segscore.engine.executor import connect, warm_cluster

    client, close = connect(processes=processes, threads=o.get("threads") if processes is not None else None,
                            scheduler=scheduler)
    try:
        if warm:
            warm_cluster(client, warm)
        yield client
    finally:
        close()


def refuse_cluster(o: dict, why: str) -> None:
    """A one-line :class:`~segscore.errors.ScoreError` when ``o`` asks for ``--processes`` or
    ``--scheduler`` and the run cannot go to a cluster, for reason ``why``; nothing otherwise."""
    from segscore.errors import ScoreError

    for flag, key in (("--scheduler", "scheduler"), ("--processes", "processes")):
        if o.get(key) is not None:
            raise ScoreError(f"{flag}: {why}; fix: drop {flag} (this runs in one process)")


def engine_options(*, tile_rows: bool = True, threads_help: str | None = None, executor: bool = False,
                   cluster: bool = False, cluster_only: str | None = None) -> tuple:
    """``--tile-rows N`` (unless ``tile_rows`` is False) and ``--threads N`` (``--workers`` is a
    hidden alias of ``--threads``); with ``executor``, the API's ``executor=`` (a dask scheduler
    name or a ``distributed.Client``: where the tiles are reduced); with ``cluster``, the
    :func:`cluster_options` (``cluster_only``: their ``only``)."""
    from segscore.commands._declare import Option

    out = ()
    if tile_rows:
        out += (Option("tile_rows", ("--tile-rows",), type=positive_int, metavar="N",
                       help="rows (slices of a 3D image) per tile (default: bands of a few tens of MB)"),)
    out += (Option("threads", ("--threads",), type=positive_int, metavar="N", hidden=("--workers",),
                   help=threads_help or "threads in this process (default: the CPUs available, at most 8)"),)
    if executor:
        out += (Option("executor", where="api",
                       help="where the tiles are reduced: None (threads here), a dask scheduler name or a "
                            "distributed.Client (workers read their own windows)"),)
    if cluster:
        out += cluster_options(only=cluster_only)
    return out


def floor_options(*, executor: bool = False) -> tuple:
    """The trailing options of a scoring command with ScrollGT floors: ``--seed``,
    ``--no-floors``, the output options and the engine options."""
    from segscore.commands._declare import Option

    return (Option("seed", ("--seed",), type=nonnegative_int, default=0,
                   help="seed of the uniform_random floor (default 0)"),
            Option("no_floors", ("--no-floors",), kind="flag", help="skip the floors"),
            *output_options(), *engine_options(executor=executor))


def plot_option(what: str) -> tuple:
    """``--plot FILE.png|svg`` on a scoring command: ``what`` the figure shows."""
    from segscore.commands._declare import Option
    from segscore.figures._base import INSTALL, plot_file

    return (Option("plot", ("--plot",), type=plot_file, metavar="FILE.png|svg",
                   help=f"also draw {what} to FILE (PNG or SVG by the suffix; needs the plot extra: {INSTALL})"),)


class JsonTarget(argparse.Action):
    """``--json [FILE.json]`` of a command whose positional input(s) are ``positional``.

    argparse gives an optional value the next word, so in ``--json pred.png --gt gt.png`` it
    would take the mask. A value ending in ``.json`` is the file to write; any other is kept (with
    whether the positional was already filled then, for its place in a list) for
    :func:`settle_json`, and ``--json`` stands alone."""

    def __init__(self, option_strings, dest, positional=None, **kwargs):
        self.positional = positional
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if values is None or str(values).lower().endswith(".json"):
            setattr(namespace, self.dest, True if values is None else values)
            return
        setattr(namespace, self.dest, True)
        before = getattr(namespace, self.positional, None)
        spill = list(getattr(namespace, "_json_spill", None) or [])
        spill.append((self.positional, values, before not in (None, [])))
        namespace._json_spill = spill


def settle_json(args) -> None:
    """After parsing with ``output_options(json_path=NAME)``: the words ``--json`` did not take
    go to the positional ``NAME`` (a word for a single positional already given is refused: it
    is neither the input nor a JSON file's name); ``--json FILE.json`` becomes ``args.json_path``
    (written by the CLI's :func:`segscore.cli._common.show`) and ``args.json`` False (the text
    report is printed). Runs
    once: a second call changes nothing. (That no output names an input is :func:`check_paths`'s.)"""
    from segscore.errors import ScoreError

    for dest, word, after in args.__dict__.pop("_json_spill", None) or []:
        have = getattr(args, dest, None)
        if isinstance(have, list):
            setattr(args, dest, have + [word] if after else [word] + have)
        elif have is None:
            setattr(args, dest, word)
        else:
            raise ScoreError(f"--json {word}: not a JSON file's name (it does not end in .json) and the input is "
                             f"already given ({have}); give --json alone to print the JSON, --json NAME.json or "
                             f"--json-out FILE to write it")
    if isinstance(getattr(args, "json", None), str):
        args.json_path, args.json = args.json, False


def write_outputs(values: dict, result, *, csv_rows=None) -> None:
    """Write the files ``json_out`` and ``csv`` of ``values`` name (the CSV from ``csv_rows``).
    Every command's compute part ends here, so this is also where its result gets its top-level
    ``warnings`` list (the result contract, :func:`segscore.io.results.with_warnings`)."""
    from segscore.io.results import with_warnings, write_csv, write_json

    with_warnings(result)
    if values.get("json_out"):
        write_json(values["json_out"], result)
    if values.get("csv") and csv_rows is not None:
        write_csv(values["csv"], csv_rows)


def spacing_options() -> tuple:
    """``--spacing`` (one voxel size per axis) and ``--prune-length`` (spur pruning in its unit)
    of the curvilinear commands."""
    from segscore.commands._declare import Option

    return (Option("spacing", ("--spacing",), type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
                   help="voxel spacing, one number per axis in array order (Z Y X or Y X); default: the one the "
                        "files' headers state (NIfTI, OME-Zarr, TIFF resolution), else 1 each. Lengths, radii, the "
                        "r^4 conductance and hd95 are then in its unit (curvicost only records a voxel size)"),
            Option("prune_length", ("--prune-length",), type=number(float, lo=0, hi=1e12), metavar="L",
                   help="spur-pruning length in the spacing's unit, instead of --prune-px voxels"))


#: the names of the values naming files a command writes, with their option for messages
OUTPUT_DESTS = {"json_out": "--json-out", "json_path": "--json", "csv": "--csv", "plot": "--plot", "per_object": "--per-object",
                "evidence": "--evidence", "output": "-o"}
#: names that name neither an input nor an output checked here: a ledger, results store or
#: sample folder updated in place, or a folder a command writes itself (``--out``: batch results;
#: fibers-target's target, which refuses to replace a folder holding its inputs)
_IN_PLACE_DESTS = {"slug", "root", "keep", "out", "command", "_module"}


def _paths(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def check_paths(values: dict) -> None:
    """Before a command reads or writes: every input that is a local path is a regular file or a
    folder (no pipe, socket or device), and no output replaces an input of the run
    (:mod:`segscore.io.paths`). Inputs are the values that exist on disk, outputs those named in
    :data:`OUTPUT_DESTS` (``--json FILE.json`` among them, where a command writes it)."""
    from segscore.io.paths import check_outputs, check_readable

    outputs = [(flag, p) for dest, flag in OUTPUT_DESTS.items() for p in _paths(values.get(dest))]
    inputs = []
    for dest, value in values.items():
        if dest in OUTPUT_DESTS or dest in _IN_PLACE_DESTS or dest == "json":
            continue
        for p in _paths(value):
            if "://" in p or "\0" in p:
                continue
            check_readable(p)
            if os.path.lexists(p):
                inputs.append(p)
    check_outputs(inputs, outputs)


def ignore_options(truth: str = "truth", note: str = "", *, mask_role: str | None = None) -> tuple:
    """``--ignore-label V`` and ``--ignore-mask FILE`` (none ignored by default): voxels the
    ``truth`` marks so are background in both images before anything else (``note``: what else
    the command does then)."""
    from segscore.commands._declare import Option

    return (Option("ignore_label", ("--ignore-label",), type=number(float, whole_float=True), metavar="V",
                   help=f"voxels where the {truth} equals V are background in both images before anything else "
                        f"(default: none ignored){note}"),
            Option("ignore_mask", ("--ignore-mask",), metavar="FILE", arrays=True, role=mask_role,
                   help=f"a mask on the {truth}'s grid: its non-zero voxels are background in both images, instead "
                        f"of --ignore-label"))


def value_text(v, null: str = "null") -> str:
    """A value as the text reports print it: a float to 4 decimals, None as ``null``."""
    return null if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))
