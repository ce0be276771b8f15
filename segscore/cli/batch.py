"""``segscore batch MANIFEST --out DIR``: run a manifest of scoring jobs, resumably.

Exit 0 when every job scored (now or in an earlier run), 2 when some were refused (the count on
stderr) or the manifest was, 1 when a job crashed (a bug: its traceback on stderr) or the batch
itself failed.
"""

from __future__ import annotations



from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import cluster_options, positive_int  # noqa: E402

OPTIONS = (
    Option("manifest", metavar="MANIFEST",
           help="the jobs: CSV (id,job[,tags...]), a JSON list, JSON Lines, or a grid "
                '{"template": "target {pred} {target}", "grid": {...}}; each job is a segscore command line without '
                "`segscore`; relative paths are the manifest folder's"),
    Option("out", ("--out",), required=True, metavar="DIR",
           help="results folder: results.jsonl (one line per finished job), results.csv, outputs/ID/"),
    *cluster_options(fans="the jobs", group="where"),
    Option("threads", ("--threads",), type=positive_int, metavar="N",
           help="jobs at once in this process (default: the CPUs, at most 8); with --processes: threads per worker"),
    Option("force", ("--force",), kind="flag", help="rescore every job, also those scored already"),
    Option("hash", ("--hash",), kind="flag", help="fingerprint every input with sha256 too (reads it whole)"),
    Option("quiet", ("--quiet",), kind="flag", help="no progress line"),
)


def run(args) -> int:
    import sys

    from segscore.batch.runner import run as run_batch

    def crashed(job, tb):
        sys.stderr.write(f"segscore batch: job {job.id} crashed (a bug, please report it):\n{tb}")

    result = run_batch(args.manifest, out=args.out, threads=args.threads, processes=args.processes,
                       scheduler=args.scheduler, force=args.force, hash=args.hash, on_crash=crashed,
                       progress=None if args.quiet or not sys.stderr.isatty() else sys.stderr)
    counts = result.counts()
    for line in result.warnings:
        sys.stderr.write(f"segscore batch: warning: {line}\n")
    n = len(result.rows)
    if not args.quiet:  # the closing line, terminal or not: what was done and where it is
        sys.stderr.write(f"segscore batch: {n} job{'' if n == 1 else 's'}: {counts['scored'] - len(result.skipped)} scored, "
                         f"{len(result.skipped)} skipped (scored before), {counts['refused']} refused, "
                         f"{counts['crashed']} crashed; results in {args.out}/results.jsonl\n")
    if counts["crashed"]:
        sys.stderr.write(f"segscore batch: {counts['crashed']} of {n} job{'' if n == 1 else 's'} crashed; see "
                         f"{args.out}/results.jsonl\n")
        return 1
    if counts["refused"]:
        sys.stderr.write(f"segscore batch: {counts['refused']} of {n} job{'' if n == 1 else 's'} refused; their errors "
                         f"are in {args.out}/results.jsonl\n")
        return 2
    return 0
