"""``objects``: the object scorecard of one predicted label image against its truth."""

from __future__ import annotations


def add_arguments(p) -> None:
    from segscore.commands._options import add_engine_options, add_output_options, number, share

    p.add_argument("truth", help="the truth label image (TIFF, PNG, .npy, NIfTI or zarr: PATH.zarr or "
                   "PATH.zarr/KEY; 2D or 3D; 0 = background); read tile by tile")
    p.add_argument("prediction", help="the predicted label image, same shape")
    p.add_argument("--iou", type=share, default=0.5, help="IoU at which precision, recall, F1, Dice and areas "
                   "are matched (default 0.5)")
    p.add_argument("--tolerances", type=number(int, lo=0, hi=1000), nargs="+", default=[1, 2, 3], metavar="PX",
                   help="boundary tolerances in pixels (default 1 2 3)")
    p.add_argument("--minimum-overlap", type=share, default=0.1,
                   help="share of a truth object that counts toward a split or merge (default 0.1)")
    add_output_options(p)
    add_engine_options(p)


def compute(args, *, progress=None, argv=None) -> dict:
    from segscore.commands._options import write_outputs
    from segscore.objects.metrics import score_segmentation

    result = score_segmentation(args.truth, args.prediction, threshold=args.iou,
                                boundary_tolerances=tuple(args.tolerances), minimum_overlap=args.minimum_overlap,
                                tile_rows=args.tile_rows, threads=args.threads, progress=progress)
    write_outputs(args, result)
    return result
