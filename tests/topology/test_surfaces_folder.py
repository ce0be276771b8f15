"""``segscore surfaces`` folder mode counts a label volume without a prediction under
``--missing null|worst`` (as ``report`` does), and ``--plot FILE`` writes the command's figure to
FILE in both modes (issue 35, item 4)."""

import csv
import json

import numpy as np
import pytest
import tifffile

from segscore import api
from segscore.cli.main import main
from segscore.errors import ScoreError
from segscore.topology.score import surfaces

pytest.importorskip("matplotlib")


def _pair(seed=0, shape=(10, 12, 14)):
    rng = np.random.default_rng(seed)
    g = np.zeros(shape, np.uint8)
    g[3:5] = 1
    g[7, :, :] = 1
    p = g.copy()
    p[rng.random(shape) < 0.03] ^= 1
    return p, g


@pytest.fixture
def folders(tmp_path):
    """Three label volumes, two predictions (case2 has none) and one prediction without labels."""
    for d in ("gt", "pred"):
        (tmp_path / d).mkdir()
    for i in range(3):
        p, g = _pair(i)
        tifffile.imwrite(tmp_path / "gt" / f"case{i}.tif", g)
        if i < 2:
            np.save(tmp_path / "pred" / f"case{i}.npy", p)
    np.save(tmp_path / "pred" / "orphan.npy", _pair(9)[0])
    return tmp_path


def _folder(folders, *extra):
    return ["surfaces", "--gt-dir", str(folders / "gt"), "--pred-dir", str(folders / "pred"), "--out",
            str(folders / "out"), "--json", "--topo-tiles", "1", "1", "1", *extra]


def _boards(field="leaderboard"):
    return [surfaces(truth=_pair(i)[1], pred=_pair(i)[0], topo_tiles=(1, 1, 1))[field] for i in range(2)]


def test_null_leaves_the_missing_prediction_out_and_counts_it(folders, capsys):
    assert main(_folder(folders)) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["cases"] == 3 and summary["scored"] == 2
    assert summary["missing"] == "null" and summary["missing_predictions"] == ["case2"]
    s = summary["summary"]["leaderboard"]
    assert s["n"] == 2 and s["n_null"] == 1 and s["mean"] == pytest.approx(np.mean(_boards()))
    assert "cases.case2.leaderboard" in summary["notes"]
    assert "1 label volume without a prediction, --missing null" in out.err and "case2" in out.err
    assert "1 prediction without a label volume left out: orphan" in out.err
    rows = list(csv.DictReader(open(folders / "out" / "metrics_per_case.csv")))
    assert [r["case"] for r in rows] == ["case0", "case1", "case2"] and rows[2]["leaderboard"] == ""
    assert json.loads((folders / "out" / "summary.json").read_text()) == summary


def test_worst_counts_each_term_at_its_worst(folders, capsys):
    assert main(_folder(folders, "--missing", "worst")) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["missing"] == "worst" and summary["missing_predictions"] == ["case2"]
    for field in ("leaderboard", "toposcore", "surface_dice", "voi_score", "topoF1_0"):
        s = summary["summary"][field]
        assert s["n"] == 3 and s["n_null"] == 0, field
        assert s["mean"] == pytest.approx(sum(_boards(field)) / 3), field  # the missed case counts 0
    vt = summary["summary"]["voi_total"]  # unbounded: no worst value, left out and said
    assert vt["n"] == 2 and vt["n_null"] == 1 and "not imputable" in summary["notes"]["summary.voi_total"]
    rows = list(csv.DictReader(open(folders / "out" / "metrics_per_case.csv")))
    assert rows[2]["leaderboard"] == "0.0" and rows[2]["voi_total"] == ""


def test_the_api_takes_missing_and_refuses_it_for_one_pair(folders):
    r = api.surfaces(gt_dir=folders / "gt", pred_dir=folders / "pred", out=folders / "o2", missing="worst",
                     topo_tiles=(1, 1, 1))
    assert r["missing_predictions"] == ["case2"] and r["summary"]["leaderboard"]["n"] == 3
    p, g = _pair()
    with pytest.raises(ScoreError, match="--missing worst: a policy for a mean over cases, in folder mode"):
        api.surfaces(g, p, missing="worst")
    with pytest.raises(ScoreError, match="invalid choice"):
        api.surfaces(gt_dir=folders / "gt", pred_dir=folders / "pred", out=folders / "o3", missing="zero")


def test_plot_file_in_folder_mode_draws_the_per_case_scores(folders, capsys):
    png = folders / "cases.png"
    assert main(_folder(folders, "--plot", str(png))) == 0
    capsys.readouterr()
    assert png.read_bytes().startswith(b"\x89PNG") and not list((folders / "out").glob("hist_*"))
    assert sorted(p.name for p in (folders / "out").iterdir()) == ["metrics_per_case.csv", "summary.json"]
    fig = api.surfaces(gt_dir=folders / "gt", pred_dir=folders / "pred", out=folders / "o4",
                       topo_tiles=(1, 1, 1)).plot()
    gids = {b.get_gid() for ax in fig.axes for b in ax.patches if b.get_gid()}  # each histogram's bars
    assert gids == {f"hist:{f}" for f in ("leaderboard", "toposcore", "surface_dice", "voi_score", "voi_total")}
    board = [ax for ax in fig.axes if ax.get_xlabel() == "leaderboard"][0]
    counts = sum(b.get_height() for b in board.patches)
    assert counts == 2 and "1 null" in board.get_title()  # the two scored cases; the missed one counted
    assert min(b.get_x() for b in board.patches) == pytest.approx(min(_boards()))


def test_plot_file_of_one_pair_draws_the_terms(tmp_path, capsys):
    p, g = _pair()
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "g.npy", g)
    svg = tmp_path / "pair.svg"
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--topo-tiles", "1", "1", "1",
                 "--plot", str(svg), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert svg.read_text().lstrip().startswith("<?xml") and "bar:leaderboard" in svg.read_text()
    fig = api.surfaces(g, p, topo_tiles=(1, 1, 1)).plot()
    bars = {b.get_gid(): b.get_height() for ax in fig.axes for b in ax.patches if b.get_gid()}
    for field in ("leaderboard", "toposcore", "surface_dice", "voi_score", "topoF1_0", "topoF1_1", "topoF1_2"):
        if result[field] is not None:
            assert bars[f"bar:{field}"] == pytest.approx(result[field]), field
    for k in range(3):
        for what in ("matched", "pred", "gt"):
            n = result["topology"][f"dim{k}"][what]
            assert bars.get(f"betti:dim{k}:{what}", 0) == n, (k, what)


def test_plot_takes_a_figure_file_name_only(tmp_path, capsys):
    assert main(["surfaces", "a.npy", "b.npy", "--plot", str(tmp_path / "x.pdf")]) == 2
    assert "is not a .png or .svg file name" in capsys.readouterr().err
