"""``perturb``: apply one typed, graded error operator to a binary curvilinear mask."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import length_px, nonnegative_int, number  # noqa: E402

#: ``segscore perturb MASK --operator OP --severity S -o OUT``; ``segscore.api.perturb(mask, ...)``
INPUTS = ("mask",)
OPTIONS = (
    Option("mask", metavar="MASK", role="mask", arrays=True,
           help="the reference binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy"),
    Option("operator", ("--operator",), required=True, choices=("break", "bridge", "truncate", "radius", "boundary"),
           help="the error type"),
    Option("severity", ("--severity",), required=True, type=number(float, lo=0, hi=1e3), metavar="S",
           help="fraction of the eligible population (break, bridge, truncate), radius scale factor (radius; 1.0 "
                "redraws the reference a radius arm is scored against), fraction of foreground voxels (boundary)"),
    Option("seed", ("--seed",), type=nonnegative_int, default=0, help="seed of the random draws (default 0)"),
    Option("prune_px", ("--prune-px",), type=length_px, default=5, metavar="N",
           help="spur-pruning length in voxels (default 5)"),
    Option("output", ("-o", "--output"), required=True, metavar="OUT",
           help="where to write the perturbed mask (.png, .tif, .nii.gz or .npy)"),
    Option("json_out", ("--json-out", "--info-json"), metavar="FILE",
           help="write what the operator did (counts, voxels) as JSON (--info-json: the older name)"),
    Option("json", ("--json",), kind="flag", where="cli", help="print the info as JSON"),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """Write the perturbed mask to ``output`` (and ``json_out``); returns the info dict."""
    from segscore.curvilinear.masks import load_mask, save_mask
    from segscore.curvilinear.operators import perturb
    from segscore.io.readers import input_name
    from segscore.io.results import with_warnings, write_json

    mask, vox = load_mask(o["mask"], what="mask")
    out, info = perturb(mask, o["operator"], o["severity"], seed=o["seed"], prune_px=o["prune_px"],
                        name=input_name(o["mask"], "mask"))
    save_mask(out, o["output"], voxel_size=vox)
    info = {"input": input_name(o["mask"], "mask"), "output": str(o["output"]), **info}
    info.setdefault("notes", {})
    with_warnings(info)
    if o["json_out"]:
        write_json(o["json_out"], info)
    return info


def text(info: dict) -> str:
    """The info as ``segscore perturb`` prints it: what was applied, where it went, its counts."""
    said = ("input", "output", "operator", "severity", "seed", "prune_px", "notes", "warnings")
    extras = ", ".join(f"{k} {v}" for k, v in info.items() if k not in said)
    seed = f" (seed {info['seed']})" if "seed" in info else ""  # the operators that draw say their seed
    lines = [f"{info['operator']} at {info['severity']:g}{seed} -> {info['output']}: {extras}"]
    lines += [f"note: {k} is null: {why}" for k, why in info.get("notes", {}).items()]
    return "\n".join(lines)
