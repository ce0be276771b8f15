"""``segscore run init SLUG``: start an experiment in the ledger."""

from __future__ import annotations



def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    init = sub.add_parser("init", help="start ROOT/SLUG/run.json with no checks")
    init.add_argument("slug")
    init.add_argument("--root", default="experiments", help="ledger folder (default experiments)")
    show = sub.add_parser("show", help="print ROOT/SLUG/run.json")
    show.add_argument("slug")
    show.add_argument("--root", default="experiments", help="ledger folder (default experiments)")


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
