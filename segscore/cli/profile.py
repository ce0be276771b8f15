"""``segscore profile``: which error types does a method make? (curvicost's ``profile``.)

    segscore profile PRED... --gt GT [--prune-px N] [--seed S] [--seeds N] [--threads N]
                     [--json [FILE.json] | --json-out FILE] [--quiet]

Each prediction's disagreement with the reference is fitted as non-negative shares of the five
operators, calibrated on the reference (:mod:`segscore.curvilinear.profiling`). ``--json`` prints the
dict :func:`segscore.curvilinear.profiling.profile` returns, ``--json FILE.json`` writes it there (as
curvicost's ``--json PATH``) and prints the text report; ``--quiet`` prints no text report (the JSON of
``--json`` and the files of ``--json FILE.json`` and ``--json-out`` are still written). The
arguments and the compute part are :mod:`segscore.commands.profile`'s; this module prints.
"""

from __future__ import annotations

import sys

from segscore.commands.profile import INPUTS, OPTIONS  # noqa: F401


def run(args) -> int:
    from segscore.cli._common import show
    from segscore.commands import profile
    from segscore.commands._declare import from_namespace
    from segscore.curvilinear.profiling import format_profile

    values = from_namespace(profile, args)

    def say(line):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    chatty = sys.stderr.isatty() and not args.quiet and not args.json
    result = profile.compute(progress=say if chatty else None, figure=False, **values)
    show(args, result, None if args.quiet and not args.json else format_profile(result), module=profile)
    return 0
