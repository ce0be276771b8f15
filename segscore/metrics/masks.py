"""What families do to masks before they score them, once for all: the ignore region, and instances
from a binary or semantic mask by connected components.

- **Ignore** (:func:`ignore_region`, :func:`zero_ignored`): the voxels where the truth equals
  ``ignore_label`` -- or, when an ``ignore_mask`` is given, where that mask is true *instead*
  (topometrics' priority) -- are set to background (0) in both the prediction and the truth before
  anything else. ``surfaces`` ignores label 2 by default (the competition's); ``objects`` and
  ``curve`` ignore nothing unless asked.
- **Components** (:func:`components`): a binary or semantic mask as instance labels: the
  connected components of each class value (6, 18 or 26 in 3D; 4 or 8 in 2D), so two touching
  regions of different classes are different instances. Labels are numbered class by class (in
  increasing class value), within a class in C order of each component's first voxel (as
  ``scipy.ndimage.label`` numbers them). The labeller is :func:`segscore.kernels.components.label_components`.
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError

#: the connectivities by dimension, and the kernel's rank (unit steps along different axes) of each
CONNECTIVITIES = {2: {4: 1, 8: 2}, 3: {6: 1, 18: 2, 26: 3}}


class MaskOptionError(ScoreError):
    """An ignore mask or a connectivity that does not fit the images."""


def ignore_region(truth, *, ignore_label=None, ignore_mask=None, mask_name: str = "ignore mask",
                  error=MaskOptionError):
    """The voxels to ignore as a bool array, or None when there are none (no option given, or the
    label is absent). ``ignore_mask`` (any array, true = ignore) wins over ``ignore_label``; its
    shape must be the truth's, else ``error`` naming ``mask_name``."""
    shape = np.shape(truth)
    if ignore_mask is not None:
        m = np.asarray(ignore_mask)
        if m.shape != shape:
            raise error(f"{mask_name}: shape {m.shape} differs from the truth's {shape}; "
                        "give the ignore mask on the truth's grid")
        if m.dtype.kind == "f":
            return np.isfinite(m) & (m != 0)  # NaN is not "ignore"
        return m.astype(bool)
    if ignore_label is None:
        return None
    m = np.asarray(truth) == ignore_label
    return m if m.any() else None


def zero_ignored(x, region):
    """``x`` with the voxels of ``region`` set to 0 (a copy; ``x`` itself when ``region`` is None)."""
    if region is None:
        return x
    a = np.array(x, copy=True)
    a[region] = 0
    return a


def ignored_warning(n: int, ignore_label, ignore_mask) -> list[str]:
    """The warning line for ``n`` ignored voxels (none when ``n`` is 0)."""
    if not n:
        return []
    what = "the ignore mask" if ignore_mask is not None else f"labels == {ignore_label}"
    return [f"{n} voxels ignored ({what}): background in both images"]


def swapped_ignore_warning(truth, pred, ignore_label, *, truth_name: str, pred_name: str, order: str) -> list[str]:
    """One warning line when the prediction holds ``ignore_label`` and the truth holds none of it:
    the ignore value is a label of the truth, so the two look swapped (``order`` says which the
    command takes as the truth, e.g. "`segscore objects TRUTH PRED` takes the truth first"). None
    when no label is given, or the truth holds it."""
    if ignore_label is None or np.any(np.asarray(truth) == ignore_label) or \
            not np.any(np.asarray(pred) == ignore_label):
        return []
    def role(what, name):  # an array is named by its role ("<reference mask>", "truth"): no name twice
        return f"the {what}" if name.startswith("<") or name == what else f"the {what} {name}"

    return [f"{role('prediction', pred_name)} holds the ignore label {ignore_label} and {role('truth', truth_name)} "
            f"none (so nothing is ignored): the roles look swapped; {order}"]


def check_connectivity(connectivity, ndim: int, error=MaskOptionError, what: str = "components") -> int:
    """The kernel's rank of ``connectivity`` for ``ndim``-D images, or ``error`` saying which fit."""
    allowed = CONNECTIVITIES.get(ndim)
    if allowed is None or connectivity not in allowed:
        fits = " or ".join(map(str, allowed)) if allowed else "a 2D or 3D image"
        raise error(f"{what} {connectivity!r}: a connectivity that does not fit a {ndim}D image; give {fits}")
    return allowed[connectivity]


def components(mask, connectivity: int) -> np.ndarray:
    """Instance labels (int32, int64 beyond 2**31 voxels; 0 = background) of a binary or semantic
    mask: the connected components of each non-zero value (see the module docstring for the
    numbering).

    ``mask``: a 2D or 3D array of non-negative integers or bools (any layout). Memory beyond the
    mask: the labels (4 bytes per voxel) and the labeller's scratch (4 bytes per foreground voxel);
    a binary integer mask adds 1 byte per voxel; a semantic one 8 bytes per voxel while its classes
    and their bounding boxes are found, then per class a bool mask and an int32 labelling of the
    class's bounding box.
    """
    from scipy import ndimage

    from segscore.kernels.components import label_components

    a = np.asarray(mask)
    rank = check_connectivity(connectivity, a.ndim)
    vol = a[None] if a.ndim == 2 else a
    big = vol.size >= 2 ** 31
    out = np.zeros(vol.shape, np.int64 if big else np.int32)
    whole = tuple(slice(0, n) for n in vol.shape)
    if a.dtype == np.bool_:
        values, boxes = [True], [whole]
    else:
        if vol.dtype.kind not in "iu":
            raise MaskOptionError(f"components: the mask holds {vol.dtype} values; give integer class values")
        if a.size and vol.min() < 0:
            raise MaskOptionError("components: the mask holds negative values; give class values >= 0")
        values = np.unique(vol)
        values = values[values != 0]
        if values.size == 1:  # a binary mask: no boxes to find
            boxes = [whole]
        elif values.size:  # the classes' bounding boxes: find_objects on the compacted class indices
            index = np.searchsorted(values, vol) + 1
            index[vol == 0] = 0
            boxes = ndimage.find_objects(index)
            del index
        else:
            boxes = []
    n = 0
    for v, box in zip(values, boxes):
        if box is None:
            continue
        sub = vol[box] if a.dtype == np.bool_ else (vol[box] == v)
        sub = np.ascontiguousarray(sub).view(np.uint8)
        count = int(np.count_nonzero(sub))
        parent = np.empty(count + 1, np.int64 if count >= 2 ** 31 - 1 else np.int32)
        if len(values) == 1:  # the whole volume: straight into the output
            n = label_components(sub, out, parent, rank)
            continue
        lab = np.zeros(sub.shape, out.dtype)
        m = label_components(sub, lab, parent, rank)
        if m:
            on = lab != 0
            out[box][on] = lab[on] + n
            n += m
    return out[0] if a.ndim == 2 else out
