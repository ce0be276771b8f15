"""``holdout``: score a folder of predictions on a versioned held-out set, or verify its digests."""

from __future__ import annotations

from segscore.commands._options import value_text


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import missing_option, output_options  # noqa: E402
from segscore.commands.objects import matching_options, scorecard_options  # noqa: E402

#: ``segscore holdout MANIFEST --predictions DIR``; ``segscore.api.holdout(manifest, predictions)``
INPUTS = ("manifest", "predictions")
OPTIONS = (
    Option("manifest", metavar="MANIFEST", role="manifest",
           help="the held-out set's JSON manifest {name, version, fields: [{image, truth, sha256}]}"),
    Option("predictions", ("--predictions",), metavar="DIR", role="predictions",
           help="folder of predicted label images, named after the truth's"),
    Option("baseline", ("--baseline",), metavar="DIR",
           help="folder of the vanilla model's predictions: adds vanilla and delta"),
    Option("verify", ("--verify",), kind="flag",
           help="check every truth mask against its sha256; exit 3 on any problem"),
    *matching_options("precision, recall, F1"),
    *scorecard_options(),
    *missing_option("the per-object means (iou_mean, dice_per_object, and with --surface the distances) under this "
                    "policy, beside the other's when an object was left out"),
    *output_options(csv=True),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The scorecard, or with ``verify`` ``{holdout, holdout_version, n_fields, problems, notes}``
    (the CLI exits 3 when ``problems`` is not empty)."""
    from segscore.commands._options import write_outputs
    from segscore.errors import ScoreError
    from segscore.io.results import atomic_write, with_warnings
    from segscore.objects import holdout as H

    if o["verify"]:
        hs = H.load_holdout(o["manifest"])
        problems = H.verify_holdout(hs)
        result = {"holdout": hs.name, "holdout_version": hs.version, "n_fields": len(hs.fields), "problems": problems,
                  "notes": {}}
        write_outputs(o, result)
        return result
    if not o["predictions"]:
        raise ScoreError("give --predictions DIR to score, or --verify to check the digests")
    result = H._score_holdout_files(o["manifest"], o["predictions"], baseline=o["baseline"], threshold=o["iou"],
                                    boundary_tolerances=tuple(o["tolerances"]),
                                    count_background=o["count_background"], surface=o["surface"],
                                    spacing=o["spacing"], nsd_tolerance=o["nsd_tolerance"],
                                    distance_definition=o["distance_definition"], missing=o["missing"])
    if o["csv"]:  # the CSV is the scorecard table
        rows = result.get("rows") or [
            {"metric": k, "finetuned": v, "vanilla": None, "delta": None, "holdout": result["holdout"],
             "holdout_version": result["holdout_version"],
             "reason": (f"finetuned is null: {result['notes'].get('finetuned.' + k, 'undefined')}"
                        if v is None else None)}
            for k, v in result["finetuned"].items() if k != "notes"]
        atomic_write(o["csv"], H.scorecard_csv(rows))
    with_warnings(result, result.get("digest_problems"))
    write_outputs({**o, "csv": None}, result)
    return result


HOLDOUT_KEYS = ("f1", "ap_mean", "dice_per_object")


def headline(result: dict) -> list:
    """Held-out set (``segscore holdout``): the pooled F1, mean AP and per-object Dice of the
    predictions, each beside the baseline's (``--baseline``) as its control; with ``--verify``,
    the number of digest problems."""
    from segscore.commands._headline import cell, count

    if "finetuned" not in result:
        return [count(result, "problems")]
    cells = []
    for k in HOLDOUT_KEYS:
        cells += [cell(result, k, f"finetuned.{k}"),
                  cell(result, f"{k} [vanilla]", f"vanilla.{k}", "control", k, "vanilla",
                       missing="no --baseline predictions given")]
    return cells


def _f(v):
    return value_text(v, null="")


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


def text(result: dict) -> str:
    """The result as ``segscore holdout`` prints it: the scorecard table, or the digests' verdict."""
    if "problems" not in result:
        return format_table(result)
    if result["problems"]:
        return "\n".join(result["problems"])
    return f"{result['holdout']}@{result['holdout_version']}: all {result['n_fields']} truth masks match their digests"


def problems(result: dict, values: dict) -> list:
    """``--verify``'s problems, each naming the manifest (the CLI prints them on stderr, exit 3)."""
    return [f"{values['manifest']}: {problem}" for problem in result.get("problems", ())]
