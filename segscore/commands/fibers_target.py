"""``fibers-target NML_DIR MASK --out TARGET_DIR``: a fiber target from WEBKNOSSOS traces."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, nonnegative_int, number, positive_int

    p.add_argument("nml", metavar="NML_DIR",
                   help="folder of the cube's WEBKNOSSOS .nml skeletons (read in name order), or one .nml file")
    p.add_argument("mask", metavar="MASK",
                   help="the cube's reference fiber mask: .npy, .tif or zarr (non-zero = fiber; a float mask holds "
                        "only 0 and 1), or a fiber target's packed mask.npz")
    p.add_argument("--out", required=True, metavar="TARGET_DIR",
                   help="the target folder to write (new or empty; see --force)")
    p.add_argument("--origin", nargs=3, type=nonnegative_int, metavar=("Z", "Y", "X"),
                   help="the cube's origin in absolute scroll voxels (default: from the file names, "
                        "<scroll>_<z>_<y>_<x>_<size>.nml)")
    p.add_argument("--tolerance", type=number(float, lo=0, hi=64), default=2.0, metavar="N",
                   help="scoring tolerance in voxels written to meta.json (default 2, ScrollGT's)")
    p.add_argument("--shape", nargs=3, type=positive_int, metavar=("Z", "Y", "X"),
                   help="the cube's shape; the mask must have it (default: the mask's shape)")
    p.add_argument("--force", action="store_true", help="replace TARGET_DIR when it already holds files")
    add_output_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    """Write the target folder ``--out``; returns its summary."""
    from segscore.commands._options import write_outputs
    from segscore.fibers.build import build_target

    result = build_target(args.nml, args.mask, args.out, origin=args.origin, tolerance=args.tolerance,
                          shape=args.shape, force=args.force)
    write_outputs(args, result)
    return result


def text(result: dict) -> str:
    """The result as ``segscore fibers-target`` prints it."""
    from segscore.fibers.build import format_summary

    return format_summary(result)
