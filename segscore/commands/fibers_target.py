"""``fibers-target NML_DIR MASK --out TARGET_DIR``: a fiber target from WEBKNOSSOS traces."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import nonnegative_int, number, output_options, positive_int  # noqa: E402

#: ``segscore fibers-target NML_DIR MASK --out TARGET_DIR``; ``segscore.api.fibers_target(nml, mask, out=...)``
INPUTS = ("nml", "mask")
OPTIONS = (
    Option("nml", metavar="NML_DIR", role="nml",
           help="folder of the cube's WEBKNOSSOS .nml skeletons (read in name order), or one .nml file"),
    Option("mask", metavar="MASK", role="mask",
           help="the cube's reference fiber mask: .npy, .tif or zarr (non-zero = fiber; a float mask holds only 0 "
                "and 1), or a fiber target's packed mask.npz"),
    Option("out", ("--out",), required=True, metavar="TARGET_DIR",
           help="the target folder to write (new or empty; see --force)"),
    Option("origin", ("--origin",), nargs=3, type=nonnegative_int, metavar=("Z", "Y", "X"),
           help="the cube's origin in absolute scroll voxels (default: from the file names, "
                "<scroll>_<z>_<y>_<x>_<size>.nml)"),
    Option("tolerance", ("--tolerance",), type=number(float, lo=0, hi=64), default=2.0, metavar="N",
           help="scoring tolerance in voxels written to meta.json (default 2, ScrollGT's)"),
    Option("shape", ("--shape",), nargs=3, type=positive_int, metavar=("Z", "Y", "X"),
           help="the cube's shape; the mask must have it (default: the mask's shape)"),
    Option("force", ("--force",), kind="flag", help="replace TARGET_DIR when it already holds files"),
    *output_options(),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """Write the target folder ``out``; returns its summary."""
    from segscore.commands._options import write_outputs
    from segscore.fibers.build import build_target

    result = build_target(o["nml"], o["mask"], o["out"], origin=o["origin"], tolerance=o["tolerance"],
                          shape=o["shape"], force=o["force"])
    write_outputs(o, result)
    return result


def text(result: dict) -> str:
    """The result as ``segscore fibers-target`` prints it."""
    from segscore.fibers.build import format_summary

    return format_summary(result)
