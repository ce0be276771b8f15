"""``holdout --missing``: per-object misses imputed before the pooled per-object means.

A held-out set of n fields (one disc each); model K predicts nothing on the K fields it would
have done worst on. The pooled ``dice_per_object`` (a mean over matched pairs) improves as K
grows; under ``worst`` (each unmatched object at Dice 0, HD95 its field's diagonal) it never does.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from segscore.objects.holdout import score_holdout, worst_means

N = 4


def disc(shape=(32, 32), r=9, c=(16, 16)):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    return ((yy - c[0]) ** 2 + (xx - c[1]) ** 2 <= r * r).astype(np.uint8)


def pairs(k, *, spacing=False):
    """Field i's prediction is shifted by N - i pixels; the first k fields are missed (empty)."""
    for i in range(N):
        truth = disc()
        pred = np.zeros_like(truth) if i < k else disc(c=(16, 16 + N - i))
        yield (truth, pred, (2.0, 1.0)) if spacing else (truth, pred)


def test_pooled_per_object_means_never_improve_under_worst():
    table = []
    for k in range(N + 1):
        score = score_holdout(pairs(k, spacing=True), name="s", version="1", surface=True)
        w = worst_means(score, "worst")
        table.append((k, w["dice_per_object"]["null"], w["dice_per_object"]["worst"],
                      w["hd95_per_object"]["null"], w["hd95_per_object"]["worst"], w["dice_per_object"]["n_left_out"]))
        assert w["dice_per_object"]["mean"] == w["dice_per_object"]["worst"]
        assert worst_means(score, "null")["dice_per_object"]["mean"] == score.metrics["dice_per_object"]
    dice_null = [r[1] for r in table[:-1]]
    dice_worst = [r[2] for r in table]
    hd_worst = [r[4] for r in table]
    assert all(b > a for a, b in zip(dice_null, dice_null[1:]))  # null: missing more looks better
    assert all(b < a for a, b in zip(dice_worst, dice_worst[1:]))  # worst: never improves
    assert all(b > a for a, b in zip(hd_worst, hd_worst[1:]))  # a distance: lower is better
    assert table[-1][1] is None and table[-1][2] == 0.0
    assert table[-1][4] == pytest.approx(np.hypot(64.0, 32.0))  # every object at the diagonal, physical units
    assert [r[5] for r in table] == list(range(N + 1))


def test_both_empty_fields_add_nothing_and_voi_is_not_per_object():
    empty = np.zeros((32, 32), np.uint8)
    both = list(pairs(0)) + [(empty, empty)]
    a = worst_means(score_holdout(both, name="s", version="1"))
    b = worst_means(score_holdout(list(pairs(0)), name="s", version="1"))
    assert a == b and a["dice_per_object"]["n_left_out"] == 0
    assert "voi_split" not in a


@pytest.fixture
def holdout_set(tmp_path):
    (tmp_path / "truth").mkdir()
    fields = []
    for i, (t, _) in enumerate(pairs(0)):
        np.save(tmp_path / "truth" / f"f{i}.npy", t)
        fields.append({"image": f"img/f{i}.npy", "truth": f"truth/f{i}.npy", "sha256": ""})
    (tmp_path / "set.json").write_text(json.dumps({"name": "s", "version": "1", "fields": fields}))
    for k in (0, 2, N):
        d = tmp_path / f"k{k}"
        d.mkdir()
        for i, (_, p) in enumerate(pairs(k)):
            np.save(d / f"f{i}.npy", p)
    return tmp_path


def run(*argv):
    return subprocess.run([sys.executable, "-m", "segscore", "holdout", *map(str, argv)], capture_output=True,
                          text=True)


def test_cli_holdout_missing(holdout_set):
    base = (holdout_set / "set.json", "--predictions", holdout_set / "k2", "--baseline", holdout_set / "k0")
    bad = run(*base, "--missing", "foo")
    assert bad.returncode == 2 and bad.stdout == "" and "invalid choice: 'foo'" in bad.stderr
    plain = run(*base, "--json")
    assert plain.returncode == 0 and "means" not in json.loads(plain.stdout)
    got = run(*base, "--missing", "worst", "--json")
    assert got.returncode == 0, got.stderr
    d = json.loads(got.stdout)
    assert d["missing"] == "worst"
    f, v = d["means"]["finetuned"]["dice_per_object"], d["means"]["vanilla"]["dice_per_object"]
    assert f["n_left_out"] == 2 and v["n_left_out"] == 0
    assert f["null"] > v["null"] and f["worst"] < v["worst"]  # the misses flip the comparison
    assert f["null"] == d["finetuned"]["dice_per_object"] and f["mean"] == f["worst"]
    assert f["worst"] == pytest.approx(f["null"] * 2 / 4)
    text = run(*base, "--missing", "worst")
    assert text.returncode == 0
    assert "finetuned per-object means (--missing worst; null: unmatched objects left out" in text.stdout
    assert "vanilla per-object means (--missing worst: no object left out)" in text.stdout
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("dice_per_object") and "2" in ln.split()[1])
    assert line.split() == ["dice_per_object", "2", f"{f['null']:.4f}", f"{f['worst']:.4f}"]


def test_api_holdout_takes_missing(holdout_set):
    from segscore import api
    from segscore.errors import ScoreError

    r = api.holdout(manifest=holdout_set / "set.json", predictions=holdout_set / "k2", missing="worst")
    assert r["missing"] == "worst" and r["means"]["finetuned"]["dice_per_object"]["n_left_out"] == 2
    assert "means" not in api.holdout(manifest=holdout_set / "set.json", predictions=holdout_set / "k2")
    with pytest.raises(ScoreError, match="--missing: invalid choice"):
        api.holdout(manifest=holdout_set / "set.json", predictions=holdout_set / "k2", missing="foo")


def test_holdout_missing_keeps_the_result_contract(holdout_set):
    from tests.test_result_contract import check_contract

    got = run(holdout_set / "set.json", "--predictions", holdout_set / f"k{N}", "--missing", "null", "--json")
    assert got.returncode == 0, got.stderr
    d = json.loads(got.stdout)
    notes = check_contract(d)  # every null (the all-missed set's matched-pair means) has its note
    e = d["means"]["finetuned"]["dice_per_object"]
    assert e["null"] is None and e["mean"] is None and e["worst"] == 0.0 and e["n_left_out"] == N
    assert "means.finetuned.dice_per_object.null" in notes and "means.finetuned.dice_per_object.mean" in notes
