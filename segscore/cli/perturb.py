"""``segscore perturb``: apply one typed, graded error operator to a binary curvilinear mask."""

from __future__ import annotations

from segscore.commands.perturb import add_arguments  # noqa: F401



def run(args) -> int:
    import sys

    from segscore.commands.perturb import compute
    from segscore.io.results import dumps

    info = compute(args)
    if args.json:
        sys.stdout.write(dumps(info) + "\n")
    else:
        extras = ", ".join(f"{k} {v}" for k, v in info.items() if k not in ("input", "output", "operator", "severity",
                                                                             "seed", "prune_px"))
        sys.stdout.write(f"{args.operator} at {args.severity:g} (seed {args.seed}) -> {args.output}: {extras}\n")
    return 0
