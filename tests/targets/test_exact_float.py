"""Float maps ranked exactly: equal to ScrollGT's own score_prediction and to scikit-learn (1e-12).

``tests/data/scrollgt/score_prediction.json`` holds ScrollGT's answers on the maps of
``tests/targets/float_cases.py`` (made by ``benchmarks/scrollgt_fixtures.py`` in ScrollGT's scratch
venv); every map is rebuilt here and its digest checked, so the fixture and the test score the
same bits. Each case is also scored by scikit-learn directly, on the clipped float64 values.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from segscore.ink.cards import THRESHOLDS
from segscore.ink.targets import load_target, score_map, score_target
from tests.targets import float_cases as FC
from tests.targets.helpers import make_target

sk = pytest.importorskip("sklearn.metrics")

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "data" / "scrollgt" / "score_prediction.json")
                     .read_text())
CARD_KEYS = ("val_f1", "best_threshold", "f1_at_0.5", "val_f05", "precision", "recall", "pred_positive_rate",
             "average_precision", "ap_prevalence_lift", "roc_auc", "positive_rate")
TOL = 1e-12


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("exact")
    folder, ink, mask = make_target(d / "t", shape=FC.SHAPE, seed=FC.TARGET_SEED)
    return {"dir": d, "target": folder, "ink": ink, "mask": mask}


def same_card(ours: dict, theirs: dict, what: str):
    for k in CARD_KEYS:
        assert ours[k] == pytest.approx(theirs[k], abs=TOL, rel=0), f"{what}: {k} {ours[k]!r} vs {theirs[k]!r}"
    assert ours["n_pixels"] == theirs["n_pixels"]


@pytest.mark.parametrize("name", FC.CASES)
def test_equal_to_scrollgt_score_prediction(small, name):
    want = FIXTURE["cases"][name]
    pred = FC.case(name, small["ink"])
    assert FC.digest(pred) == want["digest"], "the case's map is not the one the fixture scored"
    np.save(small["dir"] / f"{name}.npy", pred)
    r = score_target(small["dir"] / f"{name}.npy", small["target"], floors=name == "uniform_floor")
    same_card(r["metrics"], want["metrics"], name)
    assert r["metrics"]["quantized"] is False
    if name == "uniform_floor":  # the floor is ScrollGT's card of default_rng(0).random(shape)
        same_card(r["floors"]["uniform_random"], want["metrics"], "floors.uniform_random")


def sklearn_card(p, y):
    """The card's metrics by scikit-learn on float64 scores (the thresholds as ``p >= t``)."""
    f1 = [sk.f1_score(y, p >= t, zero_division=0) for t in THRESHOLDS]
    i = int(np.argmax(f1))
    prec, rec, thr = sk.precision_recall_curve(y, p)
    f_any = np.divide(2 * prec * rec, prec + rec, out=np.zeros_like(prec), where=(prec + rec) > 0)[:-1]
    j = int(np.flatnonzero(f_any == f_any.max())[0])  # thresholds increase: the lowest best
    return {"val_f1": f1[i], "best_threshold": THRESHOLDS[i],
            "precision": sk.precision_score(y, p >= THRESHOLDS[i], zero_division=0),
            "recall": sk.recall_score(y, p >= THRESHOLDS[i]),
            "f1_at_0.5": sk.f1_score(y, p >= 0.5, zero_division=0),
            "val_f05": max(sk.fbeta_score(y, p >= t, beta=0.5, zero_division=0) for t in THRESHOLDS),
            "average_precision": sk.average_precision_score(y, p), "roc_auc": sk.roc_auc_score(y, p),
            "best_f1_any_threshold": f_any[j], "best_threshold_any": thr[j]}


@pytest.mark.parametrize("name", FC.CASES)
def test_equal_to_sklearn(small, name):
    pred = FC.case(name, small["ink"])
    card = score_map(pred, small["ink"], small["mask"])
    sel = small["mask"]
    p = np.clip(pred.astype(np.float64), 0.0, 1.0)[sel]
    want = sklearn_card(p, small["ink"][sel])
    for k, v in want.items():
        assert card[k] == pytest.approx(v, abs=TOL, rel=0), f"{name}: {k}"


def test_narrow_map_was_one_level_and_is_now_ranked(small):
    """The issue's case: 65,536 levels put the whole narrow map on one or two levels."""
    pred = FC.case("narrow", small["ink"])
    levels = np.unique(np.rint(pred * 65535))
    assert levels.size <= 2
    card = score_map(pred, small["ink"], small["mask"])
    assert card["roc_auc"] > 0.8 and card["ap_prevalence_lift"] > 2


def test_tiles_threads_and_budget_never_change_the_card(small, monkeypatch):
    import segscore.metrics.exact as E

    pred = FC.case("skewed", small["ink"])
    ref = score_map(pred, small["ink"], small["mask"], threads=1)
    seen = []
    real = E.rank_exact

    def tiny_budget(*a, **k):
        k["budget_px"] = 37
        ex = real(*a, **k)
        seen.append(ex)
        return ex

    monkeypatch.setattr(E, "rank_exact", tiny_budget)
    for rows in (1, 7, 13):
        got = score_map(pred, small["ink"], small["mask"], tile_rows=rows, threads=2)
        assert got["roc_auc"] == ref["roc_auc"] and got["val_f1"] == ref["val_f1"]
        assert got["best_f1_any_threshold"] == ref["best_f1_any_threshold"]
        assert got["best_threshold_any"] == ref["best_threshold_any"]
        assert got["average_precision"] == pytest.approx(ref["average_precision"], abs=1e-15, rel=0)
    ex = seen[-1]
    assert ex.passes > 10 and ex.split_regions > 0 and 0 < ex.max_pass_px <= 37


def test_slack_is_clipped_and_beyond_it_refused(small):
    from segscore.errors import ScoreError

    pred = FC.case("slack", small["ink"])
    assert pred.min() == -1e-6 and pred.max() == 1 + 1e-6
    card = score_map(pred, small["ink"], small["mask"])
    clipped = score_map(np.clip(pred, 0, 1), small["ink"], small["mask"])
    assert card == clipped
    bad = pred.copy()
    bad[0, 0] = -2e-6
    with pytest.raises(ScoreError, match="outside"):
        score_map(bad, small["ink"], small["mask"])
    bad[0, 0] = np.nan
    with pytest.raises(ScoreError, match="NaN"):
        score_map(bad, small["ink"], small["mask"])


def test_curves_of_a_float_map_hold_every_distinct_value(small):
    pred = FC.case("tied", small["ink"])
    np.save(small["dir"] / "tied_curves.npy", pred)
    result, curves = score_target(small["dir"] / "tied_curves.npy", small["target"], return_curves=True)
    sel = small["mask"]
    y, p = small["ink"][sel], pred[sel]
    _, tpr, thr = sk.roc_curve(y, p, drop_intermediate=False)
    c = curves["prediction"]
    np.testing.assert_array_equal(c["roc_thresholds"][1:], thr[1:])
    np.testing.assert_allclose(c["tpr"], tpr, atol=1e-15)
    assert float(np.trapezoid(c["tpr"], c["fpr"])) == pytest.approx(result["metrics"]["roc_auc"], abs=1e-12)
    u = curves["floors"]["uniform_random"]
    assert float(np.trapezoid(u["tpr"], u["fpr"])) == pytest.approx(
        result["floors"]["uniform_random"]["roc_auc"], abs=1e-12)


@pytest.mark.slow
def test_real_target_equal_to_scrollgt(shared_data, tmp_path):
    d = shared_data / "scrollgt" / "scroll1_20231210121321"
    if not d.exists():
        pytest.skip("scrollgt scoring target absent")
    ink = (load_target(d).codes & 1).astype(bool)
    for name, pred in FC.real_cases(ink).items():
        want = FIXTURE["cases"][name]
        assert FC.digest(pred) == want["digest"]
        np.save(tmp_path / f"{name}.npy", pred)
        del pred
        r = score_target(tmp_path / f"{name}.npy", d, floors=False)
        same_card(r["metrics"], want["metrics"], name)


def test_floors_beside_the_prediction_are_the_floors_after_it(small, monkeypatch):
    """score_target ranks the floors on their own thread while the prediction is scored; with one
    thread (or the synchronous executor) they run after it: the result is the same, and an error
    of the prediction is the one raised (the floors' thread is joined first)."""
    import segscore.ink.targets as T
    from segscore.errors import ScoreError

    pred = FC.case("skewed", small["ink"])
    path = small["dir"] / "beside.npy"
    np.save(path, pred)
    runs = {k: score_target(path, small["target"], **kw)
            for k, kw in (("beside", {}), ("one thread", {"threads": 1}), ("synchronous", {"executor": "synchronous"}))}
    assert runs["beside"]["floors"] == runs["one thread"]["floors"] == runs["synchronous"]["floors"]
    assert runs["beside"]["metrics"] == runs["one thread"]["metrics"]
    started = []
    real = T._Background.__init__

    def spy(self, fn, *, now=True):
        started.append(now)
        real(self, fn, now=now)

    monkeypatch.setattr(T._Background, "__init__", spy)
    bad = pred.copy()
    bad[3, 3] = np.nan
    np.save(path, bad)
    with pytest.raises(ScoreError, match="NaN"):
        score_target(path, small["target"])
    with pytest.raises(ScoreError, match="no such file"):
        score_target(small["dir"] / "missing.png", small["target"])
    from segscore.engine.executor import default_workers

    assert started == [default_workers() > 1] * 2  # beside it wherever there are two threads
