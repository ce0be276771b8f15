"""Each scoring command's option declarations and compute part, shared by ``cli/``, ``batch/``
and :mod:`segscore.api`.

One module per command (``auc``, ``target``, ``curve``, ...) defines

- ``OPTIONS``: a tuple of :class:`segscore.commands._declare.Option`, one per argument (name,
  type, default, help, command-line spelling, nargs, choices, role). The CLI builds the
  subcommand's argparse parser from them, :mod:`segscore.api` the function's signature and its
  checks, a batch job parses its words with them. Adding an option is adding one ``Option``;
  ``INPUTS`` names the inputs the API function takes by position (``("truth", "pred")``);
- ``compute(*, progress=None, recorded=None, figure=True, **values) -> dict``: the values, by option
  name, to the result dict the command prints with ``--json``. It writes the files the output
  options name (``json_out``, ``csv``, ``output``, ``evidence``, the ledger of ``slug``) and prints
  nothing; ``recorded`` is what the ledger records (default: this process's command line); with
  ``figure`` the result keeps what its figure needs (``Result.plot()``). The result carries a
  top-level ``warnings`` list (``write_outputs`` makes sure of it; the CLI prints each on stderr);
- ``text(result) -> str``: what ``segscore CMD`` prints without ``--json`` (after the roles line,
  ``truth: FILE  pred: FILE``, which the CLI prints first);
- ``problems(result, values) -> list`` (a check only): what it found, each printed on stderr, exit 3;
- ``headline(result) -> [Cell]`` (optional): its leaderboard cells in ``segscore report``.

The CLI runs these (``segscore.cli._common.run_plain``); a command that prints more (progress
lines of its own, a report on stderr) has a module ``segscore.cli.CMD`` with its own ``run``.
``segscore.families.REGISTRY`` names the modules for the batch runner, which never imports
``segscore.cli``. Nothing here imports more than ``argparse`` until ``compute`` runs.
"""
