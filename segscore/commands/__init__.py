"""Each scoring command's argument definitions and compute part, shared by ``cli/`` and ``batch/``.

One module per command (``auc``, ``target``, ``curve``, ...) defines

- ``add_arguments(parser)``: the command's options, for ``segscore CMD`` and for a batch job
  written as the same command line (``auc MAP.tif --labels L.zarr ...``);
- ``compute(args, *, progress=None, argv=None) -> dict``: parsed arguments to the result dict
  the command prints with ``--json``. It writes the files the output options name (``--json-out``,
  ``--csv``, ``-o``, ``--evidence``, the ledger of ``--slug``) and prints nothing; ``argv`` is the
  command line recorded by the ledger (default: this process's). The result carries a top-level
  ``warnings`` list (``write_outputs`` makes sure of it; the CLI prints each on stderr);
- ``text(result) -> str``: what ``segscore CMD`` prints without ``--json``;
- ``problems(result, args) -> list`` (a check only): what it found, each printed on stderr, exit 3;
- ``headline(result) -> [Cell]`` (optional): its leaderboard cells in ``segscore report``.

The CLI runs these (``segscore.cli._common.run_plain``); a command that prints more (progress
lines of its own, a report on stderr) has a module ``segscore.cli.CMD`` with its own ``run``.
``segscore.families.REGISTRY`` names the functions for the batch runner, which never imports
``segscore.cli``. Nothing here imports more than ``argparse`` until ``compute`` runs.
"""
