"""``segscore holdout``: score a folder of predictions on a versioned held-out set, or verify its digests."""

from __future__ import annotations

import sys

HELP = "score predictions on a versioned held-out set (scorecard table, CSV), or --verify its digests"


def add_arguments(p) -> None:
    from segscore.cli._common import add_output_options, number, share

    p.add_argument("manifest", help="the held-out set's JSON manifest {name, version, fields: [{image, truth, sha256}]}")
    p.add_argument("--predictions", metavar="DIR", help="folder of predicted label images, named after the truth's")
    p.add_argument("--baseline", metavar="DIR", help="folder of the vanilla model's predictions: adds vanilla and delta")
    p.add_argument("--verify", action="store_true", help="check every truth mask against its sha256; exit 3 on any problem")
    p.add_argument("--iou", type=share, default=0.5, help="IoU at which precision, recall, F1 are matched (default 0.5)")
    p.add_argument("--tolerances", type=number(int, lo=0, hi=1000), nargs="+", default=[1, 2, 3], metavar="PX",
                   help="boundary tolerances in pixels (default 1 2 3)")
    add_output_options(p, csv=True)


def _f(v):
    if v is None:
        return ""
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def format_table(result: dict) -> str:
    head = f"held-out {result['holdout']}@{result['holdout_version']}: {result['n_fields']} fields"
    if "rows" in result:
        rows = [(r["metric"], _f(r["finetuned"]), _f(r["vanilla"]),
                 "" if r["delta"] is None else f"{r['delta']:+.4f}" if isinstance(r["delta"], float)
                 else f"{r['delta']:+d}") for r in result["rows"]]
        header = ("metric", "finetuned", "vanilla", "delta")
    else:
        rows = [(k, _f(v)) for k, v in result["finetuned"].items() if k != "notes"]
        header = ("metric", "value")
    widths = [max(len(str(x[i])) for x in [header, *rows]) for i in range(len(header))]
    lines = [head, "  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for k, why in (result.get("notes") or {}).items():
        lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def run(args) -> int:
    from segscore.cli._common import emit
    import sys

    from segscore.errors import ScoreError
    from segscore.io.results import atomic_write
    from segscore.objects import holdout as H

    if args.verify:
        hs = H.load_holdout(args.manifest)
        problems = H.verify_holdout(hs)
        result = {"holdout": hs.name, "holdout_version": hs.version, "n_fields": len(hs.fields), "problems": problems,
                  "notes": {}}
        text = "\n".join(problems) if problems else f"{hs.name}@{hs.version}: all {len(hs.fields)} truth masks match their digests"
        emit(args, result, text)
        if problems:  # as `segscore check` does: one line on stderr per problem, exit 3
            for problem in problems:
                sys.stderr.write(f"segscore holdout: {args.manifest}: {problem}\n")
            return 3
        return 0
    if not args.predictions:
        raise ScoreError("give --predictions DIR to score, or --verify to check the digests")
    result = H.score_holdout_files(args.manifest, args.predictions, baseline=args.baseline, threshold=args.iou,
                                   boundary_tolerances=tuple(args.tolerances))
    for line in result["digest_problems"]:
        sys.stderr.write(f"segscore holdout: warning: {line}\n")
    if args.csv:
        rows = result.get("rows") or [
            {"metric": k, "finetuned": v, "vanilla": None, "delta": None, "holdout": result["holdout"],
             "holdout_version": result["holdout_version"],
             "reason": (f"finetuned is null: {result['notes'].get('finetuned.' + k, 'undefined')}"
                        if v is None else None)}
            for k, v in result["finetuned"].items() if k != "notes"]
        atomic_write(args.csv, H.scorecard_csv(rows))
    emit(args, result, format_table(result))  # the CSV is the scorecard table, written above
    return 0
