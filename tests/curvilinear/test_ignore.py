"""``curve --ignore-label`` / ``--ignore-mask``: the row of the masks with the ignored voxels set to
background by hand, CLI = API, one-line refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segscore import api
from segscore.curvilinear.scoring import score
from segscore.errors import ScoreError
from tests.cli_checks import one_line_error
from tests.curvilinear.helpers import vessel_tree


def _case():
    gt = vessel_tree((48, 48), seed=3, depth=3, r0=2.0).astype(np.uint8)
    pred = gt.copy()
    pred[20:23, :] = 0  # a break
    pred[40:44, 2:6] = 1  # a speck
    labels = gt.copy()
    labels[30:46, 28:46] = np.where(gt[30:46, 28:46] != 0, 1, 2)  # an unlabelled corner: 2 off the vessels
    return labels, pred


def _row(x):
    return json.loads(json.dumps({k: v for k, v in dict(x).items() if k != "warnings"}))


def test_ignore_label_equals_the_masked_masks():
    labels, pred = _case()
    region = labels == 2
    pred[region & (np.arange(48)[None, :] % 3 == 0)] = 1  # false positives inside the ignored region
    got = api.curve(labels, pred, ignore_label=2, prune_px=3)
    want = score(np.where(region, 0, labels), np.where(region, 0, pred), prune_px=3, all_metrics=True)
    assert _row(got) == _row(want)
    assert f"{int(region.sum())} voxels ignored (labels == 2): background in both images" in got["warnings"]
    plain = score(labels != 0, pred != 0, prune_px=3, all_metrics=True)  # without ignoring: the 2s are vessels
    assert plain["dice"] != got["dice"]


def test_ignore_mask_wins_and_equals_the_masked_masks():
    labels, pred = _case()
    gt = (labels == 1).astype(np.uint8)
    m = np.zeros(gt.shape, np.uint8)
    m[:10] = 7
    want = score(np.where(m != 0, 0, gt), np.where(m != 0, 0, pred), prune_px=3, all_metrics=True)
    assert _row(api.curve(gt, pred, ignore_mask=m, prune_px=3)) == _row(want)
    assert _row(api.curve(gt, pred, ignore_mask=m, ignore_label=1, prune_px=3)) == _row(want)


def test_without_the_option_a_three_valued_reference_is_still_refused():
    labels, pred = _case()
    with pytest.raises(ScoreError, match="distinct values"):
        api.curve(labels, pred, prune_px=3)


def test_cli_equals_api_and_refusals(tmp_path, cli):
    labels, pred = _case()
    m = np.zeros(labels.shape, bool)
    m[:, :6] = True
    for name, a in (("g", labels), ("b", labels == 1), ("p", pred), ("m", m), ("small", m[:10])):
        np.save(tmp_path / f"{name}.npy", a)
    code, out, err = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "g.npy", "--prune-px", "3",
                         "--ignore-label", "2", "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(dict(api.curve(labels, pred, ignore_label=2, prune_px=3))))
    assert "warning: " in err and "ignored" in err
    code, out, err = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "b.npy", "--prune-px", "3",
                         "--ignore-mask", tmp_path / "m.npy", "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(dict(api.curve(labels == 1, pred, ignore_mask=m, prune_px=3))))
    for argv, names in (
            (["--ignore-mask", tmp_path / "small.npy"], ["small.npy", "shape"]),
            (["--ignore-label", "2", "--ignore-mask", tmp_path / "m.npy", "--json-out", tmp_path / "m.npy"], ["m.npy"]),
            (["--ignore-label", "2", "--ignore-mask", tmp_path / "absent.npy"], ["absent.npy"])):
        code, out, err = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "g.npy", *argv)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
        assert all(n in lines[0] for n in names), lines[0]
    assert np.array_equal(np.load(tmp_path / "m.npy"), m)


SWAPPED = "the roles look swapped; the truth is `--gt GT` in `segscore curve PRED --gt GT`"


def test_an_ignore_label_in_the_prediction_only_warns_that_the_roles_look_swapped(tmp_path, cli):
    """Issue 35 item 3: the ignore value is the truth's; a prediction holding it beside a truth holding
    none (the masks given the wrong way round) is scored (nothing is ignored) with a one-line warning,
    from the family code (curvilinear.scoring.apply_ignore), on the command line and in Python."""
    from segscore.curvilinear.scoring import apply_ignore

    labels, pred = _case()
    lone = np.where(labels == 1, 2, labels).astype(np.uint8)  # a truth whose vessels are 2s beside the ignored 2s
    gt, p, said = apply_ignore(pred, lone, ignore_label=2)  # swapped: 0/2 reads as a binary "prediction"
    assert said == [f"the prediction holds the ignore label 2 and the truth none (so nothing is ignored): {SWAPPED}"]
    assert not any(SWAPPED in w for w in apply_ignore(labels, pred, ignore_label=2)[2])
    assert not any(SWAPPED in w for w in apply_ignore(pred, lone, ignore_label=2, ignore_mask=lone == 9)[2])
    assert SWAPPED in " ".join(api.curve(pred, lone, ignore_label=2, prune_px=3)["warnings"])
    with pytest.raises(ScoreError, match=f"^the prediction holds the ignore label 2 and the truth none .*{SWAPPED}"):
        apply_ignore(pred, labels, ignore_label=2)  # 0/1/2 is no binary mask: the refusal says why
    np.save(tmp_path / "labels.npy", labels)
    np.save(tmp_path / "pred.npy", pred)
    code, out, err = cli("curve", tmp_path / "labels.npy", "--gt", tmp_path / "pred.npy", "--ignore-label", "2")
    one_line_error(code, out, err, f"the prediction {tmp_path / 'labels.npy'} holds the ignore label 2 and the truth "
                                   f"{tmp_path / 'pred.npy'} none (so nothing is ignored): {SWAPPED}")
