"""``profile``: which error types a method makes, as non-negative shares of the five operators
calibrated on the reference (curvicost's ``profile``)."""

from __future__ import annotations


from segscore.commands._declare import Option  # noqa: E402
from segscore.commands._options import length_px, nonnegative_int, number, output_options, positive_int  # noqa: E402

#: ``segscore profile PRED... --gt TRUTH``; ``segscore.api.profile(truth, pred)``
INPUTS = ("truth", "pred")
OPTIONS = (
    Option("pred", nargs="*", metavar="PRED", role="pred", arrays=True,
           help="predicted binary masks of ONE method (2D or 3D PNG, TIFF, NIfTI or .npy), each of the reference's "
                "shape"),
    Option("truth", ("--gt", "--reference"), required=True, metavar="TRUTH", role="truth", arrays=True,
           help="the reference (truth) binary mask the operators are calibrated on"),
    Option("prune_px", ("--prune-px",), type=length_px, default=5, metavar="N",
           help="spur-pruning length in voxels (default 5; ~2-3 vessel radii)"),
    Option("seed", ("--seed",), type=nonnegative_int, default=0, help="first seed of the calibration draws (default 0)"),
    Option("seeds", ("--seeds",), type=number(int, lo=1, hi=1000), default=3, metavar="N",
           help="realisations of each operator averaged into its basis signature (default 3)"),
    Option("threads", ("--threads",), type=positive_int, metavar="N",
           help="threads for the calibration realisations (default 1: the operators hold the GIL most of the time, "
                "and two threads measured no faster on two cores)"),
    *output_options(json_path="pred"),
    Option("quiet", ("--quiet",), kind="flag", where="cli",
           help="no text report (--json alone still prints the JSON; --json FILE.json and --json-out write)"),
)


def compute(*, progress=None, recorded=None, figure=True, **o) -> dict:
    """The profile ``--json`` prints (writes ``json_out``; prints nothing). ``progress``: called
    with one line before the calibration starts."""
    from segscore.commands._options import write_outputs
    from segscore.curvilinear.masks import load_mask
    from segscore.curvilinear.profiling import prepare_profile, profile
    from segscore.errors import ScoreError
    from segscore.io.readers import input_name

    preds_given = o["pred"]
    if preds_given is not None and not isinstance(preds_given, (list, tuple)):
        preds_given = [preds_given]  # one prediction (the API's pred=ARRAY)
    if not preds_given:
        raise ScoreError("no prediction: give the predicted masks, e.g. `segscore profile PRED1.png PRED2.png --gt "
                         "GT.png`")
    gt_name = input_name(o["truth"], "reference mask")
    gt, _ = load_mask(o["truth"], what="reference mask")
    preds, names = [], []
    for i, path in enumerate(preds_given):  # every file is read and checked before the calibration starts
        name = input_name(path, f"prediction {i}") if len(preds_given) > 1 else input_name(path, "prediction")
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
    ref = prepare_profile(gt, prune_px=o["prune_px"], seed=o["seed"], seeds=o["seeds"], threads=o["threads"],
                          name=gt_name)
    result = profile(None, preds, names=names, reference=ref)
    write_outputs(o, result)
    return result
