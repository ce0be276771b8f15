"""``--missing null|worst``: a model that misses more structures never looks better under ``worst``.

The set: n structures (one disc per field); model ``kK`` predicts each disc, eroded so that the
fields it predicts worst are the first ones, and predicts nothing on the first K fields (it
misses the K structures it would have done worst on). Under ``null`` those misses leave the mean
(and it *improves* as K grows: the bug MONAI shipped); under ``worst`` they count as the metric's
worst value and the mean never improves.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from segscore.batch.report import ReportError, report
from segscore.metrics import missing as M
from segscore.objects.metrics import score_segmentation

N = 5


def disc(shape=(40, 40), r=12, c=(20, 20)):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    return ((yy - c[0]) ** 2 + (xx - c[1]) ** 2 <= r * r).astype(np.uint8)


def predicted(i):
    """Field i's prediction: a disc shifted by 5 - i pixels (field 0 is the poorest, still matched)."""
    return disc(c=(20, 20 + (N - i)))


def rows_for(k, *, surface=False):
    """One batch row per field for the model missing the first k structures."""
    truth = disc()
    out = []
    for i in range(N):
        pred = np.zeros_like(truth) if i < k else predicted(i)
        res = score_segmentation(truth, pred, surface=surface)
        out.append({"id": f"k{k}-f{i}", "status": "scored", "job": "objects truth.tif pred.tif",
                    "tags": {"model": f"k{k}", "field": f"f{i}"}, "result": json.loads(json.dumps(res))})
    return out


@pytest.fixture(scope="module")
def board():
    rows = [r for k in range(N + 1) for r in rows_for(k)]
    return {p: report(rows, by=["model", "field"], missing=p) for p in M.POLICIES}


def means_of(rep, column):
    return {m["group"]: m for m in rep.means() if m["column"] == column}


def test_worst_never_improves_as_misses_grow_and_null_does(board):
    for column in ("dice_per_object", "precision"):
        m = means_of(board["worst"], column)
        null = [m[f"k{k}"]["null"] for k in range(N)]  # k = N: every value null under null
        worst = [m[f"k{k}"]["worst"] for k in range(N + 1)]
        assert all(b <= a for a, b in zip(worst, worst[1:])), (column, worst)
        assert worst[-1] == 0.0 and worst[0] == m["k0"]["null"]
        # null: missing more never looks worse, and with a Dice or IoU it looks better
        assert all(b >= a for a, b in zip(null, null[1:])), (column, null)
        if column != "precision":  # every predicted disc is matched: precision is 1 where it is defined
            assert all(b > a for a, b in zip(null, null[1:])), (column, null)
        assert m[f"k{N}"]["null"] is None and m[f"k{N}"]["n_null"] == N
        assert [m[f"k{k}"]["n_null"] for k in range(N + 1)] == list(range(N + 1))
        assert [m[f"k{k}"]["n_imputed"] for k in range(N + 1)] == list(range(N + 1))
    f1 = means_of(board["worst"], "f1")  # F1 of an empty prediction is 0 already: nothing to impute
    assert all(f1[g]["null"] == f1[g]["worst"] and f1[g]["n_imputed"] == 0 for g in f1)


def test_the_policy_picks_the_mean_and_both_are_printed_side_by_side(board):
    for p in M.POLICIES:
        for m in board[p].means():
            assert m["mean"] == m[p]
    text = board["worst"].to_markdown()
    assert "means by model (--missing worst; null: a null left out" in text
    assert "| model | column | n | left out (null) | imputed (worst) | mean (null) | mean (worst) |" in text
    d = board["worst"].to_dict()
    assert d["missing"] == "worst" and d["means"] == board["worst"].means()
    line = next(ln for ln in text.splitlines() if ln.startswith("| k2 | dice_per_object |"))
    m = means_of(board["worst"], "dice_per_object")["k2"]
    assert line == f"| k2 | dice_per_object | {N} | 2 | 2 | {m['null']:.4f} | {m['worst']:.4f} |"


def test_without_missing_the_report_is_unchanged(board):
    rows = [r for k in (0, 2) for r in rows_for(k)]
    plain = report(rows, by=["model", "field"])
    assert "missing" not in plain.to_dict() and "means" not in plain.to_dict()
    assert "means" not in plain.to_markdown() and plain.missing is None
    assert all("worst" not in r for r in plain.rows)


def test_no_case_left_out_prints_one_mean():
    rep = report(rows_for(0), by=["model", "field"], missing="worst")
    text = rep.to_markdown()
    assert "(--missing worst: no case left out)" in text and "mean (worst)" not in text


def test_both_empty_is_not_a_miss_and_is_never_imputed():
    empty = np.zeros((40, 40), np.uint8)
    res = score_segmentation(empty, empty)
    assert res["dice_per_object"] is None and res["precision"] is None and not M.is_miss(res)
    row = {"id": "e", "status": "scored", "job": "objects a b", "tags": {"model": "m", "field": "e"}, "result": res}
    hit = rows_for(0)[1]
    rep = report([row, dict(hit, tags={"model": "m", "field": "x"})], by=["model", "field"], missing="worst")
    for m in rep.means():
        if m["column"] in ("dice_per_object", "precision", "f1", "recall"):
            assert m["n_null"] == 1 and m["n_imputed"] == 0 and m["null"] == m["worst"], m


def test_the_reverse_miss_counts_too():
    truth = np.zeros((40, 40), np.uint8)
    res = score_segmentation(truth, disc())
    assert M.emptiness(res) == (True, False) and M.is_miss(res)
    assert res["recall"] is None
    rep = report([{"id": "r", "status": "scored", "job": "objects a b", "tags": {"model": "m"}, "result": res}],
                 missing="worst")
    m = {x["column"]: x for x in rep.means()}
    assert m["recall"]["worst"] == 0.0 and m["recall"]["null"] is None
    assert m["dice_per_object"]["worst"] == 0.0


def test_hd95_counts_a_miss_as_the_image_diagonal_in_physical_units():
    truth = disc()
    res = score_segmentation(truth, np.zeros_like(truth), surface=True, spacing=(2.0, 0.5))
    assert res["shape"] == [40, 40] and res["spacing"] == [2.0, 0.5] and res["hd95_per_object"] is None
    v, n, why = M.per_object_worst("hd95_per_object", res)
    assert v == pytest.approx(np.hypot(80.0, 20.0)) and n == 1 and why is None
    hit = score_segmentation(truth, predicted(3), surface=True, spacing=(2.0, 0.5))
    assert M.per_object_worst("hd95_per_object", hit) == (hit["hd95_per_object"], 0, None)


def test_voi_is_never_imputed_and_the_output_says_so():
    assert M.worst_of("voi_total").startswith("none: not imputable")
    assert M.worst_of("voi_split").startswith("none: not imputable")
    value, why = M.worst_number("voi_total", {"n_truth": 1, "n_pred": 0})
    assert value is None and "not imputable" in why
    # a surfaces-like result with a miss and a null VOI: it stays left out, and the report says why
    res = {"voi_total": None, "surface_dice": None, "foreground_gt": 10, "foreground_pred": 0, "shape": [4, 4, 4],
           "notes": {"voi_total": "x", "surface_dice": "y"}}
    rows = [{"id": "a", "status": "scored", "job": "surfaces p t", "tags": {"model": "m"}, "result": res}]
    rep = report(rows, missing="worst")
    m = {x["column"]: x for x in rep.means()}
    assert m["voi_total"]["worst"] is None and m["voi_total"]["n_imputed"] == 0
    assert any("not imputable" in w for w in m["voi_total"]["not_imputable"])
    assert m["surface_dice"]["worst"] == 0.0
    assert "not imputed under worst (left out):" in rep.to_markdown()


def test_a_bad_policy_is_refused():
    with pytest.raises(ReportError, match="--missing 'foo': give one of null, worst"):
        report(rows_for(0), missing="foo")


def test_cli_missing_worst_and_a_bad_value_exits_2(tmp_path):
    rows = [r for k in (0, 3) for r in rows_for(k)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cmd = [sys.executable, "-m", "segscore", "report", str(tmp_path), "--by", "model,field"]
    bad = subprocess.run(cmd + ["--missing", "foo"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "--missing" in bad.stderr and "invalid choice" in bad.stderr
    plain = subprocess.run(cmd, capture_output=True, text=True)
    assert plain.returncode == 0 and "means" not in plain.stdout
    got = subprocess.run(cmd + ["--missing", "worst", "--json"], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    d = json.loads(got.stdout)
    m = {(x["group"], x["column"]): x for x in d["means"]}
    assert m[("k3", "dice_per_object")]["worst"] < m[("k0", "dice_per_object")]["worst"]
    assert m[("k3", "dice_per_object")]["null"] > m[("k0", "dice_per_object")]["null"]
    assert m[("k3", "dice_per_object")]["mean"] == m[("k3", "dice_per_object")]["worst"]


def test_per_object_worst_is_the_pooled_ratio_and_never_reads_a_missing_mean_as_zero():
    card = {"true_positives": 3, "false_negatives": 1, "false_positives": 1, "dice_per_object": 0.8,
            "ap_prevalence_lift": None}
    value, n, why = M.per_object_worst("dice_per_object", card)
    assert (value, n, why) == (pytest.approx((0.8 * 3 + 0.0 * 2) / 5), 2, None)
    assert M.worst_sum("dice_per_object", card) == (pytest.approx(2.4), 5)
    card["dice_per_object"] = None  # matched pairs whose mean is absent: null with a reason, not 0
    value, n, why = M.per_object_worst("dice_per_object", card)
    assert value is None and n == 0 and "no mean" in why
    assert M.worst_sum("dice_per_object", card) is None
    assert M.worst_of("ap_prevalence_lift") is None and M.worst_of("ap_0.5") == 0.0
