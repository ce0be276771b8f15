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
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One scoring family."""

    name: str
    commands: tuple[str, ...]
    score: str  # "module:function" of the score function the commands call
    warm: str  # "module:function" compiling the family's kernels (no arguments)

    def load(self, what: str):
        module, attr = getattr(self, what).split(":")
        return getattr(importlib.import_module(module), attr)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("ink", ("auc", "demo", "target", "placement", "check"), "segscore.ink.auc:score_files",
           "segscore.families:_warm_ink"),
    Family("columns", ("columns",), "segscore.columns.score:score_columns", "segscore.families:_warm_columns"),
    Family("objects", ("objects", "holdout"), "segscore.objects.metrics:score_segmentation",
           "segscore.families:_warm_objects"),
    Family("fibers", ("fibers", "fibers-aggregate", "fibers-target"), "segscore.fibers.card:score_fibers",
           "segscore.families:_warm_fibers"),
    Family("curvilinear", ("curve", "perturb", "audit", "profile"), "segscore.curvilinear.scoring:score",
           "segscore.families:_warm_curvilinear"),
    Family("topology", ("surfaces",), "segscore.topology.score:surfaces", "segscore.families:_warm_topology"),
)}


@dataclass(frozen=True)
class Command:
    """One scoring command as a batch job runs it (``segscore.batch``): its argument definitions,
    its compute part (parsed args -> the dict ``--json`` prints; prints nothing), result -> one
    flat row, the arguments naming files or folders it reads (``inputs``: argparse dests; in a job,
    relative ones resolve against the manifest's folder and each is fingerprinted) and the options
    naming what it writes (``outputs``: in a job, under ``DIR/outputs/ID/``; ``--slug`` puts the
    ledger there), and its leaderboard cells (``headline``: what ``segscore report`` shows of a
    result, each number beside its floors or control)."""

    name: str
    family: str
    arguments: str  # "module:function" adding the command's arguments to an argparse parser
    compute: str  # "module:function" (args, *, progress=None, argv=None) -> result dict
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ("--json-out",)
    row: str = "segscore.io.results:flatten"  # "module:function" result -> flat row
    aliases: tuple[str, ...] = ()
    #: "module:function" result -> the leaderboard's cells (``segscore.batch.report.Cell``: name,
    #: value, role headline/floor/control/oracle/interval/derived/setting, the headline it sits
    #: beside); the default shows the result's top-level numbers
    headline: str = "segscore.batch.report:scalars_headline"

    def load(self, what: str):
        module, attr = getattr(self, what).split(":")
        return getattr(importlib.import_module(module), attr)


def _command(name, family_name, inputs=(), outputs=("--json-out",), aliases=(), headline=None) -> Command:
    module = "segscore.commands." + name.replace("-", "_")
    return Command(name, family_name, f"{module}:add_arguments", f"{module}:compute", tuple(inputs), tuple(outputs),
                   aliases=tuple(aliases),
                   headline=f"segscore.batch.report:{headline}" if headline else Command.headline)


#: every command a batch job can be, by name (``audit`` and ``profile`` are not yet: their compute
#: parts are not split from their CLI modules)
COMMANDS: dict[str, Command] = {c.name: c for c in (
    _command("auc", "ink", ("prediction", "labels", "mask", "control", "compare"), ("--json-out", "--csv", "--slug",
                                                                                          "--plot"),
             headline="auc_headline"),
    _command("demo", "ink", (), ("--json-out", "--keep"), headline="auc_headline"),
    _command("target", "ink", ("prediction", "target"), ("--json-out", "--plot"), aliases=("score",),
             headline="target_headline"),
    _command("placement", "ink", ("prediction", "target"), ("--json-out", "--evidence"),
             headline="placement_headline"),
    _command("check", "ink", ("regions_json",), headline="check_headline"),
    _command("columns", "columns", ("prediction", "target"), aliases=("score-columns",),
             headline="columns_headline"),
    _command("objects", "objects", ("truth", "prediction"), ("--json-out", "--per-object", "--plot"),
             headline="objects_headline"),
    _command("holdout", "objects", ("manifest", "predictions", "baseline"), ("--json-out", "--csv"),
             headline="holdout_headline"),
    _command("fibers", "fibers", ("paths",), ("--json-out", "--plot"), aliases=("score-fibers",),
             headline="fibers_headline"),
    _command("fibers-aggregate", "fibers", ("cards",), headline="fibers_aggregate_headline"),
    _command("fibers-target", "fibers", ("nml", "mask"), ("--json-out", "--out")),
    _command("curve", "curvilinear", ("prediction", "gt"), ("--json-out", "--csv"), headline="curve_headline"),
    _command("perturb", "curvilinear", ("mask",), ("-o", "--info-json")),
    _command("surfaces", "topology", ("prediction", "truth", "ignore_mask", "gt_dir", "pred_dir", "ignore_mask_dir"),
             ("--json-out", "--csv", "--out")),
)}


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
    """Compile or load the kernels of ``families`` (default: all) in this process; returns
    the names warmed."""
    names = list(FAMILIES) if families is None else [families] if isinstance(families, str) else list(families)
    for name in names:
        family(name).load("warm")()
    return names


# ------------------------------------------------------------------ each family's warm-up

def _warm_ink() -> None:
    import numpy as np

    from segscore.ink import auc

    rng = np.random.default_rng(0)
    ink = rng.random((8, 8)) < 0.5
    mask = np.ones((8, 8), bool)
    for dtype in (np.uint8, np.uint16, np.float32, np.float64):
        pred = (rng.random((8, 8)) * 200 + 1).astype(dtype)
        auc.score_array(pred, ink, mask, executor="synchronous")
    auc.block_bootstrap(pred, ink, mask, draws=20, block_px=4, other=pred, executor="synchronous")


def _warm_columns() -> None:
    import numpy as np

    from segscore.columns.score import ColumnTarget, score_columns_array

    col = {"col": 1, "gx0": 1, "gx1": 6, "text_band": [1, 11], "transcription": "text"}
    tgt = ColumnTarget("<warm-up>", {"line_pitch_range": [2, 3]}, [col, dict(col, col=2, gx0=9, gx1=14)],
                       np.ones((12, 16), np.uint8), (12, 16), "warm-up")
    for dtype in (np.uint8, np.float32):
        score_columns_array((np.random.default_rng(0).random((12, 16)) * 0.9).astype(dtype), tgt, floors=False)


def _warm_objects() -> None:
    import numpy as np

    from segscore.objects.metrics import score_segmentation

    rng = np.random.default_rng(0)
    for shape in ((8, 8), (3, 8, 8)):
        for dtype in (np.uint8, np.uint16, np.int32, np.uint32, np.int64):
            t = rng.integers(0, 4, shape).astype(dtype)
            score_segmentation(t, t)
        score_segmentation(t, t, surface=True, per_object=True)  # the surface kernels (--surface)


def _warm_fibers() -> None:
    import numpy as np

    from segscore.fibers import floors

    mask = np.zeros((4, 6, 6), bool)
    mask[1:3, 1:5, 1:5] = True
    for fn in (floors.connected_components, floors.voxel_instances, floors.single_instance):
        fn(mask)


def _warm_curvilinear() -> None:
    import numpy as np

    from segscore.curvilinear.scoring import score

    m = np.zeros((24, 24), bool)
    m[12, 2:22] = True
    m[2:22, 12] = True
    score(m, m, all_metrics=True)  # the audit's metrics too (apls, junction_f1, hd95)


def _warm_topology() -> None:
    import numpy as np

    from segscore.topology.score import surfaces

    g = np.zeros((6, 6, 6), np.uint8)
    g[1:5, 1:5, 2] = 1
    p = g.copy()
    p[2, 2, 2] = 0
    surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))
