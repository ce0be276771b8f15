"""The family registry: the one place above the engine that knows every scoring family.

Each family is registered once with its name, the commands that score with it, its score
function and its warm-up (a tiny call that compiles, or loads from numba's on-disk cache, the
kernels the family's scoring runs, for the dtypes inputs usually have). ``segscore.warm()``
runs the warm-ups in this process: call it once before fanning work out to dask workers, so
several processes never build the same numba cache at once (numba #4807, #10128).

Entries name functions as ``"module:attribute"`` and import nothing until used, so reading
the registry is free.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One scoring family."""

    name: str
    commands: tuple[str, ...]
    score: str  # "module:function": the family's segscore.api function (truth, pred, *, options)
    warm: str  # "module:function" compiling the family's kernels (no arguments)

    def load(self, what: str):
        module, attr = getattr(self, what).split(":")
        return getattr(importlib.import_module(module), attr)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("ink", ("auc", "demo", "target", "placement", "check"), "segscore.api:auc",
           "segscore.ink.warmup:warm"),
    Family("columns", ("columns",), "segscore.api:columns", "segscore.columns.warmup:warm"),
    Family("objects", ("objects", "holdout"), "segscore.api:objects",
           "segscore.objects.warmup:warm"),
    Family("fibers", ("fibers", "fibers-aggregate", "fibers-target"), "segscore.api:fibers",
           "segscore.fibers.warmup:warm"),
    Family("curvilinear", ("curve", "perturb", "audit", "profile"), "segscore.api:curve",
           "segscore.curvilinear.warmup:warm"),
    Family("topology", ("surfaces",), "segscore.api:surfaces", "segscore.topology.warmup:warm"),
)}


@dataclass(frozen=True)
class Command:
    """One command of ``segscore``, declared once: its name, one-line ``help`` and ``aliases`` (the
    spec tools' own names), its module ``segscore.cli.NAME`` (``OPTIONS``, ``run``). A scoring
    command (``family`` set, ``batch``) is also a batch job and a :mod:`segscore.api` function: its
    option declarations (``OPTIONS`` of its compute module), its compute part (values -> the dict
    ``--json`` prints; prints nothing), result -> one flat row, the options naming files or
    folders it reads (``inputs``: option names; in a job, relative ones resolve against the
    manifest's folder and each is fingerprinted) and the options naming what it writes
    (``outputs``: command-line spellings; in a job, under ``DIR/outputs/ID/``; ``--slug`` puts the
    ledger there). Its leaderboard cells (what ``segscore report`` shows of a result, each number
    beside its floors or control) are ``headline(result)`` of its compute module, by convention
    (:func:`headline`)."""

    name: str
    family: str | None
    help: str
    compute: str = ""  # "module:function" (*, progress=None, recorded=None, **values) -> result dict
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ("--json-out",)
    row: str = "segscore.io.results:flatten"  # "module:function" result -> flat row
    aliases: tuple[str, ...] = ()
    batch: bool = True
    #: the options of the shared vocabulary (:data:`VOCABULARY`) the command does not take, each
    #: with the reason (shown at the end of its ``--help``)
    without: tuple[tuple[str, str], ...] = ()
    #: exit codes beyond 0, 1 and 2 (``check``'s 3 for a violation, ``holdout --verify``'s)
    exit_3: str = ""

    @property
    def cli(self) -> str:
        """The module of ``segscore NAME``: ``segscore.cli.NAME`` where the command prints more
        than its result (its own ``run(args)``), else its compute module, which the CLI runs
        plainly (:func:`segscore.cli._common.run_plain`)."""
        module = "segscore.cli." + self.name.replace("-", "_")
        return module if importlib.util.find_spec(module) else self.compute.split(":")[0]

    def load(self, what: str):
        module, attr = getattr(self, what).split(":")
        return getattr(importlib.import_module(module), attr)

    @property
    def module(self):
        """Its compute module (``segscore.commands.NAME``: ``OPTIONS``, ``compute``, ``text``)."""
        return importlib.import_module(self.compute.split(":")[0])


def headline(cmd: Command | None):
    """The leaderboard cells of ``cmd``'s results: the function ``headline(result) -> [Cell]``
    (``segscore.commands._headline.Cell``: name, value, role headline/floor/control/oracle/interval/
    derived/setting, the headline it sits beside) its compute module defines, else (and for no
    command) the default, the result's top-level numbers."""
    from segscore.commands._headline import scalars_headline

    if cmd is None or not cmd.compute:
        return scalars_headline
    return getattr(importlib.import_module(cmd.compute.split(":")[0]), "headline", scalars_headline)


#: the options every command takes where they mean something (a command that does not says why)
VOCABULARY = ("--json", "--json-out", "--csv", "--plot", "--threads", "--tile-rows")

#: reasons shared by several commands
_WHOLE = "its inputs are read whole (small), not streamed in tiles"
_ONE_THREAD = "its work is one small computation in one thread"
_NO_ROWS = "its result is not a table of rows (use --json-out)"
_NO_FIGURE = "there is no figure of this result"


def _command(name, family_name, help, inputs=(), outputs=("--json-out",), aliases=(), without=(),
             exit_3="") -> Command:
    module = "segscore.commands." + name.replace("-", "_")
    return Command(name, family_name, help, f"{module}:compute", tuple(inputs),
                   tuple(outputs), aliases=tuple(aliases), without=tuple(without), exit_3=exit_3)


def _other(name, family_name, help, without=()) -> Command:
    """A command that is not a batch job (it runs jobs, reads their results, or keeps a ledger)."""
    return Command(name, family_name, help, batch=False, without=tuple(without))


#: every command of ``segscore``, in the order ``segscore --help`` lists them
REGISTRY: dict[str, Command] = {c.name: c for c in (
    _command("auc", "ink", "pixel AUC of an ink map inside a supervision mask, with control, bootstrap and compare",
             ("pred", "truth", "mask", "control", "compare"), ("--json-out", "--csv", "--slug", "--plot")),
    _command("demo", "ink", "score a built-in synthetic segment (offline), as `segscore auc` prints it", (),
             ("--json-out", "--keep"),
             without=(("--csv", _NO_ROWS), ("--plot", "plot the sample with `segscore auc ... --plot` (the demo prints that line with --keep DIR)"), ("--threads", _ONE_THREAD), ("--tile-rows", "the sample is small: one tile"))),
    _other("run", None, "experiment ledger: `segscore run init SLUG` starts ROOT/SLUG/run.json",
           without=(("--json", "it prints the ledger (run.json) itself"), ("--json-out", "the ledger is ROOT/SLUG/run.json"), ("--csv", _NO_ROWS), ("--plot", _NO_FIGURE), ("--threads", _ONE_THREAD), ("--tile-rows", "it reads no image"))),
    _command("target", "ink", "ScrollGT ink target: F1 sweep, AP-prevalence-lift, ROC-AUC and floors of a prediction",
             ("pred", "truth"), ("--json-out", "--plot"), aliases=("score",),
             without=(("--csv", _NO_ROWS),)),
    _command("placement", "ink", "placement probe: where prediction and label agree best (NCC over shifts), per tile too",
             ("pred", "truth"), ("--json-out", "--evidence"),
             without=(("--csv", _NO_ROWS), ("--plot", "the figure is --evidence FILE.png"), ("--tile-rows", "the cross-correlation takes FFTs of the whole map"))),
    _command("check", "ink", "prize pre-check: ML window cap and train/predict region overlap (exit 3 on a violation)",
             ("regions_json",), exit_3="a violation of the rules found",
             without=(("--csv", _NO_ROWS), ("--plot", _NO_FIGURE), ("--threads", _ONE_THREAD), ("--tile-rows", "it reads no image"))),
    _command("columns", "columns", "ScrollGT column target: text columns vs gutters and line periodicity, with floors",
             ("pred", "truth"), aliases=("score-columns",),
             without=(("--csv", _NO_ROWS), ("--plot", _NO_FIGURE))),
    _command("objects", "objects", "object scorecard of an instance segmentation (matching, AP sweep, Dice, boundary "
             "F1, splits/merges)", ("truth", "pred", "ignore_mask"), ("--json-out", "--per-object", "--plot")),
    _command("holdout", "objects", "score predictions on a versioned held-out set (scorecard table, CSV), or --verify "
             "its digests", ("manifest", "predictions", "baseline"), ("--json-out", "--csv"), exit_3="--verify found a missing or altered truth mask",
             without=(("--plot", "plot a field with `segscore objects TRUTH PRED --plot`"), ("--threads", "its fields are scored one after another, each with the engine's default threads"), ("--tile-rows", "each field is scored with the engine's default tiles"))),
    _command("fibers", "fibers", "fiber connectivity (ScrollGT score-fibers): ERL, merge-penalized ERL, splits, "
             "merges, floors", ("pred", "truth"), ("--json-out", "--plot"), aliases=("score-fibers",),
             without=(("--csv", _NO_ROWS), ("--threads", "the skeleton lookups are one vectorized pass"), ("--tile-rows", "a cube is read whole (a 512^3 cube is 0.5 GB of labels)"))),
    _command("fibers-aggregate", "fibers", "mean ERL over `segscore fibers` cards of one cube size class", ("cards",),
             without=(("--csv", _NO_ROWS), ("--plot", _NO_FIGURE), ("--threads", _ONE_THREAD), ("--tile-rows", "it reads cards, not images"))),
    _command("fibers-target", "fibers", "build a fiber target folder from WEBKNOSSOS .nml traces and a reference "
             "fiber mask", ("nml", "mask"), ("--json-out", "--out"),
             without=(("--csv", _NO_ROWS), ("--plot", _NO_FIGURE), ("--threads", _ONE_THREAD), ("--tile-rows", _WHOLE))),
    _command("curve", "curvilinear", "curvilinear masks: Dice, clDice, Betti-0, ERL beside reachable length and "
             "Kirchhoff conductance", ("pred", "truth", "ignore_mask"), ("--json-out", "--csv"),
             without=(("--plot", _NO_FIGURE), ("--threads", "the skeleton and graph are built whole, in one thread"), ("--tile-rows", "a skeleton is global: the masks are read whole"))),
    _command("perturb", "curvilinear", "curvilinear masks: apply one typed error operator (break, bridge, truncate, "
             "radius, boundary)", ("mask",), ("-o", "--json-out"),
             without=(("--csv", _NO_ROWS), ("--plot", "the output is the perturbed mask (-o)"), ("--threads", _ONE_THREAD), ("--tile-rows", "the operators act on the whole mask"))),
    _command("audit", "curvilinear", "curvilinear masks: audit which metric tracks which cost per error type "
             "(curvicost's audit)", ("masks", "cases", "profile", "gt", "profile_json"),
             ("--json-out", "--csv", "--plot"),
             without=(("--tile-rows", "a skeleton is global: the masks are read whole"),)),
    _command("profile", "curvilinear", "curvilinear masks: which error types a method makes (shares of the five "
             "operators, and the unexplained part)", ("pred", "truth"),
             without=(("--csv", _NO_ROWS), ("--plot", _NO_FIGURE), ("--tile-rows", "a skeleton is global: the masks are read whole"))),
    _other("batch", None, "run a manifest of scoring jobs (CSV, JSON, JSON Lines, grid) on threads or a dask cluster, "
           "resumably",
           without=(("--json", "its results are --out DIR/results.jsonl; `segscore report DIR --json` prints them"), ("--json-out", "its results are --out DIR/results.jsonl and results.csv"), ("--csv", "it writes --out DIR/results.csv"), ("--plot", "`segscore report DIR --plot FILE` draws the leaderboard"), ("--tile-rows", "each job takes its own --tile-rows"))),
    _other("report", None, "leaderboard of a batch results folder: each family's headline numbers beside its floors "
           "or control",
           without=(("--threads", _ONE_THREAD), ("--tile-rows", "it reads results, not images"))),
    _other("warm", None, "fill numba's on-disk cache for COMMAND ... (all by default): the first run then loads, "
           "not compiles",
           without=(("--json-out", "it writes nothing but the cache"), ("--csv", _NO_ROWS), ("--plot", _NO_FIGURE),
                    ("--threads", "each family's warm-up is one process (--processes)"),
                    ("--tile-rows", "it reads no image"))),
    _command("surfaces", "topology", "3D surfaces: TopoScore (Betti matching), surface Dice and VOI, and the "
             "Vesuvius leaderboard score", ("pred", "truth", "ignore_mask", "gt_dir", "pred_dir",
                                            "ignore_mask_dir"), ("--json-out", "--csv", "--out", "--plot")),
)}

#: the commands a batch job can be, by name
COMMANDS: dict[str, Command] = {n: c for n, c in REGISTRY.items() if c.batch}


def command(name: str) -> Command:
    """The batch command ``name`` (or one of its aliases); KeyError naming the known ones otherwise."""
    for c in COMMANDS.values():
        if name == c.name or name in c.aliases:
            return c
    raise KeyError(f"no batch command {name!r}; commands: {', '.join(COMMANDS)}")


def family(name: str) -> Family:
    """The registered family ``name``; KeyError naming the known ones otherwise."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"no family {name!r}; families: {sorted(FAMILIES)}") from None


def warm(families=None) -> list[str]:
    """Compile or load the kernels of ``families`` (default: all) in this process, and stamp their
    commands' first runs as done (:mod:`segscore.engine.firstrun`); returns the names warmed."""
    names = list(FAMILIES) if families is None else [families] if isinstance(families, str) else list(families)
    for name in names:
        family(name).load("warm")()
        _mark_first_runs([name])  # its commands' first runs have nothing left to divide
    return names



def first_run(command: str) -> dict | None:
    """Divide ``command``'s first-run compile between two processes where its family's warm-up
    module plans it (its ``FIRST_RUN``; :func:`segscore.engine.firstrun.compile_first`: nothing is
    done after the first run, with one CPU or ``SEGSCORE_COMPILE_PROCESSES=1``). The CLI calls it
    before a command runs; None when nothing was done."""
    cmd = REGISTRY.get(command)
    if cmd is None or not cmd.family:
        return None
    module = importlib.import_module(family(cmd.family).warm.split(":")[0])
    plan = getattr(module, "FIRST_RUN", {}).get(command)
    if plan is None:
        return None
    from segscore.engine.firstrun import compile_first

    return compile_first(command, plan)


def _mark_first_runs(names) -> None:
    """Stamp every command of the families ``names`` as having had its first run (their warm-ups
    compiled all it needs)."""
    from segscore.engine.firstrun import mark_done

    mark_done([c.name for c in REGISTRY.values() if c.family in set(names)])


def warm_families_of(commands=None) -> list[str]:
    """The families whose warm-ups cover ``commands`` (names or aliases; default: every command),
    in registry order; a :class:`~segscore.errors.ScoreError` naming the commands warmed for an
    unknown name. Commands of no family (``run``, ``batch``, ``report``) need none."""
    from segscore.errors import ScoreError

    if commands is None:
        return list(FAMILIES)
    wanted = set()
    for name in [commands] if isinstance(commands, str) else commands:
        match = [c for c in REGISTRY.values() if name == c.name or name in c.aliases]
        if not match:
            raise ScoreError(f"no command {name!r} to warm; fix: name some of {', '.join(REGISTRY)}")
        if match[0].family:
            wanted.add(match[0].family)
    return [f for f in FAMILIES if f in wanted]


def _planned_first_runs(name: str) -> None:
    """The first runs the family ``name`` plans (its warm-up module's ``FIRST_RUN``), each divided
    between two processes as the command's own first run is (nothing where stamped already), so
    that its warm-up then loads those kernels and compiles only the rest: one family warmed on
    two CPUs instead of one."""
    from segscore.engine.firstrun import compile_first

    module = importlib.import_module(family(name).warm.split(":")[0])
    for command, plan in getattr(module, "FIRST_RUN", {}).items():
        compile_first(command, plan)


def warm_commands(commands=None, *, processes: int = 2, progress=None) -> list[str]:
    """Fill numba's on-disk cache for ``commands`` (default: every command): the warm-ups of their
    families (:func:`warm_families_of`), each in a fresh process, up to ``processes`` at once (a
    ``spawn`` :class:`~concurrent.futures.ProcessPoolExecutor`; ``processes <= 1`` runs them here,
    one after another). One family with ``processes >= 2`` is warmed here after its planned
    commands' first runs, each on two processes (:func:`_planned_first_runs`).
    ``progress(done, total, name)`` is called before the first (``done=0``,
    ``name=""``) and after each family. Returns the families warmed, in the order they finished.

    The processes inherit ``NUMBA_CACHE_DIR``; a kernel two families share may be compiled by both
    at once, and numba writes each cache entry whole (the second write replaces the first)."""
    import concurrent.futures as cf
    import multiprocessing

    names = warm_families_of(commands)
    # the slowest warm-ups first, so the last one to start is a short one
    order = {"curvilinear": 0, "topology": 1, "objects": 2, "fibers": 3, "ink": 4, "columns": 5}
    names.sort(key=lambda n: order.get(n, len(order)))
    total = len(names)
    if progress is not None:
        progress(0, total, "")
    done: list[str] = []
    if processes <= 1 or total <= 1:
        for name in names:
            if processes > 1:  # one family: its planned commands' first runs on two processes first
                _planned_first_runs(name)
            warm(name)
            done.append(name)
            if progress is not None:
                progress(len(done), total, name)
        return done
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(processes, total), mp_context=ctx) as pool:
        futures = {pool.submit(warm, name): name for name in names}
        for fut in cf.as_completed(futures):
            fut.result()  # a warm-up's error is a bug: raise it here
            done.append(futures[fut])
            if progress is not None:
                progress(len(done), total, futures[fut])
    return done
