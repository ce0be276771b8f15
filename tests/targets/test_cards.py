"""The ink target card against scikit-learn, floors against their closed forms."""

import numpy as np
import pytest

from segscore.ink.cards import THRESHOLDS, card_from_histograms, constant_card, p_levels_for
from segscore.ink.targets import score_map, target_floors
from tests.targets.helpers import reading_map

sk = pytest.importorskip("sklearn.metrics")


def as_prob(pred):
    if pred.dtype == np.uint8:
        return pred.astype(np.float64) / 255.0
    if pred.dtype == np.uint16:
        return pred.astype(np.float64) / 65535.0
    return pred.astype(np.float64)


def oracle(prob, y):
    """ScrollGT's card, per pixel, with scikit-learn."""
    f1s = [sk.f1_score(y, prob >= t, zero_division=0) for t in THRESHOLDS]
    f05 = [sk.fbeta_score(y, prob >= t, beta=0.5, zero_division=0) for t in THRESHOLDS]
    i = int(np.argmax(f1s))
    t = THRESHOLDS[i]
    levels = np.unique(prob)  # every level as a threshold, counted with NumPy
    ink_sorted, all_sorted = np.sort(prob[y == 1]), np.sort(prob)
    tp = ink_sorted.size - np.searchsorted(ink_sorted, levels, side="left")
    pp = all_sorted.size - np.searchsorted(all_sorted, levels, side="left")
    any_f1 = float(np.max(2 * tp / (pp + ink_sorted.size)))
    return {"val_f1": f1s[i], "best_threshold": t, "f1_at_0.5": sk.f1_score(y, prob >= 0.5, zero_division=0),
            "val_f05": max(f05), "precision": sk.precision_score(y, prob >= t, zero_division=0),
            "recall": sk.recall_score(y, prob >= t), "pred_positive_rate": float(np.mean(prob >= t)),
            "average_precision": sk.average_precision_score(y, prob), "roc_auc": sk.roc_auc_score(y, prob),
            "positive_rate": float(np.mean(y)), "best_f1_any_threshold": any_f1,
            "ap_prevalence_lift": sk.average_precision_score(y, prob) / np.mean(y)}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_integer_maps_match_sklearn_to_1e9(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = (37, 53)
    ink = rng.random(shape) < rng.uniform(0.05, 0.5)
    mask = rng.random(shape) < 0.8
    pred = reading_map(ink, seed=seed + 10, dtype=dtype, signal=rng.uniform(0, 0.6))
    if dtype == np.uint8 and seed % 2:
        pred = (pred // 32 * 32).astype(np.uint8)  # heavy ties
    card = score_map(pred, ink, mask)
    want = oracle(as_prob(pred)[mask], ink[mask])
    for k, v in want.items():
        assert card[k] == pytest.approx(v, abs=1e-9), k
    assert card["n_pixels"] == int(mask.sum())
    assert card["quantized"] is False


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_maps_rank_exactly_as_sklearn_on_raw_floats(dtype):
    rng = np.random.default_rng(3)
    ink = rng.random((120, 90)) < 0.2
    pred = np.clip(rng.normal(0.4, 0.25, ink.shape) + 0.25 * ink, 0, 1).astype(dtype)
    card = score_map(pred, ink)
    y, p = ink.ravel(), pred.astype(np.float64).ravel()
    assert card["average_precision"] == pytest.approx(sk.average_precision_score(y, p), abs=1e-12)
    assert card["roc_auc"] == pytest.approx(sk.roc_auc_score(y, p), abs=1e-12)
    assert card["val_f1"] == pytest.approx(max(sk.f1_score(y, p >= t) for t in THRESHOLDS), abs=1e-12)
    assert card["quantized"] is False and "exactly" in card["scale"]


def test_float_map_on_exact_levels_matches_sklearn_exactly():
    rng = np.random.default_rng(5)
    ink = rng.random((64, 64)) < 0.3
    pred = rng.integers(0, 65536, ink.shape) / 65535.0
    card = score_map(pred, ink)
    want = oracle(pred.ravel(), ink.ravel())
    for k in ("average_precision", "roc_auc", "val_f1", "f1_at_0.5", "val_f05"):
        assert card[k] == pytest.approx(want[k], abs=1e-9), k


def test_histogram_card_against_brute_force_random():
    rng = np.random.default_rng(9)
    for _ in range(8):
        L = int(rng.integers(1, 40))
        p = np.sort(rng.choice(np.linspace(0, 1, 200), L, replace=False))
        ink = rng.integers(0, 5, L)
        bg = rng.integers(0, 5, L)
        if ink.sum() == 0 or bg.sum() == 0:
            continue
        prob = np.repeat(np.r_[p, p], np.r_[ink, bg])
        y = np.repeat(np.r_[np.ones(L), np.zeros(L)], np.r_[ink, bg])
        card = card_from_histograms(ink, bg, p)
        want = oracle(prob, y)
        for k, v in want.items():
            assert card[k] == pytest.approx(v, abs=1e-9), k


def test_degenerate_mask_gives_nulls_and_a_note():
    ink = np.ones((10, 10), bool)
    card = score_map(np.full((10, 10), 200, np.uint8), ink)
    assert card["roc_auc"] is None and card["val_f1"] is None and card["average_precision"] is None
    assert all("one class" in card["notes"][k] for k in ("roc_auc", "val_f1", "average_precision"))
    assert card["positive_rate"] == 1.0
    empty = score_map(np.zeros((4, 4), np.uint8), np.zeros((4, 4), bool), np.zeros((4, 4), bool))
    assert empty["positive_rate"] is None and empty["n_pixels"] == 0 and "positive_rate" in empty["notes"]


@pytest.mark.parametrize("pos,neg", [(1, 1), (18, 82), (1843, 8157), (5, 3)])
def test_constant_floors_closed_forms(pos, neg):
    p = pos / (pos + neg)
    for c in (1.0, 0.5):
        card = constant_card(pos, neg, c)
        assert card["roc_auc"] == 0.5
        assert card["ap_prevalence_lift"] == 1.0
        assert card["val_f1"] == pytest.approx(2 * p / (1 + p), rel=1e-12)
        assert card["average_precision"] == pytest.approx(p, rel=1e-15)


def test_floors_equal_scanning_the_constant_and_random_maps():
    rng = np.random.default_rng(2)
    ink = rng.random((70, 45)) < 0.3
    mask = rng.random(ink.shape) < 0.9
    codes = ink.view(np.uint8) | (mask.view(np.uint8) << 1)
    floors = target_floors(codes, seed=7, band_rows=11)
    same = ("val_f1", "best_threshold", "f1_at_0.5", "val_f05", "precision", "recall", "pred_positive_rate",
            "average_precision", "ap_prevalence_lift", "roc_auc", "positive_rate", "n_pixels")
    ones = score_map(np.ones(ink.shape), ink, mask)
    half = score_map(np.full(ink.shape, 0.5), ink, mask)
    rand = score_map(np.random.default_rng(7).random(ink.shape), ink, mask)
    for k in same:
        assert floors["all_positive"][k] == ones[k], k
        assert floors["constant_0_5"][k] == half[k], k
        assert floors["uniform_random"][k] == rand[k], k
    assert floors["uniform_random"]["seed"] == 7
    p = ink[mask].mean()
    assert floors["all_positive"]["val_f1"] == pytest.approx(2 * p / (1 + p))


def test_band_size_never_changes_the_card():
    rng = np.random.default_rng(4)
    ink = rng.random((53, 31)) < 0.2
    for dtype in (np.uint8, np.float32):
        pred = reading_map(ink, dtype=dtype)
        ref = score_map(pred, ink, band_rows=1000)
        for rows in (1, 7, 13):
            assert score_map(pred, ink, band_rows=rows, executor="synchronous") == ref
            assert score_map(pred, ink, band_rows=rows, workers=3) == ref


def test_p_levels():
    assert p_levels_for("uint8")[255] == 1.0 and p_levels_for("uint8").size == 256
    assert p_levels_for("float").size == 65536


def test_uniform_rows_are_the_full_array_call():
    from segscore.ink.targets import uniform_rows

    full = np.random.default_rng(11).random((29, 13))
    for r0, r1 in ((0, 29), (0, 1), (5, 9), (28, 29), (17, 17)):
        np.testing.assert_array_equal(uniform_rows(11, 13, r0, r1), full[r0:r1])


@pytest.mark.parametrize("masked", [False, True])
def test_uniform_presorted_is_the_sorted_floor(masked, monkeypatch):
    """The uniform floor's NumPy first pass: the scored pixels of the full-array draw as sorted
    ``key << 1 | class``, their threshold counts and the range of every drawn value, whatever the
    chunk of rows it draws at a time."""
    from segscore.ink import targets as T
    from segscore.ink.cards import EXACT_THRESHOLDS

    rng = np.random.default_rng(5)
    ink = rng.random((37, 23)) < 0.3
    mask = rng.random(ink.shape) < 0.7 if masked else np.ones(ink.shape, bool)
    codes = ink.view(np.uint8) | (mask.view(np.uint8) << 1)
    full = np.random.default_rng(9).random(ink.shape)
    want = np.sort((full[mask].view(np.uint64) << np.uint64(1)) | ink[mask].astype(np.uint64))
    thr = np.unique(EXACT_THRESHOLDS)
    j = np.searchsorted(thr, full[mask], side="right")
    tcount = [np.bincount(j[ink[mask] == c], minlength=thr.size + 1) for c in (False, True)]
    for chunk in (1, 23 * 5, 1 << 22):
        monkeypatch.setattr(T, "UNIFORM_CHUNK_PX", chunk)
        packed, tc, lo, hi = T.uniform_presorted(9, codes)
        np.testing.assert_array_equal(packed, want)
        np.testing.assert_array_equal(tc, tcount)
        assert (lo, hi) == (full.min(), full.max())
    empty = np.zeros((4, 0), np.uint8)
    packed, tc, lo, hi = T.uniform_presorted(9, empty)
    assert packed.size == 0 and tc.sum() == 0
    none = codes & 1  # nothing scored
    assert T.uniform_presorted(9, none)[0].size == 0
    monkeypatch.setattr("segscore.metrics.exact.DEFAULT_BUDGET_PX", 10)
    assert T.uniform_presorted(9, codes) is None  # over the budget: the passes rank it


@pytest.mark.parametrize("masked", [False, True])
def test_uniform_floor_is_the_same_early_or_not(masked):
    """The floors' card is the same to the bit whether the uniform floor's first pass is done in
    NumPy first (threads), placed by bands (``early=False``), read by small tiles or on dask, with
    one thread or four."""
    from segscore.ink.targets import _floors_and_histograms

    rng = np.random.default_rng(6)
    ink = rng.random((61, 47)) < 0.25
    mask = rng.random(ink.shape) < 0.85 if masked else np.ones(ink.shape, bool)
    codes = ink.view(np.uint8) | (mask.view(np.uint8) << 1)
    want, hists = _floors_and_histograms(codes, seed=3, engine={}, early=False, keep_rows=True)
    for engine, early in (({}, True), ({"threads": 1}, True), ({"threads": 4, "tile_rows": 5}, True),
                          ({"executor": "synchronous", "tile_rows": 1}, True), ({"executor": "dask", "tile_rows": 7}, True),
                          ({"tile_rows": 3}, False)):
        got, got_h = _floors_and_histograms(codes, seed=3, engine=engine, early=early, keep_rows=True)
        assert got == want, (engine, early)
        for a, b in zip(got_h["uniform_random"], hists["uniform_random"]):
            np.testing.assert_array_equal(a, b)
    assert want == target_floors(codes, seed=3)
    rand = score_map(np.random.default_rng(3).random(ink.shape), ink, mask)
    assert want["uniform_random"]["roc_auc"] == rand["roc_auc"]


def test_uniform_presorted_needs_no_numba():
    """The floor's NumPy first pass imports nothing of numba (so it runs while numba loads)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from segscore.ink.targets import uniform_presorted\n"
            "codes = np.full((64, 64), 2, np.uint8); codes[::3] |= 1\n"
            "assert uniform_presorted(0, codes)[1].sum() == 4096\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_warming_for_a_png_loads_the_floor_kernels_only():
    """For an 8-bit PNG prediction the warm-up loads the level kernels and the uniform floor's
    sweeps, not the float prediction's passes; for any other prediction every exact kernel."""
    import subprocess
    import sys

    code = ("from segscore.ink.targets import _prewarm\n"
            "import sys\n"
            "w = _prewarm(exact=sys.argv[1] == '1', floor=True)\n"
            "w.levels.wait(); w.join()\n"
            "from segscore.kernels import exactrank as K, levels as L\n"
            "print(*(len(f.signatures) > 0 for f in (L.class_histograms, K.sorted_buckets, K.collected_terms, "
            "K.first_pass, K.gather_codes)))\n")
    for exact, want in (("0", "True True True False False"), ("1", "True True True True True")):
        out = subprocess.run([sys.executable, "-c", code, exact], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == want, (exact, out.stdout, out.stderr)
