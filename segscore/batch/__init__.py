"""Batch scoring: many jobs of any family, one process per worker, resumable results.

A job is one scoring call written as its command line without the program name
(``auc MAP.tif --labels L.zarr --mask M.zarr --bootstrap 300``, ``curve P.png --gt G.png``), parsed
by the command's own argument definitions (:mod:`segscore.commands`, named by the registry
``segscore.families.COMMANDS``), with an ``id`` and tags; in Python also a family name with
arrays (``{"id": "a", "family": "objects", "args": [truth, pred]}``). A manifest lists jobs as CSV,
JSON, JSON Lines or a grid (:mod:`segscore.batch.manifest`). :func:`run` scores them on threads
here or on a ``distributed`` cluster and, given ``out``, appends one line per finished job to
``OUT/results.jsonl`` (resuming where a killed run stopped) and writes ``OUT/results.csv``::

    from segscore.batch import run
    res = run("jobs.csv", out="results")        # or a list of job lines, or client=Client(...)
    res.to_frame()                              # pandas: one row per job, result.* columns

:func:`report` turns a results folder into a leaderboard (:mod:`segscore.batch.report`)::

    from segscore.batch import report
    print(report("results", by=["model", "target"]).to_markdown())

``segscore.batch`` never imports ``segscore.cli``; dask and distributed are imported only when a
cluster is used, pandas only by ``to_frame``.
"""

from __future__ import annotations

from segscore.batch.jobs import Job, parse_job
from segscore.batch.manifest import ManifestError, load_manifest
# imported here, not on first use: the module shares the function's name, and a lazy export would
# let `import segscore.batch.report` (the commands' headlines import its Cell) shadow the
# function with the module. It imports the standard library only; its outputs import the rest.
from segscore.batch.report import Report, ReportError, report
from segscore.batch.runner import BatchResult, run

__all__ = ["BatchResult", "Job", "ManifestError", "Report", "ReportError", "load_manifest", "parse_job", "report",
           "run"]
