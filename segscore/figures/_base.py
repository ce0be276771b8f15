"""What every figure shares: a headless Figure, refusals, the ``--plot`` file type and the atomic write.

Figures are :class:`matplotlib.figure.Figure` objects made directly (never ``pyplot``: no global
state, no window, nothing shown); they render through matplotlib's Agg (PNG) and SVG canvases
when saved. matplotlib is imported inside the functions, so importing this module is free.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from segscore.errors import ScoreError

#: file suffixes ``--plot`` accepts, and the format each writes
FORMATS = {".png": "png", ".svg": "svg"}
#: what to install when matplotlib is missing
INSTALL = "pip install 'segscore[plot]'"

#: one colour per role, reused across figures
PREDICTION = "#2f6df6"
FLOOR_COLOURS = ("#8c8c8c", "#d08a2e", "#6aa84f", "#a64d79", "#3d85c6", "#cc4125", "#674ea7")


def require_matplotlib() -> None:
    """Refuse (ScoreError, one line) when matplotlib is missing: call before the work."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise ScoreError(f"figures need matplotlib, which is not installed; {INSTALL}")


def new_figure(figsize, *, ncols: int = 1, nrows: int = 1):
    """``(figure, axes list)``: a Figure of ``figsize`` inches with ``nrows x ncols`` axes, laid out
    with matplotlib's constrained layout, not attached to pyplot."""
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, [ax for row in axes for ax in row]


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def null_reason(result: dict, path: str) -> str:
    """The note a result carries for the null at ``path`` (the result contract), or a default."""
    notes = result.get("notes") if isinstance(result, dict) else None
    why = (notes or {}).get(path)
    return str(why).splitlines()[0] if why else "the result gives no reason"


def refuse_null(result: dict, path: str, what: str):
    """Raise the one-line refusal of an empty chart: ``path`` is null in ``result``."""
    raise ScoreError(f"cannot draw {what}: {path} is null ({null_reason(result, path)}); an empty chart would "
                     "read as a score of zero")


def format_of(path) -> str:
    """``'png'`` or ``'svg'`` from the suffix of ``path``; ScoreError for any other suffix."""
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in FORMATS:
        raise ScoreError(f"{os.fspath(path)}: a figure is written as .png or .svg (the format follows the suffix); "
                         "name the file FILE.png or FILE.svg")
    return FORMATS[suffix]


def plot_file(text: str) -> str:
    """An argparse type for ``--plot FILE.png|svg``: a bad suffix is a usage error (exit 2, one line)."""
    import argparse

    try:
        format_of(text)
    except ScoreError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a .png or .svg file name (the format follows the "
                                         "suffix)") from None
    return text


def save(fig, path, *, dpi: int = 150) -> Path:
    """Write ``fig`` to ``path`` in one step (temporary file in the same folder, fsync, rename), as
    PNG or SVG by the suffix (:func:`format_of`). Returns the path."""
    from segscore.io.results import write_atomically

    fmt = format_of(path)
    return write_atomically(path, lambda fh: fig.savefig(fh, format=fmt, dpi=dpi), binary=True)


def draw_after(path, draw, command: str):
    """Draw the figure of a result already written and save it to ``path``. A chart the result
    cannot fill (its headline null, with a note) is not a failed score: one ``segscore COMMAND:
    warning:`` line on stderr says why no figure was drawn, nothing is written, and the command
    still exits 0 (the result contract). Returns the path written, or None."""
    import sys

    try:
        fig = draw()
    except ScoreError as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"segscore {command}: warning: --plot {os.fspath(path)} not drawn: {why}\n")
        sys.stderr.flush()
        return None
    return save(fig, path)
