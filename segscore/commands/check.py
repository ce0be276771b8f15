"""``check``: prize pre-check (window cap, train/predict overlap). The CLI exits 3 on a violation."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, number

    p.add_argument("--window-px", type=number(float, lo=0, hi=1e9, lo_open=True, whole_float=True), required=True,
                   help="side of the model's input window in pixels")
    p.add_argument("--scan-um", type=number(float, lo=0, hi=1e6, lo_open=True), required=True,
                   help="scan resolution in micrometres per pixel")
    p.add_argument("--regions-json", metavar="FILE",
                   help='{"train_regions": [{"y0", "x0", "h", "w", "volume"?}], "predict_region": {...}}')
    add_output_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    """The check's result; ``result["compliant"]`` is False when it found a violation."""
    from segscore.commands._options import write_outputs
    from segscore.ink import compliance

    regions = compliance.load_regions(args.regions_json) if args.regions_json else None
    result = compliance.check(args.window_px, args.scan_um, regions)
    write_outputs(args, result)
    return result


def headline(result: dict) -> list:
    """Prize pre-check (``segscore check``): compliant or not, and the number of violations."""
    from segscore.commands._headline import cell, count

    return [cell(result, "compliant", "compliant"), count(result, "violations")]


def text(result: dict) -> str:
    """The result as ``segscore check`` prints it."""
    from segscore.ink import compliance

    return compliance.format_check(result)


def problems(result: dict, args) -> list:
    """The violations found (the CLI prints each on stderr and exits 3)."""
    return [] if result["compliant"] else list(result["violations"])
