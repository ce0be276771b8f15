"""Argument types and option groups every command shares (``--json``, ``--tile-rows`` ...)."""

from __future__ import annotations

import argparse
import math


def number(kind=float, *, lo=None, hi=None, lo_open=False, whole_float=False):
    """An argparse type for a finite number in a range: ``kind`` int or float; ``lo``/``hi``
    bounds (``lo_open``: ``lo`` itself excluded). Anything else (text, NaN, inf, out of range)
    is a usage error (exit 2) saying what is allowed. ``whole_float``: a float that is whole
    comes back as an int (a length in voxels)."""

    def parse(text: str):
        try:
            value = int(text) if kind is int else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole number' if kind is int else 'number'}") \
                from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if lo is not None and (value < lo or (lo_open and value == lo)):
            raise argparse.ArgumentTypeError(f"{text} must be {'more than' if lo_open else 'at least'} {lo}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{text} must be at most {hi}")
        if whole_float and float(value).is_integer():
            return int(value)
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its message
    return parse


#: argparse types used across commands
positive_int = number(int, lo=1)
nonnegative_int = number(int, lo=0)
#: a length in pixels or voxels: finite, >= 0, at most a million
length_px = number(float, lo=0, hi=1e6, whole_float=True)
#: a share in (0, 1]
share = number(float, lo=0, hi=1, lo_open=True)


def add_output_options(parser, *, csv: bool = False) -> None:
    """``--json``, ``--json-out FILE`` and (optionally) ``--csv FILE``."""
    parser.add_argument("--json", action="store_true", help="print the result as JSON (the Python API's dict)")
    parser.add_argument("--json-out", metavar="FILE", help="also write the JSON result to FILE")
    if csv:
        parser.add_argument("--csv", metavar="FILE", help="also write the result as CSV (a header and rows)")


def add_engine_options(parser, *, tile_rows: bool = True, threads_help: str | None = None) -> None:
    """``--tile-rows N`` (unless ``tile_rows`` is False) and ``--threads N`` (``--workers`` is a
    hidden alias of ``--threads``)."""
    if tile_rows:
        parser.add_argument("--tile-rows", type=positive_int, metavar="N",
                            help="rows (slices of a 3D image) per tile (default: bands of a few tens of MB)")
    parser.add_argument("--threads", type=positive_int, metavar="N",
                        help=threads_help or "threads in this process (default: the CPUs available, at most 8)")
    parser.add_argument("--workers", type=positive_int, dest="threads", help=argparse.SUPPRESS)


def add_floor_options(parser) -> None:
    """The trailing options of a scoring command with ScrollGT floors: ``--seed``,
    ``--no-floors``, the output options and the engine options."""
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the uniform_random floor (default 0)")
    parser.add_argument("--no-floors", action="store_true", help="skip the floors")
    add_output_options(parser)
    add_engine_options(parser)


def write_outputs(args, result, *, csv_rows=None) -> None:
    """Write the files ``--json-out`` and ``--csv`` name (the CSV from ``csv_rows``). Every command's
    compute part ends here, so this is also where its result gets its top-level ``warnings`` list
    (the result contract, :func:`segscore.io.results.with_warnings`)."""
    from segscore.io.results import with_warnings, write_csv, write_json

    with_warnings(result)
    if getattr(args, "json_out", None):
        write_json(args.json_out, result)
    if getattr(args, "csv", None) and csv_rows is not None:
        write_csv(args.csv, csv_rows)


def add_spacing_options(p) -> None:
    """``--spacing`` (one voxel size per axis) and ``--prune-length`` (spur pruning in its unit)
    of the curvilinear commands."""
    p.add_argument("--spacing", type=number(float, lo=1e-12, hi=1e12), nargs="+", metavar="S",
                   help="voxel spacing, one number per axis in array order (Z Y X or Y X); default: the one the "
                        "files' headers state (NIfTI, OME-Zarr, TIFF resolution), else 1 each. Lengths, radii, the "
                        "r^4 conductance and hd95 are then in its unit (curvicost only records a voxel size)")
    p.add_argument("--prune-length", type=number(float, lo=0, hi=1e12), default=None, metavar="L",
                   help="spur-pruning length in the spacing's unit, instead of --prune-px voxels")
