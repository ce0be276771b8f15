"""``placement``: where prediction and label agree best (NCC over shifts), per tile too."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import engine_options, length_px, nonnegative_int, number, output_options  # noqa: E402

#: ``segscore placement PRED TRUTH``; ``segscore.api.placement(truth, pred)``
INPUTS = ("truth", "pred")
#: what ``Result.plot()`` says: the figure of a probe is its evidence picture
NO_FIGURE = "; evidence=OUT.png writes the evidence picture"
OPTIONS = (
    Option("pred", metavar="PRED", role="pred", arrays=True,
           help="probability map over the target region (8-bit PNG, .npy, TIFF, zarr)"),
    Option("truth", metavar="TRUTH", role="truth",
           help="the ink target folder holding gt_ink.png, optional mask.png, and meta.json"),
    Option("radius", ("--radius",), type=nonnegative_int, default=512,
           help="largest shift searched, in pixels (default 512)"),
    Option("gate", ("--gate",), type=length_px,
           help="pass when the peak is within this many pixels of zero shift (default: the target's gate in "
                "meta.json, else 48)"),
    Option("tile_radius", ("--tile-radius",), type=nonnegative_int, default=192,
           help="largest shift searched per 768 px tile (default 192)"),
    Option("origin", ("--origin",), nargs=2, type=nonnegative_int, metavar=("Y", "X"),
           help="level-2 coordinate of the prediction's pixel (0, 0), as for `segscore target`"),
    Option("evidence", ("--evidence",), metavar="OUT.png",
           help="write the alignment evidence picture (prediction, label outline, agreement map)"),
    Option("threshold", ("--threshold",), type=number(float, lo=0, hi=1), default=0.5,
           help="binarise the prediction at p >= this for the agreement map (default 0.5)"),
    *output_options(),
    *engine_options(tile_rows=False, threads_help="FFT threads (default: the CPUs available)"),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.ink import placement

    result = placement._probe_target(o["pred"], o["truth"], origin=o["origin"], radius=o["radius"],
                                     gate_px=o["gate"], tile_radius=o["tile_radius"], evidence=o["evidence"],
                                     evidence_threshold=o["threshold"], threads=o["threads"])
    write_outputs(o, result)
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
