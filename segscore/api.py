"""One typed function per command: ``segscore.api.objects(truth, pred, iou=0.5)`` scores what
``segscore objects TRUTH PRED --iou 0.5 --json`` prints.

Every scoring function takes the truth first and the prediction second (as scikit-learn's
metrics do), by position or as ``truth=`` / ``pred=``, whatever the command line's order is
(``segscore surfaces PRED TRUTH`` follows the competition's): a target folder, a label volume, a
reference mask are all ``truth``. Each is a path (``str`` or ``os.PathLike``) or, where the
command reads an image, an array (NumPy, zarr or dask). ``holdout``, ``audit``, ``perturb``,
``fibers_aggregate`` and ``fibers_target`` name their inputs for what they are (a manifest,
reference masks, cards). Every other option is keyword-only, named as on the command line
(``--tile-rows`` -> ``tile_rows``, ``--no-floors`` -> ``no_floors``) with the command line's
default: ``inspect.signature(api.objects)`` lists them, and each docstring describes them.

How: each command module ``segscore.commands.X`` declares its options once (``OPTIONS``,
:mod:`segscore.commands._declare`); the command line builds its parser from them, and these
functions take their signature from them and check each value with the option's own type, in
Python (a bad one is the command line's one-line :class:`segscore.errors.ScoreError`, an unknown
keyword a ``TypeError`` naming the nearest valid one, a required option left out a
:class:`segscore.errors.MissingOptionError` naming it: required options have no default in the
signature). No argument parser is built or run here.
The command's compute part then scores (writing the files ``json_out=``, ``csv=``, ``plot=`` ...
name, as the CLI does) and returns a :class:`segscore.io.results.Result` (``to_frame()``,
``plot()`` drawing the figure from what the scoring computed, ``_repr_html_``).

The functions live here, not at ``segscore.objects`` and so on: several command names are also
subpackages (``objects``, ``fibers``, ``columns``). ``segscore.<name>`` re-exports the names that
are free (``auc``, ``target``, ``curve``, ...; see ``segscore.__init__``). The older per-family
functions (``segscore.ink.auc.score_files`` ...) still work and warn ``FutureWarning`` naming the
call here (docs/migration.md).
"""

from __future__ import annotations

import importlib

__all__ = ["auc", "target", "columns", "placement", "check", "objects", "holdout", "curve", "perturb", "fibers",
           "fibers_aggregate", "fibers_target", "audit", "profile", "surfaces", "demo", "COMMANDS", "run_command"]


def _module(command: str):
    return importlib.import_module("segscore.commands." + command.replace("-", "_"))


def run_command(command: str, values: dict, *, progress=None, recorded=None, figure: bool = True):
    """Score ``command`` with ``values`` (option name -> a Python value; absent ones take their
    defaults), checked by the command's declarations: what every function of this module calls,
    and what a batch job runs. ``recorded``: what the ledger of ``slug=`` records, a list of words (default: the call,
    described; a batch job gives its words). Returns the :class:`~segscore.io.results.Result`."""
    from segscore.commands._declare import bind, unknown_keywords
    from segscore.commands._options import check_paths
    from segscore.io.results import Result, with_figure

    module = _module(command)
    unknown_keywords(command, module.OPTIONS, values)
    bound = bind(command, module.OPTIONS, values)
    check_paths(bound)  # no pipe or device read, no input overwritten
    if recorded is None and bound.get("slug"):
        recorded = [_described(command, values)]
    result = module.compute(progress=progress, recorded=recorded, figure=figure, **bound)
    if not isinstance(result, Result):
        result = Result(result)
    if getattr(result, "_draw", None) is None:
        result = with_figure(result, _no_figure(command, getattr(module, "NO_FIGURE", "")))
    return result


def _described(command: str, values: dict) -> str:
    """The call as the ledger records it: ``segscore.api.auc(truth='l.zarr', pred=<ndarray>, ...)``."""
    import os

    def shown(v):
        if isinstance(v, os.PathLike):
            return repr(os.fspath(v))
        if v is None or isinstance(v, (str, bool, int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(shown(x) for x in v) + "]"
        try:
            import numbers

            if isinstance(v, numbers.Number):
                return repr(v.item() if hasattr(v, "item") else v)
        except Exception:  # noqa: BLE001 - a description only
            pass
        return f"<{type(v).__name__}>"

    given = ", ".join(f"{k}={shown(v)}" for k, v in values.items() if v is not None)
    return f"segscore.api.{command.replace('-', '_')}({given})"


def _no_figure(command, why):
    def draw():
        from segscore.errors import ScoreError

        raise ScoreError(f"segscore {command} draws no figure{why}")

    return draw


_FIGURES = {
    "auc": "the bootstrap distribution of the AUC (needs bootstrap=N or compare=)",
    "target": "the ROC and PR curves with the floors",
    "objects": "AP (TP/(TP+FP+FN)) against the IoU threshold",
    "fibers": "ERL against the floors and the oracle",
    "audit": "the metric-versus-cost bars",
    "surfaces": "the leaderboard score, its terms and the Betti counts (folder mode: histograms of the per-case "
                "scores)",
}


def _function(command: str, summary: str, usage: str):
    """The API function of ``command``: its signature and parameters from the declarations."""
    import inspect

    from segscore.commands._declare import doc, signature

    module = _module(command)
    inputs = tuple(module.INPUTS)
    sig = signature(module.OPTIONS, inputs)
    sig = sig.replace(parameters=[*sig.parameters.values(),
                                  inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=None)])
    name = command.replace("-", "_")

    def call(*args, **kwargs):
        from segscore.commands._declare import bind_call

        values = bind_call(command, module.OPTIONS, sig, args, kwargs)
        progress = values.pop("progress", None)
        return run_command(command, values, progress=progress)

    call.__name__ = call.__qualname__ = name
    call.__module__ = __name__
    call.__signature__ = sig
    figure = _FIGURES.get(command)
    call.__doc__ = (f"{summary}\n\nThe command line: ``{usage} --json``.\n\n"
                    + (f"``plot()`` draws {figure}.\n\n" if figure else "No figure.\n\n")
                    + doc(module.OPTIONS, inputs) + "\nprogress : default None\n    a callable "
                    "``(done, total)`` called as tiles are reduced (profile: one line before its calibration)\n")
    return call


auc = _function("auc", "Pixel AUC of an ink map inside a supervision mask (kit-auc), with control, bootstrap "
                       "and compare. ``truth``: the segment's ink labels; ``pred``: the ink map; ``mask``: the "
                       "supervision mask.", "segscore auc PRED --labels TRUTH --mask MASK")
target = _function("target", "A prediction's card and floors on a registered ink target (ScrollGT). ``truth``: the "
                             "target folder; ``pred``: the probability map.", "segscore target PRED TRUTH")
columns = _function("columns", "A grid-resolution map on a column target (ScrollGT). ``truth``: the column target "
                               "folder; ``pred``: the map.", "segscore columns PRED TRUTH")
placement = _function("placement", "Placement probe: where prediction and label agree best (NCC over shifts). "
                                   "``truth``: the ink target folder; ``pred``: the probability map.",
                      "segscore placement PRED TRUTH")
check = _function("check", "The prize pre-check (no truth, no prediction): ``result['compliant']`` is False on a "
                           "violation (where the CLI exits 3).", "segscore check --window-px N --scan-um U")
objects = _function("objects", "The object scorecard of a predicted label image (matching, AP sweep, Dice, boundary "
                               "F1, splits and merges). ``truth``, ``pred``: label images (0 = background).",
                    "segscore objects TRUTH PRED")
holdout = _function("holdout", "Score a folder of predictions on a versioned held-out set; with ``verify=True`` "
                               "and no ``predictions``, the digests' check (``problems`` not empty where the CLI "
                               "exits 3). ``manifest``: the held-out set's JSON manifest; ``predictions``: the "
                               "folder of predicted label images.", "segscore holdout MANIFEST --predictions DIR")
curve = _function("curve", "Overlap and topology metrics beside the functional costs of a curvilinear mask "
                           "(curvicost's score). ``truth``: the reference mask; ``pred``: the predicted mask.",
                  "segscore curve PRED --gt TRUTH")
perturb = _function("perturb", "One typed error operator applied to a reference mask, written to ``output``; "
                               "returns what the operator did. ``mask``: the mask damaged.",
                    "segscore perturb MASK --operator OP --severity S -o OUT")
fibers = _function("fibers", "A tracer's instance labels against a fiber target (ScrollGT score-fibers). "
                             "``truth``: the fiber target folder; ``pred``: the instance labels, or None with "
                             "``floor=``.", "segscore fibers [PRED] TRUTH")
fibers_aggregate = _function("fibers-aggregate", "Mean ERL over fiber scorecards of one size class. ``cards``: "
                                                 "the paths of ``fibers(..., json_out=...)`` cards.",
                             "segscore fibers-aggregate CARD.json ...")
fibers_target = _function("fibers-target", "Build a fiber target folder ``out`` from WEBKNOSSOS .nml traces and a "
                                           "reference fiber mask; returns its summary.",
                          "segscore fibers-target NML_DIR MASK --out TARGET_DIR")
audit = _function("audit", "Which metric tracks which functional cost, per error type, on reference masks "
                           "(curvicost's audit). ``masks``: the reference masks (paths or arrays); ``profile=`` "
                           "predictions of one method, profiled against ``gt=``, add 'which metric should I "
                           "report?'.", "segscore audit MASK... [--profile PRED... --gt GT]")
profile = _function("profile", "Which error types a method makes (curvicost's profile). ``truth``: the reference "
                               "mask; ``pred``: one prediction or a list of one method's.",
                    "segscore profile PRED... --gt TRUTH")
surfaces = _function("surfaces", "The Vesuvius surface-detection score (TopoScore, surface Dice, VOI, leaderboard) "
                                 "of a prediction volume against its labels. ``truth``: the label volume; ``pred``: "
                                 "the prediction. Folder mode: no ``truth``/``pred``, ``gt_dir=``, ``pred_dir=`` and "
                                 "``out=``.", "segscore surfaces PRED TRUTH")
demo = _function("demo", "Score a built-in synthetic segment, offline, as ``auc`` would (``keep=DIR`` keeps the "
                         "sample).", "segscore demo")

#: every function of this module, by command name
COMMANDS = {"auc": auc, "target": target, "columns": columns, "placement": placement, "check": check,
            "objects": objects, "holdout": holdout, "curve": curve, "perturb": perturb, "fibers": fibers,
            "fibers-aggregate": fibers_aggregate, "fibers-target": fibers_target, "audit": audit,
            "profile": profile, "surfaces": surfaces, "demo": demo}


def _report_function():
    """``segscore.api.report``: the signature and checks of ``segscore report``'s declarations."""
    from segscore.commands import report as module
    from segscore.commands._declare import bind, bind_call, doc, signature

    sig = signature(module.OPTIONS, module.INPUTS)

    def report(*args, **kwargs):
        o = bind("report", module.OPTIONS, bind_call("report", module.OPTIONS, sig, args, kwargs))
        from segscore.batch.report import report as leaderboard
        from segscore.batch.report import statistics, wants_statistics

        if wants_statistics(o):
            return statistics(o)
        from segscore.errors import ScoreError
        from segscore.io.results import Result, write_json

        if not o["results"]:
            raise ScoreError("segscore report: give the RESULTS_DIR of a `segscore batch` run (or table= with "
                             "intervals=True etc.)")
        rep = leaderboard(o["results"], by=o["by"], missing=o["missing"])
        if o.get("csv"):
            rep.to_csv(o["csv"])
        result = Result(rep.to_dict())
        if o.get("json_out"):
            write_json(o["json_out"], result)
        return result

    report.__signature__ = sig
    report.__module__ = __name__
    report.__doc__ = ("A batch's leaderboard, or the benchmark statistics of a suite (is model A better than B?): "
                      "bootstrap intervals, paired comparisons with one-sided tests, challengeR's rankings and "
                      "their stability (docs/stats.md).\n\n``results``: the ``--out`` folder of ``segscore "
                      "batch``; or ``table=`` a long CSV/Parquet table with ``case=``, ``by=``, ``metric=``. With "
                      "any of ``table``, ``intervals``, ``compare``, ``rank``, ``stability``: the analysis (a dict: "
                      "``intervals``, ``comparisons``, ``rankings``, ``stability``, ``params`` with the seed, "
                      "``counts``, ``notes``; ``to_frame(part)``); else the leaderboard as a Result.\n\nThe command "
                      "line: ``segscore report [RESULTS_DIR] ... --json``.\n\n" + doc(module.OPTIONS, module.INPUTS))
    return report


report = _report_function()
__all__.append("report")


def prepare_surfaces(truth, *, ignore_label=2, ignore_mask=None, fg_threshold=None, spacing=None,
                     voi_connectivity=26, topo_tiles=(2, 2, 2)):
    """A truth made ready for many :func:`surfaces` calls (a training loop scoring each checkpoint
    against one label volume), as curvicost's ``prepare_reference``: its ignore region, foreground,
    surface corner codes and components are computed once. Pass it back as ``truth=``:
    ``surfaces(prepared, pred)``; its options then hold (a different one is refused).
    ``truth``: the label volume (an array or a path); the options are :func:`surfaces`' of the same
    names."""
    from segscore.topology.score import prepare_surfaces as prepare

    return prepare(truth, ignore_label=ignore_label, ignore_mask=ignore_mask, fg_threshold=fg_threshold,
                   spacing=spacing, voi_connectivity=voi_connectivity, topo_tiles=tuple(topo_tiles))


__all__.append("prepare_surfaces")


def warm(commands=None, *, processes: int = 2, progress=None) -> dict:
    """Fill numba's on-disk cache for ``commands`` (names or aliases; default: every command), as
    ``segscore warm [COMMAND ...]`` does: the warm-ups of their families, each in a fresh process,
    up to ``processes`` at once (1: one after another in this process). ``progress(done, total,
    family)`` after each family. Returns ``{"commands", "families", "processes", "cache",
    "seconds"}``; an unknown name is a :class:`~segscore.errors.ScoreError` listing the commands.
    Run it once in a container image or a CI cache step: later first runs load, not compile."""
    import time

    from segscore.commands._declare import Option, convert
    from segscore.commands.warm import OPTIONS
    from segscore.families import REGISTRY, warm_commands, warm_families_of
    from segscore.kernels._jit import cache_dir

    processes = convert("warm", next(o for o in OPTIONS if o.name == "processes"), processes)
    names = [commands] if isinstance(commands, str) else list(commands) if commands else None
    warm_families_of(names)  # an unknown name is refused before any process starts
    t0 = time.perf_counter()
    done = warm_commands(names, processes=processes, progress=progress)
    return {"commands": names or list(REGISTRY), "families": done, "processes": processes,
            "cache": cache_dir(), "seconds": round(time.perf_counter() - t0, 3)}


__all__.append("warm")
