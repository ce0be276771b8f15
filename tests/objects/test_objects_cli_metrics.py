"""`segscore objects` with --surface, --spacing, --nsd-tolerance, --per-object and
--count-background: the same numbers as the API, refusals in one line."""

import csv
import json

import numpy as np
import pytest

from segscore.objects import score_segmentation
from tests.objects.helpers import synthetic_pair


@pytest.fixture
def pair(tmp_path):
    t, p = synthetic_pair(shape=(64, 72), n=10, seed=3)
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    return tmp_path / "t.npy", tmp_path / "p.npy", t, p


def test_flags_give_the_api_numbers_and_the_per_object_table(cli, pair, tmp_path):
    tp, pp, t, p = pair
    code, out, err = cli("objects", tp, pp, "--surface", "--spacing", "0.5", "2", "--nsd-tolerance", "1.5",
                         "--count-background", "--per-object", tmp_path / "rows.csv", "--json")
    assert code == 0, err
    got = json.loads(out)
    want = score_segmentation(t, p, surface=True, spacing=(0.5, 2.0), nsd_tolerance=1.5, count_background=True)
    assert got == json.loads(json.dumps(want))
    assert "per_object" not in got and got["spacing"] == [0.5, 2.0] and got["count_background"] is True
    with open(tmp_path / "rows.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["truth_id", "pred_id", "voxels_truth", "voxels_pred", "volume_truth", "iou", "dice",
                             "hd95", "assd", "split", "merged", "reason"]
    assert len({r["truth_id"] for r in rows if r["truth_id"]}) == got["n_truth"]
    code, out, _ = cli("objects", tp, pp, "--surface")
    assert code == 0 and "whole foreground: hd " in out and "panoptic quality" in out


def test_the_default_scorecard_has_no_surface_keys(cli, pair):
    tp, pp, _, _ = pair
    code, out, _ = cli("objects", tp, pp, "--json")
    got = json.loads(out)
    assert code == 0 and "hd95_pixel" not in got and got["pq"] is not None and got["count_background"] is False


@pytest.mark.parametrize("args,words", [(("--spacing", "1", "1", "1"), "3 numbers for a 2D image"),
                                        (("--spacing", "0", "1"), "--spacing"),
                                        (("--spacing", "nan", "1"), "--spacing"),
                                        (("--nsd-tolerance", "-1"), "--nsd-tolerance")])
def test_bad_spacing_and_tolerance_are_one_line(cli, pair, args, words):
    tp, pp, _, _ = pair
    code, out, err = cli("objects", tp, pp, "--surface", *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err
