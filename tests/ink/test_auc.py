"""The AUC, its bootstrap and the paired compare against brute-force oracles and scikit-learn."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from segscore.errors import ScoreError
from segscore.ink import auc
from segscore.ink.quantize import quantize_values

from tests.ink.helpers import segment, write_levels


def pairwise(ink, bg):
    a = np.asarray(ink, np.float64)[:, None]
    b = np.asarray(bg, np.float64)[None, :]
    return ((a > b).sum() + 0.5 * (a == b).sum()) / (a.size * b.size)


# --------------------------------------------------------------------- auc_scores


def test_auc_scores_equals_the_pairwise_definition_with_many_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.integers(0, 6, int(rng.integers(1, 40))).astype(np.uint8)
        b = rng.integers(0, 6, int(rng.integers(1, 40))).astype(np.uint8)
        assert auc.auc_scores(a, b) == pytest.approx(pairwise(a, b), abs=1e-15)


def test_auc_scores_quantizes_floats_together_and_matches_sklearn():
    rng = np.random.default_rng(1)
    a = rng.normal(0.6, 0.2, 5000).clip(0, 1)
    b = rng.normal(0.4, 0.2, 20000).clip(0, 1)
    levels, _ = quantize_values(np.concatenate([a, b]))
    y = np.r_[np.ones(a.size), np.zeros(b.size)]
    assert auc.auc_scores(a, b) == pytest.approx(roc_auc_score(y, levels), abs=1e-12)


def test_auc_scores_empty_class_is_none_and_nan_refused():
    assert auc.auc_scores([], [1, 2]) is None
    assert auc.auc_scores(np.array([1], np.int64), np.array([], np.int64)) is None
    with pytest.raises(ScoreError, match="NaN or infinite"):
        auc.auc_scores([0.1, np.nan], [0.2])


def test_auc_scores_takes_int64_levels_as_they_are():
    a = np.array([5, 9, 9], np.int64)
    b = np.array([1, 9], np.int64)
    assert auc.auc_scores(a, b) == pytest.approx(pairwise(a, b))


# --------------------------------------------------------------------- score_array


def oracle_card(pred, ink, mask, keep_zero=False, inner=0):
    h, w = pred.shape
    region = np.zeros_like(mask)
    region[inner:h - inner, inner:w - inner] = True
    m = mask & region
    zero = pred == 0
    use = m & (keep_zero | ~zero)
    lev, _ = quantize_values(pred)
    lev = lev.reshape(pred.shape)
    a = pairwise(lev[use & ink], lev[use & ~ink]) if (use & ink).any() and (use & ~ink).any() else None
    return {"auc": None if a is None else round(a, 4), "ink_px": int((use & ink).sum()),
            "background_px": int((use & ~ink).sum()), "zero_px_in_mask": int((m & zero).sum()),
            "zero_px_counted": keep_zero, "inner": inner}


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("keep_zero,inner", [(False, 0), (True, 0), (False, 5)])
def test_score_array_matches_the_pairwise_oracle(dtype, keep_zero, inner):
    pred, ink, mask = segment((40, 50), seed=2, dtype=dtype)
    got = auc.score_array(pred, ink, mask, keep_zero=keep_zero, inner=inner)
    assert got.pop("notes") == {}  # the result contract: always present, empty when the AUC exists
    assert got.pop("warnings") == []
    assert got == oracle_card(pred, ink, mask, keep_zero, inner)


def test_score_array_matches_sklearn_on_a_larger_map():
    rng = np.random.default_rng(4)
    ink = rng.random((300, 400)) < 0.3
    mask = rng.random((300, 400)) < 0.9
    pred = (rng.integers(0, 65535, (300, 400)) * (0.7 + 0.3 * ink)).astype(np.uint16)
    got = auc.score_array(pred, ink, mask)
    use = mask & (pred != 0)
    assert got["auc"] == round(roc_auc_score(ink[use], pred[use]), 4)


def test_score_array_refusals():
    pred, ink, mask = segment((20, 30))
    with pytest.raises(ScoreError, match=r"inner 10 leaves nothing of a \(20, 30\) map"):
        auc.score_array(pred, ink, mask, inner=10)
    bad = pred.astype(np.float32)
    bad[3, 3] = np.nan
    with pytest.raises(ScoreError, match="holds 1 NaN or infinite values"):
        auc.score_array(bad, ink, mask)
    with pytest.raises(ScoreError, match="expected a 2D map"):
        auc.score_array(np.zeros((2, 20, 30)), ink, mask)


def test_score_array_with_one_class_has_a_null_auc():
    pred, ink, mask = segment((20, 30))
    got = auc.score_array(pred, np.zeros_like(ink), mask)
    assert got["auc"] is None and got["ink_px"] == 0 and got["background_px"] > 0


def test_score_array_accepts_dask_arrays():
    da = pytest.importorskip("dask.array")
    pred, ink, mask = segment((64, 90), seed=6)
    want = auc.score_array(pred, ink, mask)
    got = auc.score_array(da.from_array(pred, chunks=(17, 90)), da.from_array(ink, chunks=(17, 90)),
                          da.from_array(mask, chunks=(17, 90)))
    assert got == want


# --------------------------------------------------------------------- tiles never change a result


@pytest.mark.parametrize("tile_rows", [1, 7, None, 10_000])
def test_score_files_does_not_depend_on_the_tiles(tmp_path, tile_rows):
    pred, ink, mask = segment((45, 61), seed=8, dtype=np.float32)
    rev = np.random.default_rng(9).random(pred.shape).astype(np.float32)
    np.save(tmp_path / "map.npy", pred)
    np.save(tmp_path / "rev.npy", rev)
    labels = write_levels(tmp_path / "ink.zarr", {"2": ink.astype(np.uint8)}, chunks=(8, 16))
    sup = write_levels(tmp_path / "sup.zarr", {"2": mask.astype(np.uint8)}, chunks=(8, 16))
    got = auc.score_files(tmp_path / "map.npy", labels, sup, control=tmp_path / "rev.npy", bootstrap=40,
                          block_px=9, compare=tmp_path / "rev.npy", tile_rows=tile_rows, workers=2)
    base = auc.score_files(tmp_path / "map.npy", labels, sup, control=tmp_path / "rev.npy", bootstrap=40,
                           block_px=9, compare=tmp_path / "rev.npy", tile_rows=45, executor="synchronous")
    assert got == base
    assert got["forward"] == oracle_card(pred, ink, mask)


# --------------------------------------------------------------------- bootstrap


def pixel_bootstrap(pred, ink, mask, draws, block_px, seed, other=None, keep_zero=False):
    """Per-pixel oracle: replicate each drawn block's pixels and count pairs on 1,024 bins."""
    def bins(m):
        lev, q = quantize_values(m)
        return lev.reshape(m.shape) * 1023 // q.top

    use = mask & (keep_zero | (pred != 0))
    if other is not None:
        use &= keep_zero | (other != 0)
    h, w = pred.shape
    by, bx = np.mgrid[0:h, 0:w]
    block = (by // block_px) * (-(-w // block_px)) + bx // block_px
    present = np.unique(block[use])
    B = present.size
    slot = np.full(block.max() + 1, -1)
    slot[present] = np.arange(B)
    s = slot[block]
    rng = np.random.default_rng(seed)
    maps = [bins(pred)] + ([bins(other)] if other is not None else [])
    out = [[] for _ in maps]
    for _ in range(draws):
        counts = np.bincount(rng.integers(0, B, B), minlength=B)
        weight = np.where(use, counts[np.maximum(s, 0)], 0)
        for k, b in enumerate(maps):
            wi = np.bincount(b[ink].ravel(), weights=weight[ink].ravel(), minlength=1024)
            wb = np.bincount(b[~ink].ravel(), weights=weight[~ink].ravel(), minlength=1024)
            below = np.cumsum(wb) - wb
            out[k].append(((wi * below).sum() + 0.5 * (wi * wb).sum()) / (wi.sum() * wb.sum()))
    return B, [np.array(o) for o in out]


@pytest.mark.parametrize("dtype,block_px", [(np.uint8, 7), (np.float32, 10), (np.uint8, 1)])
def test_bootstrap_equals_the_per_pixel_oracle(dtype, block_px):
    pred, ink, mask = segment((33, 41), seed=11, dtype=dtype)
    got = auc.block_bootstrap(pred, ink, mask, draws=25, block_px=block_px, seed=3)
    B, (draws,) = pixel_bootstrap(pred, ink, mask, 25, block_px, 3)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    assert got["blocks"] == B
    assert got["ci95"] == [round(lo, 4), round(hi, 4)]
    assert got["half_width"] == round((hi - lo) / 2, 4)
    assert (got["draws"], got["block_px"], got["seed"]) == (25, block_px, 3)


def test_paired_compare_equals_the_per_pixel_oracle():
    pred, ink, mask = segment((36, 47), seed=12, dtype=np.uint8)
    other = np.random.default_rng(13).integers(0, 256, pred.shape).astype(np.uint8)
    got = auc.block_bootstrap(pred, ink, mask, draws=30, block_px=8, seed=5, other=other)
    B, (dm, do) = pixel_bootstrap(pred, ink, mask, 30, 8, 5, other=other)
    diff = dm - do
    c = got["compare"]
    assert got["blocks"] == B
    assert c["ci95"] == [round(v, 4) for v in np.percentile(diff, [2.5, 97.5])]
    assert c["share_draws_map_not_ahead"] == round(float(np.mean(diff <= 0)), 4)
    shared = mask & (pred != 0) & (other != 0)
    assert c["pixels"] == int(shared.sum())
    b1 = (pred.astype(np.int64) * 1023 // 255)
    b2 = (other.astype(np.int64) * 1023 // 255)
    a1 = pairwise(b1[shared & ink], b1[shared & ~ink])
    a2 = pairwise(b2[shared & ink], b2[shared & ~ink])
    assert (c["auc_map"], c["auc_other"], c["difference"]) == (round(a1, 4), round(a2, 4), round(a1 - a2, 4))
    # the map's own interval is over the same shared pixels and draws
    assert got["ci95"] == [round(v, 4) for v in np.percentile(dm, [2.5, 97.5])]


def test_same_seed_same_interval_other_seed_other_interval():
    pred, ink, mask = segment((40, 40), seed=14)
    a = auc.block_bootstrap(pred, ink, mask, draws=50, block_px=5, seed=1)
    b = auc.block_bootstrap(pred, ink, mask, draws=50, block_px=5, seed=1)
    c = auc.block_bootstrap(pred, ink, mask, draws=50, block_px=5, seed=2)
    assert a == b and a["ci95"] != c["ci95"]


def test_bootstrap_refusals():
    pred, ink, mask = segment((20, 30))
    with pytest.raises(ScoreError, match="use at least 20 bootstrap draws"):
        auc.block_bootstrap(pred, ink, mask, draws=19)
    with pytest.raises(ScoreError, match="block size must be at least 1 px"):
        auc.block_bootstrap(pred, ink, mask, block_px=0)
    with pytest.raises(ScoreError, match="compared map shape"):
        auc.block_bootstrap(pred, ink, mask, other=pred[:10])
    with pytest.raises(ScoreError, match="no supervised pixels to resample"):
        auc.block_bootstrap(pred, ink, np.zeros_like(mask))
    with pytest.raises(ScoreError, match="the mask holds only one class"):
        auc.block_bootstrap(pred, np.zeros_like(ink), mask)


# --------------------------------------------------------------------- labels on another grid


def test_label_grid_is_kit_nearest_neighbour_of_pixel_centres():
    rows, cols = auc.label_grid((5820, 8020), (5980, 8240), None, (5980, 8240))
    assert rows[0] == 0 and rows[-1] == 5819 and cols[-1] == 8019
    y = np.arange(5980)
    np.testing.assert_array_equal(rows, np.minimum(((y + 0.5) * 5820 / 5980).astype(int), 5819))
    r2, c2 = auc.label_grid((5820, 8020), (5980, 8240), (100, 300, 50, 90), (200, 40))
    np.testing.assert_array_equal(r2, rows[100:300])
    np.testing.assert_array_equal(c2, cols[50:90])


def test_label_grid_refusals():
    with pytest.raises(ScoreError, match=r"differ in scale between axes \(0\.5000 vs 0\.6000\)"):
        auc.label_grid((50, 60), (100, 100), None, (100, 100))
    with pytest.raises(ScoreError, match=r"crop \[0, 200, 0, 10\] is outside the 100 x 100 surface"):
        auc.label_grid((50, 50), (100, 100), (0, 200, 0, 10), (200, 10))
    with pytest.raises(ScoreError, match=r"map shape \(5, 5\) does not match the window 10 x 10"):
        auc.label_grid((50, 50), (100, 100), (0, 10, 0, 10), (5, 5))
    # 0.4 % apart is one grid
    auc.label_grid((996, 1000), (1000, 1000), None, (1000, 1000))


def test_labels_on_map_and_a_crop_line_up_with_the_full_map(tmp_path):
    rng = np.random.default_rng(15)
    lab = (rng.random((97, 130)) < 0.3).astype(np.uint8)
    sup = (rng.random((97, 130)) < 0.8).astype(np.uint8)
    L = write_levels(tmp_path / "l.zarr", {"0": np.zeros((1, 1), np.uint8), "2": lab}, chunks=(16, 32))
    M = write_levels(tmp_path / "m.zarr", {"2": sup}, zarr_format=2)
    full_ink, full_sup = auc.labels_on_map(L, M, "2", None, None, (100, 134))
    rows, cols = auc.label_grid(lab.shape, (100, 134), None, (100, 134))
    np.testing.assert_array_equal(full_ink, lab[np.ix_(rows, cols)] > 0)
    ink, sup_ = auc.labels_on_map(L, M, 2, (100, 134), (10, 60, 20, 100), (50, 80))
    np.testing.assert_array_equal(ink, full_ink[10:60, 20:100])
    np.testing.assert_array_equal(sup_, full_sup[10:60, 20:100])
    pred = rng.integers(1, 256, (100, 134)).astype(np.uint8)
    np.save(tmp_path / "full.npy", pred)
    np.save(tmp_path / "crop.npy", pred[10:60, 20:100])
    crop = auc.score_files(tmp_path / "crop.npy", L, M, crop=[10, 60, 20, 100], surface_shape=[100, 134])
    want = auc.score_array(pred[10:60, 20:100], ink, sup_)
    assert want.pop("notes") == crop["notes"] == {}  # score_files lifts the card's notes to the top
    assert want.pop("warnings") == crop["warnings"] == []  # and keeps the warnings at the top
    assert crop["forward"] == want and crop["crop"] == [10, 60, 20, 100]


def test_a_map_that_reads_ink_beats_its_reverse(tmp_path):
    from segscore.ink.demo import make_sample

    p = make_sample(tmp_path, shape=(120, 160), seed=1)
    r = auc.score_files(p["prediction"], p["labels"], p["mask"], control=p["control"])
    assert r["forward"]["auc"] > r["control"]["auc"] + 0.1
    assert abs(r["control"]["auc"] - 0.5) < 0.1
    assert r["forward"]["zero_px_in_mask"] > 0 and not r["forward"]["zero_px_counted"]
    text = auc.format_result(r)
    assert text.splitlines()[0].startswith("map    : AUC ")
    assert "unpredicted px in the mask left out" in text
    assert "map minus control: +" in text


def test_a_distributed_client_gives_the_same_result():
    distributed = pytest.importorskip("distributed")
    from segscore import warm

    warm("ink")
    pred, ink, mask = segment((50, 64), seed=30)
    want = auc.block_bootstrap(pred, ink, mask, draws=20, block_px=6, tile_rows=9)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        got = auc.block_bootstrap(pred, ink, mask, draws=20, block_px=6, tile_rows=9, executor=client)
    assert got == want
