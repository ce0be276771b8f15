"""One functional API mirroring the commands: ``segscore.api.objects(truth, pred, iou=0.5)`` is
``segscore objects TRUTH PRED --iou 0.5 --json``.

Every function takes the truth first and the prediction second (as scikit-learn does), by
position or as ``truth=`` / ``pred=``; each is a path (a ``str`` or ``os.PathLike``) or, where the
command reads an image, an array (NumPy, zarr or dask). Every other option is keyword-only and
named as on the command line (``--tile-rows`` -> ``tile_rows``, ``--no-floors`` -> ``no_floors``);
a name the command does not have is a ``TypeError`` listing the valid ones, and a value is checked
by the command's own argument type (a bad one is a :class:`segscore.errors.ScoreError`, the CLI's
exit 2). Each function returns the dict the command prints with ``--json``, as a
:class:`segscore.io.results.Result` (``to_frame()``, ``plot()``, ``_repr_html_``).

How: the command's argument parser (``segscore.commands.X.add_arguments``) parses the options,
written as the command line they stand for, the truth and the prediction go in their argument
slots, and the command's compute part scores (it writes the files ``json_out=``, ``csv=``,
``plot=`` ... name, as the CLI does). So the options, the checks and the result are the CLI's.

The functions live here, not at ``segscore.objects`` and so on: several command names are also
subpackages (``objects``, ``fibers``, ``columns``), which Python binds to the package's attribute
as soon as one of their modules is imported. ``segscore.<name>`` re-exports only the names that
are free (``auc``, ``target``, ``curve``, ...; see ``segscore.__init__``).

The older entry points keep their signatures and stay as compatibility entry points: kit's
``segscore.ink.auc.score_files(prediction, labels, mask)`` and ``score_array``, curvicost's
``segscore.curvilinear.scoring.score(reference, prediction)``, the ScrollGT shaped
``segscore.ink.targets.score_target(prediction, target)``, spacr's and scikit-image's
``segscore.objects.metrics.score_segmentation(truth, prediction)``.
"""

from __future__ import annotations

import argparse
import importlib
import os

__all__ = ["auc", "target", "columns", "placement", "check", "objects", "holdout", "curve", "perturb", "fibers",
           "fibers_aggregate", "audit", "profile", "surfaces", "COMMANDS"]

#: options the API does not take: ``--json`` prints (the API returns), ``--quiet`` silences text
_NOT_OPTIONS = {"json", "quiet", "help"}


class _Parser(argparse.ArgumentParser):
    """argparse that raises a ScoreError (the CLI's exit 2) instead of exiting."""

    def error(self, message):
        from segscore.errors import ScoreError

        raise ScoreError(f"{self.prog}: {message}")

    def exit(self, status=0, message=None):  # --help or --version: not options of the API
        from segscore.errors import ScoreError

        raise ScoreError(f"{self.prog}: {message or 'exited'}")


def _module(command: str):
    """The module defining ``add_arguments`` and ``compute`` for ``command``: ``segscore.commands.X``,
    or (audit, profile) the CLI module, where their compute parts sit."""
    import importlib.util

    name = command.replace("-", "_")
    if importlib.util.find_spec(f"segscore.commands.{name}") is not None:
        return importlib.import_module(f"segscore.commands.{name}")
    return importlib.import_module(f"segscore.cli.{name}")


class _RecordingParser(_Parser):
    """A parser that keeps each argument it is given (and its groups are given) with the keywords
    it was added with, in order: argparse has no public list of a parser's actions."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.recorded = []  # (action, keywords)

    def add_argument(self, *a, **k):
        action = super().add_argument(*a, **k)
        self.recorded.append((action, k))
        return action

    def add_mutually_exclusive_group(self, **k):
        group = super().add_mutually_exclusive_group(**k)
        add, outer = group.add_argument, self

        def add_argument(*a, **kw):
            action = add(*a, **kw)
            outer.recorded.append((action, kw))
            return action

        group.add_argument = add_argument
        return group


def _build(command: str):
    p = _RecordingParser(prog=f"segscore {command}", add_help=False)
    _module(command).add_arguments(p)
    return p


def _option_names(parser) -> dict:
    """keyword -> (flag, action, keywords) of every option (its long spelling, ``-`` as ``_``)."""
    names = {}
    for action, kw in parser.recorded:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        longs = [s for s in action.option_strings if s.startswith("--")] or action.option_strings
        for s in longs:
            key = s.lstrip("-").replace("-", "_")
            if key not in _NOT_OPTIONS:
                names.setdefault(key, (s, action, kw))
    return names


def _is_path(v) -> bool:
    return isinstance(v, (str, os.PathLike))


def _is_scalar(v) -> bool:
    import numbers

    return v is None or isinstance(v, (str, os.PathLike, numbers.Number))


def _tokens(value) -> list:
    """The command-line words of one option value."""
    if isinstance(value, (list, tuple)):
        return [os.fspath(v) if _is_path(v) else str(v) for v in value]
    return [os.fspath(value) if _is_path(value) else str(value)]


def _run(command: str, slots: dict, options: dict):
    """Score ``command`` with its positional/required slots (dest -> value: a path, an array or a
    list of them) and keyword ``options``; returns the Result."""
    from segscore.commands._options import check_paths
    from segscore.io.results import Result

    parser = _build(command)
    names = _option_names(parser)
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise TypeError(f"segscore.api.{command.replace('-', '_')}() got unexpected option(s) "
                        f"{', '.join(unknown)}; valid options: {', '.join(sorted(names))}")
    argv: list[str] = []  # parsed: the truth and the prediction as placeholders, put back after parsing
    shown: list[str] = []  # the same command line with the paths (what --slug's ledger records)
    given: dict = {}  # dest -> the value to put back after parsing (an array, a path as given)
    positional = {a.dest for a, _ in parser.recorded if not a.option_strings}
    order = [a.dest for a, _ in parser.recorded]  # the slots in the command line's order
    for dest, value in sorted(slots.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
        if value is None:
            continue
        many = isinstance(value, (list, tuple))
        holders = [f"<{dest}>"] * (len(value) if many else 1)
        if dest not in positional:  # a required option holding the truth or the prediction (--labels, --gt)
            flag = next(flag for flag, a, _ in names.values() if a.dest == dest)
            argv.append(flag)
            shown.append(flag)
        argv += holders
        shown += [_tokens(v)[0] if _is_path(v) else h for v, h in zip(value if many else [value], holders)]
        given[dest] = [os.fspath(v) if _is_path(v) else v for v in value] if many else \
            (os.fspath(value) if _is_path(value) else value)
    start = len(argv)
    for key, value in options.items():
        flag, action, kw = names[key]
        if value is None:
            continue
        if action.nargs == 0:  # a flag (--no-floors)
            if value is True:
                argv.append(flag)
            elif value is not False:
                raise TypeError(f"{key}= is a flag ({flag}): give True or False, not {value!r}")
            continue
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        single = action.nargs in (None, "?")
        if not all(_is_scalar(v) for v in values):  # an array for a file option (auc's mask=, control=)
            if not single or isinstance(value, (list, tuple)):
                raise TypeError(f"{key}= takes numbers or paths, not {type(value).__name__}")
            argv += [flag, f"<{key}>"]
            given[action.dest] = value
        elif kw.get("action") == "append":  # repeatable (audit's --cost): one word per value
            argv += [f"{flag}={t}" for t in _tokens(values)]
        elif single:  # a list for one word is that word comma-separated (audit's --severities 0.1,0.2)
            argv.append(f"{flag}={','.join(_tokens(values))}")
        else:
            argv += [flag, *_tokens(values)]
    shown += argv[start:]
    args = parser.parse_args(argv)
    for dest, value in given.items():
        setattr(args, dest, value)
    args.command = command
    args.json = False
    check_paths(args)
    result = _module(command).compute(args, argv=[command, *shown])
    if not isinstance(result, Result):
        result = Result(result)
    return result, args


# ------------------------------------------------------------------------------------------
# figures: the command's figure of a result (Result.plot())
# ------------------------------------------------------------------------------------------

def _with_figure(result, draw):
    from segscore.io.results import with_figure

    return with_figure(result, draw)


def _no_figure(command, why):
    def draw():
        from segscore.errors import ScoreError

        raise ScoreError(f"segscore {command} draws no figure{why}")

    return draw


# ------------------------------------------------------------------------------------------
# the commands
# ------------------------------------------------------------------------------------------

def auc(truth=None, pred=None, **options):
    """``segscore auc PRED --labels TRUTH --mask MASK [options] --json``: pixel AUC of an ink map.

    ``truth``: the segment's ink labels (``inklabels.zarr``, a pyramid group or one 2D array; or a
    2D array on the map's grid); ``mask=`` (required): the supervision mask, same layout;
    ``pred``: the ink map (a 2D file or array). Options as ``segscore auc --help``: ``control``,
    ``compare`` (paths or arrays), ``level``, ``crop``, ``surface_shape``, ``keep_zero``, ``inner``,
    ``bootstrap``, ``block_px``, ``seed``, ``tile_rows``, ``threads``, ``json_out``, ``csv``,
    ``plot``, ``slug``, ``name``, ``root``. ``plot()`` draws the bootstrap distribution (needs
    ``bootstrap=N`` or ``compare=``)."""
    result, args = _run("auc", {"prediction": pred, "labels": truth}, options)

    def draw():
        from segscore import figures
        from segscore.ink import auc as ink_auc

        if not args.bootstrap and not args.compare:
            from segscore.errors import ScoreError

            raise ScoreError("auc's figure is the bootstrap distribution of the AUC; score with bootstrap=N "
                             "(300 is plenty) or compare=MAP")
        _, draws = ink_auc.score_files(
            args.prediction, args.labels, args.mask, control=args.control, level=args.level, crop=args.crop,
            surface_shape=args.surface_shape, keep_zero=args.keep_zero, inner=args.inner, bootstrap=args.bootstrap,
            block_px=args.block_px, compare=args.compare, seed=args.seed, tile_rows=args.tile_rows,
            threads=args.threads, return_draws=True)
        return figures.auc_draws(result, draws)

    return _with_figure(result, draw)


def target(truth=None, pred=None, **options):
    """``segscore target PRED TRUTH [options] --json``: a prediction's card and floors on a
    registered ink target. ``truth``: the target folder (gt_ink.png, mask.png, meta.json);
    ``pred``: the probability map (a file or a 2D array). Options: ``origin``,
    ``allow_non_scoring``, ``allow_failing_placement``, ``seed``, ``no_floors``, ``tile_rows``,
    ``threads``, ``json_out``, ``plot``. ``plot()`` draws the ROC and PR curves with the floors."""
    result, args = _run("target", {"prediction": pred, "target": truth}, options)

    def draw():
        from segscore import figures
        from segscore.ink import targets

        _, curves = targets.score_target(args.prediction, args.target, origin=args.origin,
                                         allow_non_scoring=args.allow_non_scoring,
                                         allow_failing_placement=args.allow_failing_placement,
                                         floors=not args.no_floors, seed=args.seed, tile_rows=args.tile_rows,
                                         threads=args.threads, return_curves=True)
        return figures.target_curves(result, curves)

    return _with_figure(result, draw)


def columns(truth=None, pred=None, **options):
    """``segscore columns PRED TRUTH [options] --json``: a grid-resolution map on a column target.
    ``truth``: the column target folder; ``pred``: the map (file or 2D array). Options: ``origin``,
    ``seed``, ``no_floors``, ``tile_rows``, ``threads``, ``json_out``. No figure."""
    result, _ = _run("columns", {"prediction": pred, "target": truth}, options)
    return _with_figure(result, _no_figure("columns", ""))


def placement(truth=None, pred=None, **options):
    """``segscore placement PRED TRUTH [options] --json``: where prediction and label agree best.
    ``truth``: the ink target folder; ``pred``: the probability map (file or 2D array). Options:
    ``radius``, ``gate``, ``tile_radius``, ``origin``, ``evidence`` (a PNG path), ``threshold``,
    ``threads``, ``json_out``. No figure (``evidence=`` writes the evidence picture)."""
    result, _ = _run("placement", {"prediction": pred, "target": truth}, options)
    return _with_figure(result, _no_figure("placement", "; evidence=OUT.png writes the evidence picture"))


def check(**options):
    """``segscore check --window-px N --scan-um U [--regions-json FILE] --json``: the prize
    pre-check (no truth, no prediction). ``result["compliant"]`` is False on a violation (where
    the CLI exits 3). Options: ``window_px``, ``scan_um`` (required), ``regions_json``,
    ``json_out``."""
    result, _ = _run("check", {}, options)
    return _with_figure(result, _no_figure("check", ""))


def objects(truth=None, pred=None, **options):
    """``segscore objects TRUTH PRED [options] --json``: the object scorecard of a predicted label
    image. ``truth``, ``pred``: label images (files or 2D/3D integer arrays, 0 = background).
    Options: ``iou``, ``tolerances``, ``minimum_overlap``, ``count_background``, ``surface``,
    ``spacing``, ``nsd_tolerance``, ``per_object`` (a CSV path), ``components`` (6|18|26, 4|8 in
    2D: binary or semantic masks to instances, per class value), ``ignore_label``, ``ignore_mask``
    (an array or a path), ``tile_rows``, ``threads``, ``json_out``, ``plot``. ``plot()`` draws AP
    against the IoU threshold."""
    result, _ = _run("objects", {"truth": truth, "prediction": pred}, options)

    def draw():
        from segscore import figures

        return figures.objects_ap(result)

    return _with_figure(result, draw)


def holdout(truth=None, pred=None, **options):
    """``segscore holdout TRUTH --predictions PRED [options] --json``: score a folder of predictions
    on a versioned held-out set. ``truth``: the held-out set's JSON manifest; ``pred``: the folder
    of predicted label images (paths only: a held-out set is files). With ``verify=True`` and no
    ``pred``: the digests' check (``problems`` not empty where the CLI exits 3). Options:
    ``baseline``, ``verify``, ``iou``, ``tolerances``, ``count_background``, ``surface``,
    ``spacing``, ``nsd_tolerance``, ``missing`` (``"null"`` or ``"worst"``: adds the per-object
    means under both policies, ``segscore.objects.holdout.worst_means``), ``json_out``, ``csv``.
    No figure. A batch's leaderboard means take ``missing=`` in ``segscore.batch.report``."""
    slots = {"manifest": truth}
    if pred is not None:
        if "predictions" in options:
            raise TypeError("holdout(): give the predictions folder as pred=, not predictions=")
        options = {**options, "predictions": pred}
    result, _ = _run("holdout", slots, options)
    return _with_figure(result, _no_figure("holdout", ""))


def curve(truth=None, pred=None, **options):
    """``segscore curve PRED --gt TRUTH [options] --json``: overlap/topology metrics beside the
    functional costs of a curvilinear mask. ``truth``, ``pred``: binary masks (files or 2D/3D
    arrays). Options: ``prune_px``, ``spacing``, ``prune_length``, ``all_metrics``, ``ignore_label``,
    ``ignore_mask`` (an array or a path), ``json_out``, ``csv``. No figure."""
    result, _ = _run("curve", {"prediction": pred, "gt": truth}, options)
    return _with_figure(result, _no_figure("curve", ""))


def perturb(truth=None, **options):
    """``segscore perturb TRUTH --operator OP --severity S -o OUT [options] --json``: one typed
    error operator applied to a reference mask (a file or a 2D/3D array), written to ``output=``.
    Returns what the operator did. Options: ``operator``, ``severity``, ``output`` (required),
    ``seed``, ``prune_px``, ``info_json``. No figure."""
    result, _ = _run("perturb", {"mask": truth}, options)
    return _with_figure(result, _no_figure("perturb", ""))


def fibers(truth=None, pred=None, **options):
    """``segscore fibers PRED TRUTH [options] --json``: a tracer's instance labels against a fiber
    target. ``truth``: the fiber target folder; ``pred``: the instance labels (a file or a 3D
    integer array), or None with ``floor=NAME``. Options: ``floor``, ``recompute_floors``,
    ``json_out``, ``plot``. ``plot()`` draws ERL against the floors and the oracle."""
    paths = [truth] if pred is None else [pred, truth]
    result, _ = _run("fibers", {"paths": paths}, options)

    def draw():
        from segscore import figures

        return figures.fiber_erl(result)

    return _with_figure(result, draw)


def fibers_aggregate(*cards, **options):
    """``segscore fibers-aggregate CARD.json ... --json``: mean ERL over fiber scorecards (paths of
    ``fibers(..., json_out=...)`` cards; no truth or prediction). Options: ``json_out``."""
    if len(cards) == 1 and isinstance(cards[0], (list, tuple)):
        cards = tuple(cards[0])
    result, _ = _run("fibers-aggregate", {"cards": list(cards)}, options)
    return _with_figure(result, _no_figure("fibers-aggregate", ""))


def audit(truth=None, pred=None, **options):
    """``segscore audit TRUTH... [--profile PRED... --gt GT] [options] --json``: which metric tracks
    which functional cost, per error type. ``truth``: the reference masks (a list of files or
    arrays; one is taken as a list of one); ``pred`` (optional): predictions of one method for
    'which metric should I report?', profiled against ``gt=``. Options as ``segscore audit
    --help`` (``cases``, ``prune_px``, ``spacing``, ``study_ladder``, ``severities``,
    ``radius_scales``, ``boundary_fracs``, ``seeds``, ``n_boot``, ``cost``, ``min_units``,
    ``min_cases``, ``no_redraw_floor``, ``no_erl``, ``include_cases``, ``threads``,
    ``processes``, ``scheduler``, ``gt``, ``profile_json``, ``json_out``, ``csv``, ``plot``...).
    ``plot()`` draws the metric-versus-cost bars."""
    slots = {"masks": _listed(truth)} if truth is not None else {}
    if pred is not None:
        options = {**options, "profile": _listed(pred)}
    result, _ = _run("audit", slots, options)

    def draw():
        from segscore import figures

        return figures.audit_bars(result)

    return _with_figure(result, draw)


def profile(truth=None, pred=None, **options):
    """``segscore profile PRED... --gt TRUTH [options] --json``: which error types a method makes.
    ``truth``: the reference mask; ``pred``: one prediction or a list (files or arrays) of one
    method. Options: ``prune_px``, ``seed``, ``seeds``, ``threads``, ``json_out``. No figure."""
    result, _ = _run("profile", {"predictions": _listed(pred), "gt": truth}, options)
    return _with_figure(result, _no_figure("profile", ""))


def surfaces(truth=None, pred=None, **options):
    """``segscore surfaces PRED TRUTH [options] --json``: the Vesuvius surface-detection score
    (TopoScore, surface Dice, VOI, leaderboard) of a prediction volume against its labels (files or
    2D/3D arrays). Folder mode: no ``truth``/``pred``, ``gt_dir=``, ``pred_dir=`` (and ``out=``).
    Options as ``segscore surfaces --help`` (``ignore_label``, ``no_ignore_label``, ``ignore_mask``,
    ``fg_threshold``, ``tolerance``, ``spacing``, ``voi_connectivity``, ``voi_alpha``,
    ``voi_transform``, ``weights``, ``topo_weights``, ``topo_tiles``, ``threads``, ``json_out``,
    ``csv``). No figure (folder mode's ``plot=True`` writes histograms beside ``out=``)."""
    result, _ = _run("surfaces", {"truth": truth, "prediction": pred}, options)
    return _with_figure(result, _no_figure("surfaces", ""))


def _listed(v):
    if v is None:
        return None
    return list(v) if isinstance(v, (list, tuple)) else [v]


#: every function of this module, by command name
COMMANDS = {"auc": auc, "target": target, "columns": columns, "placement": placement, "check": check,
            "objects": objects, "holdout": holdout, "curve": curve, "perturb": perturb, "fibers": fibers,
            "fibers-aggregate": fibers_aggregate, "audit": audit, "profile": profile, "surfaces": surfaces}
