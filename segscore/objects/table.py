"""Label-image validation and the contingency table every object metric derives from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segscore.errors import ScoreError


def read_labels(path, what: str = "label image"):
    """A label image from a file (TIFF, PNG, npy, zarr, ...) as an array, singleton axes dropped."""
    from segscore.io.readers import open_labels

    with open_labels(path, what=what, ndims=range(1, 33)) as source:
        return source.read_all()


def as_labels(image, what: str = "labels") -> np.ndarray:
    """``image`` as a non-negative integer label array, or a :class:`ScoreError` saying why not.

    bool becomes uint8; a float array is accepted only when every value is a whole,
    non-negative number (a label image saved as float); negative ids are refused.
    """
    arr = np.asarray(image)
    if not arr.dtype.isnative:  # a big-endian file read in its byte order: the kernels need native
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype == bool:
        return arr.view(np.uint8)
    kind = arr.dtype.kind
    if kind == "u":
        return arr
    if kind == "i":
        if arr.size and arr.min() < 0:
            raise ScoreError(f"{what}: holds negative ids (min {int(arr.min())}); "
                             "label images use 0 for background and positive integer ids")
        return arr
    if kind == "f":
        if arr.size and not np.all(np.isfinite(arr)):
            raise ScoreError(f"{what}: holds NaN or inf; a label image holds integer ids")
        if arr.size and (arr.min() < 0 or np.any(arr != np.floor(arr))):
            raise ScoreError(f"{what}: holds fractional or negative values; a label image "
                             "holds non-negative integer ids (is this a probability map?)")
        top = float(arr.max()) if arr.size else 0.0  # a Python float: no cast of 2**64 into a float16
        if top >= 2.0 ** 64:
            raise ScoreError(f"{what}: holds ids of {top:g}, beyond 64-bit integers; a label image "
                             "holds integer ids below 2**64")
        return arr.astype(np.uint64 if top >= 2.0 ** 63 else np.int64)
    raise ScoreError(f"{what}: holds {arr.dtype} values; a label image holds integer ids")


def check_pair(truth, pred, *, ndims=None):
    """Validated ``(truth, pred)`` label arrays of the same shape."""
    t = as_labels(truth, "truth")
    p = as_labels(pred, "prediction")
    if t.shape != p.shape:
        raise ScoreError(f"truth {t.shape} and prediction {p.shape} are different shapes; "
                         "score a prediction on the truth's own grid")
    if ndims is not None and t.ndim not in ndims:
        raise ScoreError(f"label images of shape {t.shape}: expected "
                         + " or ".join(f"{d}D" for d in ndims))
    return t, p


@dataclass(frozen=True)
class ContingencyTable:
    """Sparse overlap of two label images: ids, areas, and every overlapping pair.

    ``pair_t``/``pair_p`` index ``truth_ids``/``pred_ids``; ``pair_n`` is the number of
    pixels the pair shares. Ids are sorted ascending. Additive over tiles
    (:func:`segscore.kernels.contingency.merge_tables`).
    """

    truth_ids: np.ndarray
    truth_area: np.ndarray
    pred_ids: np.ndarray
    pred_area: np.ndarray
    pair_t: np.ndarray
    pair_p: np.ndarray
    pair_n: np.ndarray
    #: each id's first pixel (smallest flat index, C order): where the object is. Ties in the
    #: matching are broken by it, so relabelling an image changes nothing. None when unknown.
    truth_first: np.ndarray | None = None
    pred_first: np.ndarray | None = None
    #: pixels (voxels) in the image, background included; None when unknown
    n_pixels: int | None = None

    @property
    def n_truth(self) -> int:
        return int(self.truth_ids.size)

    @property
    def n_pred(self) -> int:
        return int(self.pred_ids.size)

    @property
    def iou(self) -> np.ndarray:
        """IoU of each overlapping pair, in pair order."""
        inter = self.pair_n.astype(np.float64)
        return inter / (self.truth_area[self.pair_t] + self.pred_area[self.pair_p] - self.pair_n)

    @property
    def foreground_overlap(self) -> int:
        """Pixels labelled in both images."""
        return int(self.pair_n.sum())


def contingency_table(truth, pred) -> ContingencyTable:
    """The :class:`ContingencyTable` of two label images of the same shape (any dimension)."""
    from segscore.kernels.contingency import contingency

    t, p = check_pair(truth, pred)
    return ContingencyTable(*contingency(t, p), n_pixels=int(t.size))


def table_for(truth, pred, table=None) -> ContingencyTable:
    return table if table is not None else contingency_table(truth, pred)
