"""`segscore check`: the window rule, the overlap rule, exit codes 0 / 3 / 2."""

import json

import pytest

from segscore.errors import ScoreError
from segscore.ink import compliance


@pytest.mark.parametrize("px,um,ok", [(64, 8.0, True), (65, 8.0, False), (64, 100.0, True), (62, 8.0, True),
                                      (100, 5.0, True), (101, 5.0, False), (128, 3.9, True), (200, 2.4, True),
                                      (209, 2.4, False), (1, 1000.0, True)])
def test_window_rule(px, um, ok):
    got, mm = compliance.window_compliant(px, um)
    assert got is ok
    assert mm == pytest.approx(px * um / 1000)


@pytest.mark.parametrize("a,b,hit", [
    ((0, 0, 10, 10), (10, 0, 5, 5), False),   # touching edges
    ((0, 0, 10, 10), (9, 9, 5, 5), True),
    ((5, 5, 2, 2), (0, 0, 10, 10), True),     # inside
    ((0, 20, 10, 10), (0, 0, 10, 20), False),
])
def test_overlap_rule(a, b, hit):
    ra = dict(zip(("y0", "x0", "h", "w"), a))
    rb = dict(zip(("y0", "x0", "h", "w"), b))
    assert compliance.regions_overlap(ra, rb) is hit
    assert compliance.regions_overlap(rb, ra) is hit


def write(tmp_path, data):
    p = tmp_path / "regions.json"
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return p


def test_cli_compliant_exit_0(cli, tmp_path):
    p = write(tmp_path, {"train_regions": [{"y0": 0, "x0": 0, "h": 100, "w": 100, "volume": "A"},
                                           {"y0": 50, "x0": 50, "h": 100, "w": 100, "volume": "B"}],
                         "predict_region": {"y0": 50, "x0": 50, "h": 10, "w": 10, "volume": "A"}})
    code, out, err = cli("check", "--window-px", 64, "--scan-um", 8.0, "--regions-json", p, "--json")
    assert code == 3  # region 0 overlaps in volume A
    r = json.loads(out)
    assert r["compliant"] is False and r["overlap"]["overlapping_train_regions"] == [0]
    assert "training region 0" in err
    p2 = write(tmp_path, {"train_regions": [{"y0": 0, "x0": 0, "h": 50, "w": 50}],
                          "predict_region": {"y0": 50, "x0": 50, "h": 10, "w": 10}})
    code, out, err = cli("check", "--window-px", 64, "--scan-um", 8.0, "--regions-json", p2)
    assert code == 0, err
    assert "compliant" in out


def test_cli_both_violations_listed(cli, tmp_path):
    p = write(tmp_path, {"train_regions": [{"y0": 0, "x0": 0, "h": 100, "w": 100}],
                         "predict_region": {"y0": 10, "x0": 10, "h": 10, "w": 10}})
    code, out, err = cli("check", "--window-px", 256, "--scan-um", 8, "--regions-json", p, "--json")
    assert code == 3
    r = json.loads(out)
    assert len(r["violations"]) == 2 and r["window"]["compliant"] is False


def test_cli_window_only(cli):
    code, out, _ = cli("check", "--window-px", 64, "--scan-um", 8)
    assert code == 0 and "not checked" in out
    code, _, err = cli("check", "--window-px", 96, "--scan-um", 8)
    assert code == 3 and "0.768 mm" in err


@pytest.mark.parametrize("content,fragment", [
    ("{not json", "not valid JSON"),
    ('{"train_regions": []}', "predict_region"),
    ('{"train_regions": [{"y0": 0}], "predict_region": {"y0": 0, "x0": 0, "h": 1, "w": 1}}', "train_regions[0]"),
    ('{"train_regions": [], "predict_region": {"y0": 0, "x0": 0, "h": 0, "w": 1}}', "positive"),
])
def test_cli_bad_regions_exit_2(cli, tmp_path, content, fragment):
    p = write(tmp_path, content)
    code, out, err = cli("check", "--window-px", 64, "--scan-um", 8, "--regions-json", p)
    assert code == 2 and out == "" and fragment in err and len(err.strip().splitlines()) == 1


def test_cli_bad_numbers_exit_2(cli, tmp_path):
    assert cli("check", "--window-px", 0, "--scan-um", 8)[0] == 2
    assert cli("check", "--window-px", 64, "--scan-um", -1)[0] == 2
    assert cli("check", "--window-px", 64)[0] == 2  # usage
    assert cli("check", "--window-px", 64, "--scan-um", 8, "--regions-json", tmp_path / "none.json")[0] == 2


def test_api_refuses_bad_input():
    with pytest.raises(ScoreError):
        compliance.check(64, 8, {"train_regions": "x", "predict_region": {}})
