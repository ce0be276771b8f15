"""``placement``: where prediction and label agree best (NCC over shifts), per tile too."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_engine_options, add_output_options, length_px, nonnegative_int, number

    p.add_argument("prediction", help="probability map over the target region (8-bit PNG, .npy, TIFF, zarr)")
    p.add_argument("target", help="ink target folder holding gt_ink.png, optional mask.png, and meta.json")
    p.add_argument("--radius", type=nonnegative_int, default=512, help="largest shift searched, in pixels (default 512)")
    p.add_argument("--gate", type=length_px, help="pass when the peak is within this many pixels of zero shift "
                                                  "(default: the target's gate in meta.json, else 48)")
    p.add_argument("--tile-radius", type=nonnegative_int, default=192,
                   help="largest shift searched per 768 px tile (default 192)")
    p.add_argument("--origin", nargs=2, type=nonnegative_int, metavar=("Y", "X"),
                   help="level-2 coordinate of the prediction's pixel (0, 0), as for `segscore target`")
    p.add_argument("--evidence", metavar="OUT.png",
                   help="write the alignment evidence picture (prediction, label outline, agreement map)")
    p.add_argument("--threshold", type=number(float, lo=0, hi=1), default=0.5,
                   help="binarise the prediction at p >= this for the agreement map (default 0.5)")
    add_output_options(p)
    add_engine_options(p, tile_rows=False, threads_help="FFT threads (default: the CPUs available)")


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.ink import placement

    result = placement.probe_target(args.prediction, args.target, origin=args.origin, radius=args.radius,
                                    gate_px=args.gate, tile_radius=args.tile_radius, evidence=args.evidence,
                                    evidence_threshold=args.threshold, threads=args.threads)
    write_outputs(args, result)
    return result


def headline(result: dict) -> list:
    """Placement probe (``segscore placement``): the peak's offset beside the gate it must be
    within, whether it passed, and the peak and zero-shift NCC."""
    from segscore.commands._headline import cell

    return [cell(result, "offset_px", "offset_px"), cell(result, "gate_px", "gate_px", "setting", "offset_px"),
            cell(result, "passed", "passed"), cell(result, "peak_ncc", "peak_ncc"),
            cell(result, "ncc_at_zero", "ncc_at_zero", "control", "peak_ncc", "zero shift")]


def text(result: dict) -> str:
    """The result as ``segscore placement`` prints it."""
    from segscore.ink import placement

    return placement.format_probe(result)
