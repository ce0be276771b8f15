"""``perturb``: apply one typed, graded error operator to a binary curvilinear mask."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import length_px, nonnegative_int, number

    p.add_argument("mask", help="the reference binary mask: 2D or 3D PNG, TIFF, NIfTI or .npy")
    p.add_argument("--operator", required=True, choices=("break", "bridge", "truncate", "radius", "boundary"),
                   help="the error type")
    p.add_argument("--severity", required=True, type=number(float, lo=0, hi=1e3), metavar="S",
                   help="fraction of the eligible population (break, bridge, truncate), radius scale factor "
                        "(radius; 1.0 redraws the reference a radius arm is scored against), fraction of "
                        "foreground voxels (boundary)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the random draws (default 0)")
    p.add_argument("--prune-px", type=length_px, default=5, metavar="N", help="spur-pruning length in voxels (default 5)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="where to write the perturbed mask (.png, .tif, .nii.gz or .npy)")
    p.add_argument("--json-out", "--info-json", dest="json_out", metavar="FILE",
                   help="write what the operator did (counts, voxels) as JSON (--info-json: the older name)")
    p.add_argument("--json", action="store_true", help="print the info as JSON")


def compute(args, *, progress=None, argv=None) -> dict:
    """Write the perturbed mask to ``--output`` (and ``--json-out``); returns the info dict."""
    from segscore.curvilinear.masks import load_mask, save_mask
    from segscore.curvilinear.operators import perturb
    from segscore.io.results import with_warnings, write_json

    from segscore.io.readers import input_name

    mask, vox = load_mask(args.mask, what="mask")
    out, info = perturb(mask, args.operator, args.severity, seed=args.seed, prune_px=args.prune_px,
                        name=input_name(args.mask, "mask"))
    save_mask(out, args.output, voxel_size=vox)
    info = {"input": input_name(args.mask, "mask"), "output": str(args.output), **info}
    info.setdefault("notes", {})
    with_warnings(info)
    if args.json_out:
        write_json(args.json_out, info)
    return info


def text(info: dict) -> str:
    """The info as ``segscore perturb`` prints it: what was applied, where it went, its counts."""
    said = ("input", "output", "operator", "severity", "seed", "prune_px", "notes", "warnings")
    extras = ", ".join(f"{k} {v}" for k, v in info.items() if k not in said)
    seed = f" (seed {info['seed']})" if "seed" in info else ""  # the operators that draw say their seed
    lines = [f"{info['operator']} at {info['severity']:g}{seed} -> {info['output']}: {extras}"]
    lines += [f"note: {k} is null: {why}" for k, why in info.get("notes", {}).items()]
    return "\n".join(lines)
