"""``objects --components`` (instances from binary or semantic masks) and ``--ignore-label`` /
``--ignore-mask``: against scipy.ndimage.label and the scorecard of the arrays prepared by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import ndimage

from segscore import api
from segscore.errors import ScoreError
from segscore.metrics.masks import components
from segscore.objects.metrics import score_segmentation

#: connectivity -> (ndim, scipy's generate_binary_structure connectivity)
CONN = {4: (2, 1), 8: (2, 2), 6: (3, 1), 18: (3, 2), 26: (3, 3)}


def oracle(mask, connectivity):
    """Instances by scipy: each non-zero class value in increasing order, its components numbered
    by scipy.ndimage.label, offset by the count so far."""
    ndim, rank = CONN[connectivity]
    st = ndimage.generate_binary_structure(ndim, rank)
    out = np.zeros(mask.shape, np.int64)
    n = 0
    for v in np.unique(mask):
        if v == 0:
            continue
        lab, m = ndimage.label(mask == v, structure=st)
        out[lab > 0] = lab[lab > 0] + n
        n += m
    return out


def _shape(rng, ndim):
    return tuple(int(v) for v in rng.integers(1, 14 if ndim == 3 else 40, ndim))


def _masks(rng, shape, classes):
    """Blobby masks (a smoothed noise field cut into classes) so components have some size."""
    f = ndimage.uniform_filter(rng.random(shape), 3)
    if classes == 1:
        return (f > np.quantile(f, 0.55 if len(shape) == 2 else 0.8)).astype(np.uint8)
    return np.digitize(f, np.quantile(f, np.linspace(0.4 if len(shape) == 2 else 0.7, 1, classes + 1)[:-1])).astype(np.uint16)


def _same(a, b):
    a = {k: v for k, v in dict(a).items() if k != "warnings"}
    b = {k: v for k, v in dict(b).items() if k != "warnings"}
    assert json.loads(json.dumps(a)) == json.loads(json.dumps(b))


@pytest.mark.parametrize("connectivity", sorted(CONN))
@pytest.mark.parametrize("seed", range(6))
def test_components_kernel_route_equals_scipy_labels(connectivity, seed):
    rng = np.random.default_rng(seed)
    ndim = CONN[connectivity][0]
    shape = _shape(rng, ndim)
    m = _masks(rng, shape, 1 + seed % 3)
    if seed == 0:
        m[:] = 0  # empty
    got = components(m, connectivity)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, oracle(m, connectivity))
    np.testing.assert_array_equal(components(m.astype(bool), connectivity), oracle(m != 0, connectivity))
    view = m[::-1, ::2]  # non-contiguous
    np.testing.assert_array_equal(components(view, connectivity), oracle(view, connectivity))


@pytest.mark.parametrize("connectivity", sorted(CONN))
@pytest.mark.parametrize("classes", [1, 3])
def test_objects_components_equal_the_scorecard_of_scipy_labels(connectivity, classes):
    rng = np.random.default_rng(10 * connectivity + classes)
    ndim = CONN[connectivity][0]
    shape = (24, 30) if ndim == 2 else (10, 12, 14)
    t = _masks(rng, shape, classes)
    p = _masks(rng, shape, classes)
    p[: shape[0] // 3] = t[: shape[0] // 3]  # part of it right
    got = score_segmentation(t, p, components=connectivity)
    want = score_segmentation(oracle(t, connectivity), oracle(p, connectivity))
    _same(got, want)
    assert want["true_positives"] > 0 and want["false_positives"] + want["false_negatives"] > 0
    assert f"{connectivity}-connected" in got["warnings"][-1]


def test_semantic_classes_that_touch_are_different_instances():
    t = np.zeros((6, 10), np.uint8)
    t[1:5, 1:5] = 1
    t[1:5, 5:9] = 2  # touches class 1
    got = score_segmentation(t, t, components=4)
    assert got["true_positives"] == 2 and got["false_positives"] == 0
    binary = score_segmentation(t != 0, t != 0, components=4)
    assert binary["true_positives"] == 1


def test_connectivity_changes_the_instances():
    t = np.zeros((5, 5), np.uint8)
    t[1, 1] = t[2, 2] = t[3, 3] = 1  # diagonal: three 4-connected objects, one 8-connected
    assert score_segmentation(t, t, components=4)["true_positives"] == 3
    assert score_segmentation(t, t, components=8)["true_positives"] == 1


def _ignored(t, p, region):
    return np.where(region, 0, t), np.where(region, 0, p)


def test_ignore_label_and_mask_equal_scoring_the_masked_arrays():
    rng = np.random.default_rng(5)
    t = rng.integers(0, 6, (30, 40)).astype(np.uint16)
    t = ndimage.maximum_filter(t, 3)  # blobs of ids 0..5
    p = np.roll(t, 1, axis=1)
    _same(score_segmentation(t, p, ignore_label=5), score_segmentation(*_ignored(t, p, t == 5)))
    region = np.zeros(t.shape, bool)
    region[:, :13] = True
    _same(score_segmentation(t, p, ignore_mask=region.astype(np.uint8)), score_segmentation(*_ignored(t, p, region)))
    # the mask wins over the label
    _same(score_segmentation(t, p, ignore_label=5, ignore_mask=region), score_segmentation(*_ignored(t, p, region)))
    got = score_segmentation(t, p, ignore_label=5)
    assert got["warnings"] == [f"{int((t == 5).sum())} voxels ignored (labels == 5): background in both images"]
    assert score_segmentation(t, p)["warnings"] == []  # the default ignores nothing


def test_ignore_happens_before_the_components():
    t = np.zeros((4, 9), np.uint8)
    t[1:3, 1:8] = 1
    t[1:3, 4] = 2  # an ignore strip cuts the object in two
    p = (t != 0).astype(np.uint8)
    got = score_segmentation(t, p, ignore_label=2, components=4)
    assert got["true_positives"] == 2 and got["false_positives"] == 0


@pytest.mark.parametrize("tile_rows", [1, 3, 7])
def test_tile_rows_change_nothing(tile_rows, tmp_path):
    rng = np.random.default_rng(9)
    t = _masks(rng, (9, 12, 13), 3)
    p = _masks(rng, (9, 12, 13), 3)
    region = rng.random(t.shape) < 0.1
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    kw = dict(components=18, ignore_mask=region, surface=True)
    _same(score_segmentation(str(tmp_path / "t.npy"), str(tmp_path / "p.npy"), tile_rows=tile_rows, **kw),
          score_segmentation(t, p, **kw))


def test_cli_equals_api_and_the_family_function(tmp_path, cli):
    rng = np.random.default_rng(2)
    t = _masks(rng, (8, 20, 22), 2)
    p = _masks(rng, (8, 20, 22), 2)
    m = np.zeros(t.shape, np.uint8)
    m[:, :, :5] = 1
    for name, a in (("t", t), ("p", p), ("m", m)):
        np.save(tmp_path / f"{name}.npy", a)
    code, out, err = cli("objects", tmp_path / "t.npy", tmp_path / "p.npy", "--components", "6", "--ignore-mask",
                         tmp_path / "m.npy", "--json")
    assert code == 0, err
    got = json.loads(out)
    via_api = api.objects(t, p, components=6, ignore_mask=m)
    assert got == json.loads(json.dumps(dict(via_api)))
    _same(got, score_segmentation(t, p, components=6, ignore_mask=m))
    assert "warning: " in err and "ignored" in err
    code, out, _ = cli("objects", tmp_path / "t.npy", tmp_path / "p.npy", "--ignore-label", "2", "--json")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(dict(api.objects(t, p, ignore_label=2))))


def test_refusals_are_one_line(tmp_path, cli):
    t = np.zeros((6, 7), np.uint8)
    t[1:3, 1:3] = 1
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "small.npy", t[:5])

    def one_line(*argv, names=()):
        code, out, err = cli("objects", tmp_path / "t.npy", tmp_path / "t.npy", *argv)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
        for n in names:
            assert n in lines[0], lines[0]
        return lines[0]

    one_line("--components", "6", names=("components 6", "2D", "4 or 8"))
    one_line("--components", "5", names=("--components",))  # not a connectivity at all: usage
    one_line("--ignore-mask", tmp_path / "small.npy", names=("small.npy", "shape"))
    np.save(tmp_path / "m.npy", t)
    line = one_line("--ignore-mask", tmp_path / "m.npy", "--json-out", tmp_path / "m.npy")
    assert "m.npy" in line
    assert np.array_equal(np.load(tmp_path / "m.npy"), t)  # not overwritten
    one_line("--ignore-mask", tmp_path / "absent.npy", names=("absent.npy",))
    with pytest.raises(ScoreError, match="components 26"):
        api.objects(t, t, components=26)
    with pytest.raises(ScoreError, match="shape"):
        api.objects(t, t, ignore_mask=np.zeros((2, 2), bool))
