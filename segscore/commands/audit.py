"""``audit``: which metric tracks which functional cost, per error type, on reference masks
(curvicost 0.3.1's ``audit``), or the findings of an earlier audit recomputed from its cases
(``--cases FILE``)."""

from __future__ import annotations


DESCRIPTION = """\
Damage each reference mask with every operator across a severity ladder, score every case against
its reference, and correlate each metric with each quantity per operator (curvicost 0.3.1's audit).

The default ladder is curvicost's shortened one:
  default  break/bridge/truncate at 2, 5, 10, 20, 50 %; radius x0.7, 0.85, 1.15, 1.3; boundary
           0.5, 2, 5, 10, 20 %; 1 seed; 1,000 bootstrap resamples.
  study    1, 2, 5, 10, 20, 35, 50 %; radius x0.5, 0.7, 0.85, 1.15, 1.3; boundary 0.2, 0.5, 1, 2,
           5, 10, 20 %; 3 seeds; 2,000 resamples (--study-ladder).
--severities sets break/bridge/truncate only; --radius-scales and --boundary-fracs the other two.

Each (quantity, operator, metric) cell gets one of the paper's labels: undefined (the quantity or
the metric is constant), inconclusive (the operator acted in < 10 masks or < 12 cases), blind (the
95% cluster-bootstrap interval includes 0), anti-correlated (rho < 0, interval excludes 0), or
tracks. Units are reference masks: a verdict needs 10 or more.

Each damaged copy is seeded as curvicost seeds it (seeds 0 .. N-1), so the same masks given in
the same order, with the same ladder and options, give curvicost's cases and every cell's rho,
interval and label, whatever the files are called. The masks enter the bootstrap in the order
given: reordering them moves the intervals only. Audits run by earlier segscore versions drew
other copies and are not comparable (README, audit section).

Quantities: traceable_frac and conductance_twosided by default; --cost picks built-in ones,
--cost-fn adds a function of the mask of your own (user:<function>).
Redraw floor: each reference is redrawn from its own skeleton and radii (radius scale 1.0) and
scored against the original ('redraw' column; redraw_metric/redraw_cost in the CSV).

segscore audit --cases AUDIT.json recomputes the findings from an earlier audit's cases (segscore's
JSON written with --include-cases, or curvicost audit --include-cases --json) without scoring."""

def _levels(lo, hi, what):
    """An argparse type: a comma-separated list of distinct finite numbers in (lo, hi]."""
    import argparse
    import math

    def parse(text):
        vals = []
        parts = text.split(",") if isinstance(text, str) else list(text) if isinstance(text, (list, tuple)) else [text]
        for part in parts:
            part = part.strip() if isinstance(part, str) else part
            if isinstance(part, str) and not part:
                continue
            try:
                if isinstance(part, bool):
                    raise ValueError
                v = float(part)
            except (ValueError, TypeError):
                raise argparse.ArgumentTypeError(f"{part!r} is not a number") from None
            if not math.isfinite(v) or not (lo < v <= hi):
                raise argparse.ArgumentTypeError(f"{part} must be more than {lo:g} and at most {hi:g} ({what})")
            if v in vals:
                raise argparse.ArgumentTypeError(f"{part} is given twice")
            vals.append(v)
        if not vals:
            raise argparse.ArgumentTypeError("give at least one value, comma-separated")
        return tuple(vals)

    parse.__name__ = "list"
    parse.takes_lists = True  # a Python caller gives the values as a list, or the text
    return parse


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import cluster_options, length_px, nonnegative_int, number, plot_option, positive_int  # noqa: E402

#: ``segscore audit MASK...``; ``segscore.api.audit(masks)``: reference masks, not a truth/prediction pair
INPUTS = ("masks",)
#: the command's own --help text (its ladders and labels)
HELP_DESCRIPTION = DESCRIPTION
OPTIONS = (
    Option("masks", nargs="*", metavar="MASK", role="masks", arrays=True,
           help="reference binary masks, 2D or 3D (3+ for intervals, 10+ for any verdict)"),
    Option("cases", ("--cases",), metavar="FILE",
           help="recompute the findings from an earlier audit's cases instead of scoring (segscore's "
                "--include-cases JSON or curvicost's audit --include-cases --json)"),
    Option("prune_px", ("--prune-px",), type=length_px, metavar="N",
           help="spur-pruning length in voxels (default 5; ~2 vessel radii)"),
    Option("spacing", ("--spacing",), type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
           help="voxel spacing of every mask, one number per axis in array order (default: each mask file's header, "
                "NIfTI/OME-Zarr/TIFF, else 1 each); lengths, radii and conductance in its unit"),
    Option("study_ladder", ("--study-ladder",), kind="flag",
           help="the study's ladder, 3 seeds and 2,000 resamples (explicit ladder options still override)"),
    Option("severities", ("--severities",), type=_levels(0, 1, "a fraction of the eligible population"),
           metavar="LIST", help="comma-separated fractions for break/bridge/truncate ONLY (default "
                                "0.02,0.05,0.1,0.2,0.5)"),
    Option("radius_scales", ("--radius-scales",), type=_levels(0, 3, "a radius scale factor"), metavar="LIST",
           help="comma-separated scale factors for radius (default 0.7,0.85,1.15,1.3)"),
    Option("boundary_fracs", ("--boundary-fracs",), type=_levels(0, 1, "a fraction of the foreground voxels"),
           metavar="LIST", help="comma-separated fractions of foreground voxels for boundary (default "
                                "0.005,0.02,0.05,0.1,0.2)"),
    Option("seeds", ("--seeds",), type=number(int, lo=1, hi=1000), metavar="N",
           help="random seeds per operator and severity (default 1; study 3)"),
    Option("n_boot", ("--n-boot", "--bootstrap"), type=number(int, lo=1, hi=1_000_000), metavar="N",
           help="cluster-bootstrap resamples (default 1000; study 2000; with --cases: the file's)"),
    Option("cost", ("--cost",), kind="append", metavar="NAME",
           choices=("traceable_frac", "conductance_twosided", "conductance_frac", "traceable_single_frac",
                    "density_kept"),
           help="built-in quantity to correlate against, repeatable (default traceable_frac and "
                "conductance_twosided); density_kept = 1 - |d_pred/d_ref - 1|, d the foreground count"),
    Option("cost_fn", ("--cost-fn",), kind="append", metavar="MODULE:FUNCTION", type=str,
           help="a quantity of your own: a function mask -> number, applied to the reference and each damaged copy, "
                "read as a fraction of the reference's (--cost-sided); MODULE importable, in the current folder, or a "
                "path to a .py file; repeatable; in addition to --cost"),
    Option("cost_sided", ("--cost-sided",), choices=("one", "two"),
           help="--cost-fn fractions c = q_pred/q_ref: 'one' reads c, 'two' min(c, 1/c) (default two)"),
    Option("min_units", ("--min-units",), type=nonnegative_int, default=10, metavar="N",
           help="a cell where the operator acted in fewer than N masks is inconclusive (default 10)"),
    Option("min_cases", ("--min-cases",), type=nonnegative_int, default=12, metavar="N",
           help="a cell with fewer than N acting cases is inconclusive (default 12)"),
    Option("no_redraw_floor", ("--no-redraw-floor",), kind="flag", help="skip the redraw floor"),
    Option("no_erl", ("--no-erl",), kind="flag", help="leave erl_star and node_recall out (curvicost's --no-erl)"),
    Option("include_cases", ("--include-cases",), kind="flag",
           help="every case (and redraw row) in the JSON: the file --cases reads back"),
    Option("threads", ("--threads",), type=positive_int, metavar="N",
           help="threads in this process (default: the CPUs available, at most 8); with --processes, threads per "
                "worker process (default 1)"),
    *cluster_options(fans="the cases"),
    Option("profile", ("--profile",), nargs="+", metavar="PRED", arrays=True,
           help="end with 'which metric should I report?' for these predictions of one method (profiled against "
                "--gt, as `segscore profile` does)"),
    Option("gt", ("--gt",), metavar="GT", arrays=True,
           help="the reference mask the --profile predictions are scored against"),
    Option("profile_json", ("--profile-json",), metavar="FILE",
           help="the same answer from an earlier `segscore profile --json-out FILE`"),
    Option("json", ("--json",), kind="flag", where="cli", help="print the result as JSON (the Python API's dict)"),
    Option("json_out", ("--json-out",), metavar="FILE", help="also write the JSON result to FILE"),
    Option("csv", ("--csv",), metavar="FILE", help="also write the findings table as CSV"),
    *plot_option("the metric-versus-cost bars (per metric, rho per operator with its interval, coloured by label)"),
    Option("quiet", ("--quiet",), kind="flag", where="cli", help="no progress on stderr"),
)


def _csv(path, findings):
    import csv
    import io

    from segscore.curvilinear.findings import ROW_KEYS
    from segscore.io.results import atomic_write, csv_text

    if findings:
        atomic_write(path, csv_text(findings))
        return
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(list(ROW_KEYS) + ["redraw_metric", "redraw_cost"])
    atomic_write(path, buf.getvalue())


def _profile_of(o):
    """The profile ``--profile PRED... --gt GT`` makes, or the one ``--profile-json`` names; None."""
    if o["profile_json"]:
        from segscore.errors import ScoreError
        from segscore.io.results import read_json

        prof = read_json(o["profile_json"], fix="give the JSON `segscore profile --json-out FILE` wrote")
        if not isinstance(prof, dict) or "mean" not in prof:
            raise ScoreError(f"{o['profile_json']}: not a profile (no \"mean\"); give the JSON `segscore profile "
                             "--json-out FILE` wrote")
        return prof
    if o["profile"]:
        from segscore.curvilinear.profiling import profile

        return profile(o["gt"], o["profile"], prune_px=5 if o["prune_px"] is None else o["prune_px"])
    return None


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The audit ``--json`` prints (with ``recommendation`` when ``--profile`` or
    ``--profile-json`` is given); writes ``--json-out``, ``--csv`` and ``--plot``, prints nothing.
    ``progress(done, total)`` is called as cases are scored."""
    from segscore.commands._options import write_outputs
    from segscore.errors import ScoreError

    if o["profile"] and o["profile_json"]:
        raise ScoreError("--profile and --profile-json: give one (predictions to profile, or a profile's JSON)")
    if bool(o["profile"]) != (o["gt"] is not None):
        raise ScoreError("--profile PRED... needs --gt GT (the reference they are profiled against), and --gt "
                         "is only for --profile")
    if o["plot"]:
        from segscore import figures

        figures.require_matplotlib()  # before the work
    if o["cases"]:
        threads_given = o["threads"] is not None
        given = [name for name, on in (
            ("MASK arguments", bool(o["masks"])), ("--prune-px", o["prune_px"] is not None),
            ("--study-ladder", o["study_ladder"]), ("--severities", o["severities"] is not None),
            ("--radius-scales", o["radius_scales"] is not None), ("--boundary-fracs", o["boundary_fracs"] is not None),
            ("--seeds", o["seeds"] is not None), ("--cost-fn", bool(o["cost_fn"])),
            ("--cost-sided", o["cost_sided"] is not None), ("--no-redraw-floor", o["no_redraw_floor"]),
            ("--no-erl", o["no_erl"]), ("--threads", threads_given),
            ("--processes", o["processes"] is not None), ("--scheduler", o["scheduler"] is not None),
            ("--spacing", o["spacing"] is not None)) if on]
        if given:
            raise ScoreError(f"--cases re-reads scored cases and scores nothing, so {', '.join(given)} "
                             "cannot apply; fix: drop them, or audit the masks without --cases")
        from segscore.curvilinear.auditing import audit_from_cases

        result = audit_from_cases(o["cases"], costs=tuple(dict.fromkeys(o["cost"])) if o["cost"] else None,
                                  min_units=o["min_units"], min_cases=o["min_cases"], n_boot=o["n_boot"],
                                  include_cases=o["include_cases"])
    else:
        if not o["masks"]:
            raise ScoreError("no reference masks; fix: give MASK files (3+ for intervals, 10+ for a verdict), "
                             "or --cases FILE to re-read an earlier audit")
        from segscore.curvilinear.auditing import COSTS, audit

        costs = tuple(dict.fromkeys(o["cost"])) if o["cost"] else COSTS
        result = audit(o["masks"], prune_px=5 if o["prune_px"] is None else o["prune_px"],
                       ladder="study" if o["study_ladder"] else "default", severities=o["severities"],
                       radius_scales=o["radius_scales"], boundary_fracs=o["boundary_fracs"], seeds=o["seeds"],
                       n_boot=o["n_boot"], costs=costs, cost_fns=tuple(o["cost_fn"] or ()),
                       cost_sided=o["cost_sided"] or "two", min_units=o["min_units"], min_cases=o["min_cases"],
                       redraw_floor=not o["no_redraw_floor"], erl=not o["no_erl"], include_cases=o["include_cases"],
                       threads=o["threads"], processes=o["processes"], scheduler=o["scheduler"],
                       progress=progress, spacing=o["spacing"])
    prof = _profile_of(o)
    if prof is not None:
        from segscore.curvilinear.advice import recommend
        from segscore.io.results import lift_notes

        result = lift_notes({**result, "recommendation": recommend(result, prof)})
    from segscore import figures
    from segscore.io.results import with_figure

    result = with_figure(result, lambda: figures.audit_bars(result))
    if o["csv"]:
        _csv(o["csv"], result["findings"])
    write_outputs(o, result)
    if o["plot"]:
        figures.draw_after(o["plot"], lambda: figures.audit_bars(result), "audit")
    return result
