"""Prize-compliance pre-check (ScrollGT ``check``): the ML window cap and train/predict overlap.

- Window: compliant when ``window_px <= 64`` or ``window_px * scan_um / 1000 <= 0.5`` mm. The
  rule's text is "0.5 x 0.5 mm (64 x 64 pixels for 8 um scans)": 64 px at 8 um is 0.512 mm,
  so the pixel form is blessed even though it slightly exceeds the literal millimetres.
- Overlap: regions are ``{"y0", "x0", "h", "w", "volume"?}`` in pixels of one geometry and
  level; a training region whose interior intersects the predicted region in the same volume
  (a missing ``volume`` matches a missing one) is a violation.

These checks are necessary, not sufficient: the prize rules ask for more than this.
"""

from __future__ import annotations

import math
import numbers

from segscore.errors import ScoreError
from segscore.io.results import as_result

MAX_WINDOW_MM = 0.5
MAX_WINDOW_PX = 64

__all__ = ["window_compliant", "regions_overlap", "check", "load_regions", "format_check"]


def window_compliant(window_px, scan_um) -> tuple[bool, float]:
    """``(compliant, window_mm)``; ScoreError unless both are positive numbers."""
    for name, v in (("window_px", window_px), ("scan_um", scan_um)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0:
            raise ScoreError(f"{name} must be a positive number, got {v!r}")
    window_mm = float(window_px) * float(scan_um) / 1000.0
    return bool(window_px <= MAX_WINDOW_PX or window_mm <= MAX_WINDOW_MM + 1e-9), window_mm


def _region(obj, where: str) -> dict:
    if not isinstance(obj, dict):
        raise ScoreError(f"{where}: expected an object with y0, x0, h, w, got {obj!r}")
    out = {}
    for k in ("y0", "x0", "h", "w"):
        v = obj.get(k)
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or abs(v) > 2 ** 53:
            raise ScoreError(f"{where}: '{k}' must be a number of pixels (finite, at most 2**53), got {v!r}")
        out[k] = v
    if out["h"] <= 0 or out["w"] <= 0:
        raise ScoreError(f"{where}: h and w must be positive, got h={out['h']} w={out['w']}")
    volume = obj.get("volume")
    if volume is not None:
        if isinstance(volume, bool) or not isinstance(volume, (str, int)):
            raise ScoreError(f"{where}: 'volume' must name the scan volume (a string or a whole number), "
                             f"got {volume!r}")
        out["volume"] = volume
    return out


def regions_overlap(a: dict, b: dict) -> bool:
    """Whether the interiors of two axis-aligned regions intersect (touching edges do not)."""
    return not (a["y0"] + a["h"] <= b["y0"] or b["y0"] + b["h"] <= a["y0"]
                or a["x0"] + a["w"] <= b["x0"] or b["x0"] + b["w"] <= a["x0"])


def load_regions(path) -> dict:
    """Read and validate a regions JSON: ``{"train_regions": [...], "predict_region": {...}}``."""
    from segscore.io.results import read_json

    data = read_json(path, fix='give a regions JSON: {"train_regions": [...], "predict_region": {...}}')
    return validate_regions(data, str(path))


def validate_regions(data, where: str = "regions") -> dict:
    if not isinstance(data, dict) or "predict_region" not in data or "train_regions" not in data:
        raise ScoreError(f'{where}: expected {{"train_regions": [...], "predict_region": {{...}}}}')
    if not isinstance(data["train_regions"], list):
        raise ScoreError(f"{where}: train_regions must be a list of regions")
    return {"train_regions": [_region(r, f"{where}: train_regions[{i}]") for i, r in enumerate(data["train_regions"])],
            "predict_region": _region(data["predict_region"], f"{where}: predict_region")}


@as_result
def check(window_px, scan_um, regions=None) -> dict:
    """Run both checks. ``regions`` is a dict (see :func:`validate_regions`) or None.

    Returns ``{"compliant", "violations", "window", "overlap"}``; ``violations`` lists one
    line per failure. Raises ScoreError for bad input.
    """
    ok_window, window_mm = window_compliant(window_px, scan_um)
    violations = []
    if not ok_window:
        violations.append(f"ML window {window_px} px at {scan_um} um = {window_mm:.3f} mm exceeds the "
                          f"{MAX_WINDOW_MM} mm cap (and {MAX_WINDOW_PX} px)")
    result = {"compliant": None, "violations": violations,
              "window": {"window_px": window_px, "scan_um": scan_um, "window_mm": window_mm,
                         "compliant": ok_window,
                         "rule": f"window_px <= {MAX_WINDOW_PX} or window_mm <= {MAX_WINDOW_MM}"}}
    if regions is not None:
        regions = validate_regions(regions)
        pred = regions["predict_region"]
        hits = []
        for i, tr in enumerate(regions["train_regions"]):
            if tr.get("volume") == pred.get("volume") and regions_overlap(tr, pred):
                hits.append(i)
                violations.append(f"training region {i} (y0={tr['y0']} x0={tr['x0']} h={tr['h']} w={tr['w']}"
                                  f"{', volume ' + str(tr['volume']) if 'volume' in tr else ''}) overlaps the "
                                  f"predicted region; zero train/predict overlap is required")
        result["overlap"] = {"checked": True, "n_train_regions": len(regions["train_regions"]),
                             "overlapping_train_regions": hits}
    else:
        result["overlap"] = {"checked": False}  # no regions given: not a null metric, no note
    result["compliant"] = not violations
    result["notes"] = {}
    return result


def format_check(result: dict) -> str:
    w = result["window"]
    lines = [f"window: {w['window_px']} px at {w['scan_um']} um = {w['window_mm']:.3f} mm: "
             f"{'ok' if w['compliant'] else 'VIOLATION'}"]
    ov = result["overlap"]
    if ov["checked"]:
        lines.append(f"overlap: {len(ov['overlapping_train_regions'])} of {ov['n_train_regions']} training regions "
                     f"overlap the predicted region")
    else:
        lines.append("overlap: not checked (no --regions-json)")
    lines.extend(f"violation: {v}" for v in result["violations"])
    lines.append("compliant (necessary, not sufficient)" if result["compliant"] else
                 f"NOT compliant: {len(result['violations'])} violation(s)")
    return "\n".join(lines)
