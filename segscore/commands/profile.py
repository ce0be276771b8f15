"""``profile``: which error types a method makes, as non-negative shares of the five operators
calibrated on the reference (curvicost's ``profile``)."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_output_options, length_px, nonnegative_int, number, positive_int

    p.add_argument("predictions", nargs="*", metavar="PRED",
                   help="predicted binary masks of ONE method (2D or 3D PNG, TIFF, NIfTI or .npy), each of the "
                        "reference's shape")
    p.add_argument("--gt", "--reference", required=True, dest="gt", metavar="GT",
                   help="the reference binary mask the operators are calibrated on")
    p.add_argument("--prune-px", type=length_px, default=5, metavar="N",
                   help="spur-pruning length in voxels (default 5; ~2-3 vessel radii)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="first seed of the calibration draws (default 0)")
    p.add_argument("--seeds", type=number(int, lo=1, hi=1000), default=3, metavar="N",
                   help="realisations of each operator averaged into its basis signature (default 3)")
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help="threads for the calibration realisations (default 1: the operators hold the GIL "
                        "most of the time, and two threads measured no faster on two cores)")
    add_output_options(p, json_path="predictions")
    p.add_argument("--quiet", action="store_true",
                   help="no text report (--json alone still prints the JSON; --json FILE.json and --json-out write)")


def compute(args, *, progress=None, argv=None) -> dict:
    """The profile ``--json`` prints (writes ``--json-out`` and ``--json FILE.json``; prints
    nothing). ``progress``: called with one line before the calibration starts."""
    from segscore.commands._options import settle_json, write_outputs
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.profiling import prepare_profile, profile
    from segscore.errors import ScoreError
    from segscore.io.readers import input_name

    settle_json(args)
    if not args.predictions:
        raise ScoreError("no prediction: give the predicted masks, e.g. `segscore profile PRED1.png PRED2.png --gt "
                         "GT.png`")
    gt_name = input_name(args.gt, "reference mask")
    gt, _ = load_mask(args.gt, what="reference mask")
    preds, names = [], []
    for i, path in enumerate(args.predictions):  # every file is read and checked before the calibration starts
        name = input_name(path, f"prediction {i}") if len(args.predictions) > 1 else input_name(path, "prediction")
        m, _ = load_mask(path, what="prediction mask")
        if m.shape != gt.shape:
            raise ScoreError(f"{name}: shape {m.shape} differs from the reference {gt_name}'s {gt.shape}; "
                             "resample one onto the other's grid")
        preds.append(m)
        names.append(name)
    if not gt.any():
        raise ScoreError(f"{gt_name}: the reference mask is empty; a profile needs a reference with foreground "
                         "(the operators act on it)")
    if progress is not None:
        progress(f"segscore profile: calibrating the five operators on {gt_name} ...")
    ref = prepare_profile(gt, prune_px=args.prune_px, seed=args.seed, seeds=args.seeds, threads=args.threads,
                          name=gt_name)
    result = profile(None, preds, names=names, reference=ref)
    write_outputs(args, result)
    return result
