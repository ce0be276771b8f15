"""Swaps the objects family can see (issue 35 item 3), each a one-line warning from the family code
(so the command line and the Python functions alike): the ignore label held by the prediction and
not by the truth, and binary masks given as instances."""

from __future__ import annotations

import numpy as np
import tifffile

from segscore import api
from segscore.objects.metrics import score_segmentation

SWAPPED = "the roles look swapped; `segscore objects TRUTH PRED` takes the truth first"
BINARY = "hold only the value 1, in several separate regions each: binary masks, scored as one object each; " \
         "for instances by connected components pass --components N"


def _blobs():
    t = np.zeros((40, 40), np.uint8)
    t[2:9, 2:9] = t[20:30, 20:30] = t[2:8, 30:38] = 1
    p = t.copy()
    p[20:30, 20:24] = 0
    return t, p


def test_an_ignore_label_in_the_prediction_only_warns_that_the_roles_look_swapped():
    t, p = _blobs()
    labelled = np.where(t > 0, 3, 0).astype(np.uint8)
    truth = labelled.copy()
    truth[30:, :5] = 255  # the truth's ignore region
    pred = labelled.copy()
    said = score_segmentation(pred, truth, ignore_label=255)["warnings"]  # swapped
    assert [w for w in said if SWAPPED in w] == [
        f"the prediction holds the ignore label 255 and the truth none (so nothing is ignored): {SWAPPED}"]
    right = score_segmentation(truth, pred, ignore_label=255)["warnings"]
    assert not any(SWAPPED in w for w in right) and any("voxels ignored" in w for w in right)


def test_binary_masks_given_as_instances_get_the_components_hint(tmp_path, cli):
    t, p = _blobs()
    said = score_segmentation(t, p)["warnings"]
    assert [w for w in said if BINARY in w] and len(said) == 1
    assert not [w for w in score_segmentation(t, p, components=8)["warnings"] if BINARY in w]
    tifffile.imwrite(tmp_path / "t.tif", t)
    tifffile.imwrite(tmp_path / "p.tif", p)
    code, out, err = cli("objects", tmp_path / "t.tif", tmp_path / "p.tif")
    assert code == 0 and f"{tmp_path / 't.tif'} and {tmp_path / 'p.tif'} {BINARY}" in err, err
    assert BINARY in " ".join(api.objects(t, p)["warnings"])


def test_the_hint_does_not_fire_on_instance_images_with_one_object():
    """The rule: both images hold no label but 1 AND the 1-region of each is in two or more
    fully connected parts; one real object per image (even a differently shaped one) is silent,
    and so is a binary pair where only one image is in pieces."""
    one = np.zeros((40, 40), np.uint8)
    one[5:20, 5:20] = 1
    other = np.zeros((40, 40), np.uint8)
    other[8:25, 3:18] = 1
    assert not score_segmentation(one, other)["warnings"]
    t, _ = _blobs()
    assert not score_segmentation(t, one)["warnings"]  # the prediction is one object
    many = np.where(t > 0, np.arange(40)[None, :] // 10 + 1, 0).astype(np.uint8)  # real instances
    assert not score_segmentation(many, many)["warnings"]
    diagonal = np.zeros((10, 10), np.uint8)
    diagonal[2, 2] = diagonal[3, 3] = 1  # touching at a corner: one part, fully connected
    assert not score_segmentation(diagonal, diagonal)["warnings"]
