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
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                v = float(part)
            except ValueError:
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
    return parse


def add_arguments(p) -> None:
    import argparse

    from segscore.commands._options import length_px, nonnegative_int, number, positive_int

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = DESCRIPTION
    p.add_argument("masks", nargs="*", metavar="MASK",
                   help="reference binary masks, 2D or 3D (3+ for intervals, 10+ for any verdict)")
    p.add_argument("--cases", metavar="FILE",
                   help="recompute the findings from an earlier audit's cases instead of scoring (segscore's "
                        "--include-cases JSON or curvicost's audit --include-cases --json)")
    p.add_argument("--prune-px", type=length_px, default=None, metavar="N",
                   help="spur-pruning length in voxels (default 5; ~2 vessel radii)")
    p.add_argument("--spacing", type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
                   help="voxel spacing of every mask, one number per axis in array order (default: each mask "
                        "file's header, NIfTI/OME-Zarr/TIFF, else 1 each); lengths, radii and conductance in its unit")
    p.add_argument("--study-ladder", action="store_true",
                   help="the study's ladder, 3 seeds and 2,000 resamples (explicit ladder options still override)")
    p.add_argument("--severities", type=_levels(0, 1, "a fraction of the eligible population"), metavar="LIST",
                   help="comma-separated fractions for break/bridge/truncate ONLY (default 0.02,0.05,0.1,0.2,0.5)")
    p.add_argument("--radius-scales", type=_levels(0, 3, "a radius scale factor"), metavar="LIST",
                   help="comma-separated scale factors for radius (default 0.7,0.85,1.15,1.3)")
    p.add_argument("--boundary-fracs", type=_levels(0, 1, "a fraction of the foreground voxels"), metavar="LIST",
                   help="comma-separated fractions of foreground voxels for boundary (default 0.005,0.02,0.05,0.1,0.2)")
    p.add_argument("--seeds", type=number(int, lo=1, hi=1000), metavar="N",
                   help="random seeds per operator and severity (default 1; study 3)")
    p.add_argument("--n-boot", "--bootstrap", dest="n_boot", type=number(int, lo=1, hi=1_000_000), metavar="N",
                   help="cluster-bootstrap resamples (default 1000; study 2000; with --cases: the file's)")
    p.add_argument("--cost", action="append", metavar="NAME",
                   choices=("traceable_frac", "conductance_twosided", "conductance_frac", "traceable_single_frac",
                            "density_kept"),
                   help="built-in quantity to correlate against, repeatable (default traceable_frac and "
                        "conductance_twosided); density_kept = 1 - |d_pred/d_ref - 1|, d the foreground count")
    p.add_argument("--cost-fn", action="append", metavar="MODULE:FUNCTION",
                   help="a quantity of your own: a function mask -> number, applied to the reference and each "
                        "damaged copy, read as a fraction of the reference's (--cost-sided); MODULE importable, "
                        "in the current folder, or a path to a .py file; repeatable; in addition to --cost")
    p.add_argument("--cost-sided", choices=("one", "two"), default=None,
                   help="--cost-fn fractions c = q_pred/q_ref: 'one' reads c, 'two' min(c, 1/c) (default two)")
    p.add_argument("--min-units", type=nonnegative_int, default=10, metavar="N",
                   help="a cell where the operator acted in fewer than N masks is inconclusive (default 10)")
    p.add_argument("--min-cases", type=nonnegative_int, default=12, metavar="N",
                   help="a cell with fewer than N acting cases is inconclusive (default 12)")
    p.add_argument("--no-redraw-floor", action="store_true", help="skip the redraw floor")
    p.add_argument("--no-erl", action="store_true", help="leave erl_star and node_recall out (curvicost's --no-erl)")
    p.add_argument("--include-cases", action="store_true",
                   help="every case (and redraw row) in the JSON: the file --cases reads back")
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help="threads in this process (default: the CPUs available, at most 8); with --processes, "
                        "threads per worker process (default 1)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--processes", type=number(int, lo=1, hi=512), metavar="N",
                   help="run the cases on a local dask.distributed cluster of N worker processes (127.0.0.1)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run the cases on an existing dask.distributed cluster")
    p.add_argument("--profile", nargs="+", metavar="PRED",
                   help="end with 'which metric should I report?' for these predictions of one method (profiled "
                        "against --gt, as `segscore profile` does)")
    p.add_argument("--gt", metavar="GT", help="the reference mask the --profile predictions are scored against")
    p.add_argument("--profile-json", metavar="FILE",
                   help="the same answer from an earlier `segscore profile --json-out FILE`")
    p.add_argument("--json", action="store_true", help="print the result as JSON (the Python API's dict)")
    p.add_argument("--json-out", metavar="FILE", help="also write the JSON result to FILE")
    p.add_argument("--csv", metavar="FILE", help="also write the findings table as CSV")
    from segscore.figures import add_plot_option

    add_plot_option(p, "the metric-versus-cost bars (per metric, rho per operator with its interval, coloured by "
                       "label)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


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


def _profile_of(args):
    """The profile ``--profile PRED... --gt GT`` makes, or the one ``--profile-json`` names; None."""
    if args.profile_json:
        from segscore.errors import ScoreError
        from segscore.io.results import read_json

        prof = read_json(args.profile_json, fix="give the JSON `segscore profile --json-out FILE` wrote")
        if not isinstance(prof, dict) or "mean" not in prof:
            raise ScoreError(f"{args.profile_json}: not a profile (no \"mean\"); give the JSON `segscore profile "
                             "--json-out FILE` wrote")
        return prof
    if args.profile:
        from segscore.curvilinear.profiling import profile

        return profile(args.gt, args.profile, prune_px=5 if args.prune_px is None else args.prune_px)
    return None


def compute(args, *, progress=None, argv=None) -> dict:
    """The audit ``--json`` prints (with ``recommendation`` when ``--profile`` or
    ``--profile-json`` is given); writes ``--json-out``, ``--csv`` and ``--plot``, prints nothing.
    ``progress(done, total)`` is called as cases are scored."""
    from segscore.commands._options import write_outputs
    from segscore.errors import ScoreError

    if args.profile and args.profile_json:
        raise ScoreError("--profile and --profile-json: give one (predictions to profile, or a profile's JSON)")
    if bool(args.profile) != bool(args.gt):
        raise ScoreError("--profile PRED... needs --gt GT (the reference they are profiled against), and --gt "
                         "is only for --profile")
    if args.plot:
        from segscore import figures

        figures.require_matplotlib()  # before the work
    if args.cases:
        # a batch job's threads are set by the runner: only the job's own words can give --threads
        threads_given = args.threads is not None if argv is None else \
            any(w == "--threads" or w.startswith("--threads=") for w in argv)
        given = [name for name, on in (
            ("MASK arguments", bool(args.masks)), ("--prune-px", args.prune_px is not None),
            ("--study-ladder", args.study_ladder), ("--severities", args.severities is not None),
            ("--radius-scales", args.radius_scales is not None), ("--boundary-fracs", args.boundary_fracs is not None),
            ("--seeds", args.seeds is not None), ("--cost-fn", bool(args.cost_fn)),
            ("--cost-sided", args.cost_sided is not None), ("--no-redraw-floor", args.no_redraw_floor),
            ("--no-erl", args.no_erl), ("--threads", threads_given),
            ("--processes", args.processes is not None), ("--scheduler", args.scheduler is not None),
            ("--spacing", args.spacing is not None)) if on]
        if given:
            raise ScoreError(f"--cases re-reads scored cases and scores nothing, so {', '.join(given)} "
                             "cannot apply; fix: drop them, or audit the masks without --cases")
        from segscore.curvilinear.auditing import audit_from_cases

        result = audit_from_cases(args.cases, costs=tuple(dict.fromkeys(args.cost)) if args.cost else None,
                                  min_units=args.min_units, min_cases=args.min_cases, n_boot=args.n_boot,
                                  include_cases=args.include_cases)
    else:
        if not args.masks:
            raise ScoreError("no reference masks; fix: give MASK files (3+ for intervals, 10+ for a verdict), "
                             "or --cases FILE to re-read an earlier audit")
        from segscore.curvilinear.auditing import COSTS, audit

        costs = tuple(dict.fromkeys(args.cost)) if args.cost else COSTS
        result = audit(args.masks, prune_px=5 if args.prune_px is None else args.prune_px,
                       ladder="study" if args.study_ladder else "default", severities=args.severities,
                       radius_scales=args.radius_scales, boundary_fracs=args.boundary_fracs, seeds=args.seeds,
                       n_boot=args.n_boot, costs=costs, cost_fns=tuple(args.cost_fn or ()),
                       cost_sided=args.cost_sided or "two", min_units=args.min_units, min_cases=args.min_cases,
                       redraw_floor=not args.no_redraw_floor, erl=not args.no_erl, include_cases=args.include_cases,
                       threads=args.threads, processes=args.processes, scheduler=args.scheduler,
                       progress=progress, spacing=args.spacing)
    prof = _profile_of(args)
    if prof is not None:
        from segscore.curvilinear.advice import recommend
        from segscore.io.results import lift_notes

        result = lift_notes({**result, "recommendation": recommend(result, prof)})
    if args.csv:
        _csv(args.csv, result["findings"])
    write_outputs(args, result)
    if args.plot:
        figures.draw_after(args.plot, lambda: figures.audit_bars(result), "audit")
    return result
