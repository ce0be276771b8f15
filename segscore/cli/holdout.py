"""``segscore holdout``: score a folder of predictions on a versioned held-out set, or verify its digests."""

from __future__ import annotations

from segscore.commands.holdout import add_arguments  # noqa: F401



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
    lines += _means_lines(result)
    for k, why in (result.get("notes") or {}).items():
        if not k.startswith("means."):
            lines.append(f"note: {k} is null: {why}")
    return "\n".join(lines)


def _means_lines(result: dict) -> list:
    """With ``--missing``: the per-object means under the chosen policy, beside the other's when an
    object was left out (``segscore.objects.holdout.worst_means``)."""
    means = result.get("means")
    if not isinstance(means, dict):
        return []
    policy = result.get("missing")
    out = []
    for side, entries in means.items():
        both = any(e["n_left_out"] for e in entries.values())
        header = ("metric", "left out (null)", "mean (null)", "mean (worst)") if both else ("metric", "mean")
        rows = [(k, str(e["n_left_out"]), _f(e["null"]) or "null", _f(e["worst"]) or "null") if both
                else (k, _f(e["mean"]) or "null") for k, e in entries.items()]
        widths = [max(len(str(x[i])) for x in [header, *rows]) for i in range(len(header))]
        out.append(f"{side} per-object means (--missing {policy}"
                   + ("; null: unmatched objects left out and counted; worst: each counted as the worst value)"
                      if both else ": no object left out)"))
        out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        notes = result.get("notes") or {}
        for k, e in entries.items():
            why = notes.get(f"means.{side}.{k}.worst")
            if why and e["worst"] is None:
                out.append(f"not imputed: {why}")
    return out


def run(args) -> int:
    from segscore.cli._common import fail, show
    from segscore.commands.holdout import compute

    result = compute(args)
    if args.verify:
        problems = result["problems"]
        text = (("\n".join(problems) if problems else
                 f"{result['holdout']}@{result['holdout_version']}: all {result['n_fields']} truth masks match "
                 f"their digests"))
        show(args, result, text)
        if problems:  # as `segscore check` does: one line on stderr per problem, exit 3
            for problem in problems:
                fail(args, f"{args.manifest}: {problem}", 3)
            return 3
        return 0
    show(args, result, format_table(result))
    return 0
