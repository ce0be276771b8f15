"""Parity with stardist on real masks: connected components of FIVES vessel references."""

import numpy as np
import pytest


def components(mask, connectivity=2):
    from scipy import ndimage as ndi

    labels, _ = ndi.label(mask, structure=ndi.generate_binary_structure(2, connectivity))
    return labels


def test_fives_components_against_stardist(shared_data):
    matching = pytest.importorskip("stardist.matching").matching
    from scipy import ndimage as ndi

    from segscore.io.readers import read_image
    from segscore.objects import score_segmentation

    files = sorted((shared_data / "fives").glob("*.png"))
    if not files:
        pytest.skip("no FIVES masks under shared data")
    vessels = read_image(files[0]) > 127
    truth = components(vessels)
    # a plausible prediction: thinner vessels (erosion splits thin ones), shifted a pixel, relabelled
    pred = components(np.roll(ndi.binary_erosion(vessels), 1, axis=1), connectivity=1)
    rng = np.random.default_rng(0)
    perm = np.r_[0, rng.permutation(pred.max()) + 1] * 3 + 0
    pred = perm[pred]
    thresholds = [0.1, 0.3] + [round(0.5 + 0.05 * k, 2) for k in range(9)]
    ref = matching(truth, pred, thresh=thresholds)
    s = score_segmentation(truth, pred, iou_thresholds=thresholds)
    assert s["n_truth"] == ref[0].n_true and s["n_pred"] == ref[0].n_pred and s["n_pred"] > 20
    for thr, r in zip(thresholds, ref):
        tp = r.tp
        assert s[f"ap_{thr:g}"] == pytest.approx(tp / (r.n_true + r.n_pred - tp), abs=1e-15), thr
    assert s["true_positives"] == ref[thresholds.index(0.5)].tp
    assert s["iou_mean"] == pytest.approx(ref[thresholds.index(0.5)].mean_matched_score, rel=1e-6)
