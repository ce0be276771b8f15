"""``check``: prize pre-check (window cap, train/predict overlap). The CLI exits 3 on a violation."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import number, output_options  # noqa: E402

#: ``segscore check --window-px N --scan-um U``: no truth, no prediction
INPUTS = ()
OPTIONS = (
    Option("window_px", ("--window-px",), type=number(float, lo=0, hi=1e9, lo_open=True, whole_float=True),
           required=True, help="side of the model's input window in pixels"),
    Option("scan_um", ("--scan-um",), type=number(float, lo=0, hi=1e6, lo_open=True), required=True,
           help="scan resolution in micrometres per pixel"),
    Option("regions_json", ("--regions-json",), metavar="FILE",
           help='{"train_regions": [{"y0", "x0", "h", "w", "volume"?}], "predict_region": {...}}'),
    *output_options(),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The check's result; ``result["compliant"]`` is False when it found a violation."""
    from segscore.commands._options import write_outputs
    from segscore.ink import compliance

    regions = compliance.load_regions(o["regions_json"]) if o["regions_json"] else None
    result = compliance.check(o["window_px"], o["scan_um"], regions)
    write_outputs(o, result)
    return result


def headline(result: dict) -> list:
    """Prize pre-check (``segscore check``): compliant or not, and the number of violations."""
    from segscore.commands._headline import cell, count

    return [cell(result, "compliant", "compliant"), count(result, "violations")]


def text(result: dict) -> str:
    """The result as ``segscore check`` prints it."""
    from segscore.ink import compliance

    return compliance.format_check(result)


def problems(result: dict, values: dict) -> list:
    """The violations found (the CLI prints each on stderr and exits 3)."""
    return [] if result["compliant"] else list(result["violations"])
