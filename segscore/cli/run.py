"""``segscore run init SLUG``: start an experiment in the ledger; ``segscore run show SLUG``: print it."""

from __future__ import annotations

from segscore.commands._declare import Option

#: ``segscore run ACTION SLUG [--root DIR]``, declared as every command's options are
#: (:mod:`segscore.commands._declare`)
OPTIONS = (
    Option("action", metavar="ACTION", choices=("init", "show"),
           help="init: start ROOT/SLUG/run.json with no checks; show: print ROOT/SLUG/run.json"),
    Option("slug", metavar="SLUG", help="the experiment's name (a folder under ROOT)"),
    Option("root", ("--root",), default="experiments", metavar="DIR", help="ledger folder (default experiments)"),
)


def run(args) -> int:
    import sys

    from segscore.io import ledger
    from segscore.io.results import dumps

    if args.action == "init":
        path = ledger.init_run(args.slug, args.root)
        print(f"started {path}")
    else:
        sys.stdout.write(dumps(ledger.read_run(args.slug, args.root)) + "\n")
    return 0
