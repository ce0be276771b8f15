"""Figures, headless: each function's axes against the result it draws, the opt-in arrays against
the metric they came from, ``--plot`` on every command that has it, and every refusal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from segscore import figures
from segscore.errors import ScoreError
from segscore.io.results import dumps
from tests.cli_checks import one_line_error

# matplotlib is in the test extra: these tests never skip (a missing matplotlib fails them)

REPO = Path(__file__).resolve().parents[2]
AUDIT_FIXTURE = REPO / "tests" / "data" / "curvicost" / "audit_fixture.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def by_gid(ax, gid, kind="lines"):
    """The artists of ``ax`` (``lines``, ``patches``) whose gid is ``gid``."""
    return [a for a in getattr(ax, kind) if a.get_gid() == gid]


def one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    return text


def rendered(fig):
    """``fig`` laid out and drawn on an Agg canvas (what a PNG shows), at the figure's own dpi."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def check_legends_off_the_data(fig) -> None:
    """Every legend of ``fig`` sits outside every axes' data area (it hides no curve, bar or point)."""
    rendered(fig)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    assert legends, "no legend"
    for leg in legends:
        box = leg.get_window_extent()
        for ax in fig.axes:
            assert not overlaps(box, ax.get_window_extent()), (leg.get_texts()[0].get_text(), ax.get_title())


def pixel_widths(ax, patches) -> np.ndarray:
    """The drawn widths (pixels, at the figure's dpi) of ``patches`` on ``ax``."""
    out = []
    for p in patches:
        x0, x1 = p.get_x(), p.get_x() + p.get_width()
        (a, _), (b, _) = ax.transData.transform([(x0, 0.0), (x1, 0.0)])
        out.append(abs(b - a))
    return np.asarray(out)


def histogram_axes(fig):
    """``(histogram axes, strip axes or None)`` of a one-panel auc figure."""
    hists = [ax for ax in fig.axes if by_gid(ax, "draws", "patches")]
    strips = [ax for ax in fig.axes if by_gid(ax, "zoom", "patches")]
    assert len(hists) == 1 and len(strips) <= 1
    return hists[0], (strips[0] if strips else None)


def check_file(path: Path, fmt: str) -> None:
    data = path.read_bytes()
    assert len(data) > 1000
    if fmt == "png":
        assert data.startswith(PNG_MAGIC)
    else:
        assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.")]  # no temporary left


# ---------------------------------------------------------------------------------------------
# inputs, small and synthetic


@pytest.fixture(scope="module")
def ink_target(tmp_path_factory):
    from tests.targets.helpers import make_target, reading_map, write_png

    d = tmp_path_factory.mktemp("ink_target")
    # seed 5: the uniform_random floor (seed 0) must not be the stream the helper drew the ink from
    folder, ink, _ = make_target(d / "tgt", shape=(40, 56), seed=5)
    write_png(d / "pred.png", reading_map(ink, seed=1))
    empty, _, _ = make_target(d / "no_ink", shape=(40, 56), seed=6, ink_rate=0.0)
    return {"dir": d, "target": folder, "pred": d / "pred.png", "no_ink": empty}


@pytest.fixture(scope="module")
def target_scored(ink_target):
    from segscore.ink.targets import score_target

    plain = score_target(ink_target["pred"], ink_target["target"])
    result, curves = score_target(ink_target["pred"], ink_target["target"], return_curves=True)
    return plain, result, curves


@pytest.fixture(scope="module")
def seg(tmp_path_factory):
    import tifffile

    from tests.ink.helpers import segment, write_levels

    d = tmp_path_factory.mktemp("auc_seg")
    pred, ink, mask = segment((50, 70), seed=21)
    rev = np.random.default_rng(22).integers(0, 256, pred.shape).astype(np.uint8)
    other = np.clip(pred.astype(np.int64) + np.random.default_rng(23).integers(0, 20, pred.shape), 1, 255)
    tifffile.imwrite(d / "MAP.tif", pred)
    tifffile.imwrite(d / "REV.tif", rev)
    tifffile.imwrite(d / "OTHER.tif", other.astype(np.uint8))
    return {"dir": d, "map": d / "MAP.tif", "rev": d / "REV.tif", "other": d / "OTHER.tif",
            "labels": write_levels(d / "inklabels.zarr", {"2": ink.astype(np.uint8)}),
            "mask": write_levels(d / "supervision.zarr", {"2": mask.astype(np.uint8)})}


@pytest.fixture(scope="module")
def auc_scored(seg):
    from segscore.ink import auc

    kw = dict(control=str(seg["rev"]), bootstrap=40, block_px=9, seed=4)
    plain = auc.score_files(str(seg["map"]), seg["labels"], seg["mask"], **kw)
    result, draws = auc.score_files(str(seg["map"]), seg["labels"], seg["mask"], return_draws=True, **kw)
    paired, pdraws = auc.score_files(str(seg["map"]), seg["labels"], seg["mask"], compare=str(seg["other"]),
                                     return_draws=True, **kw)
    return plain, result, draws, paired, pdraws


@pytest.fixture(scope="module")
def objects_pair(tmp_path_factory):
    from tests.objects.helpers import synthetic_pair

    d = tmp_path_factory.mktemp("objects")
    t, p = synthetic_pair(seed=2, n=20, shape=(80, 72))
    np.save(d / "t.npy", t)
    np.save(d / "p.npy", p)
    np.save(d / "empty.npy", np.zeros_like(t))
    return {"dir": d, "truth": d / "t.npy", "pred": d / "p.npy", "empty": d / "empty.npy", "arrays": (t, p)}


FIBER_SHAPE = (10, 12, 24)
FIBER_ROW = {"erl": 5.0, "erl_merge_penalized": 4.0, "coverage": 0.5, "precision": 0.25, "splits": 1, "merges": 0,
             "merged_instances": 0, "n_gt_fibers": 2, "n_pred_instances": 3, "gt_length": 30.0, "pred_length": 100.0,
             "tolerance": 2.0}


@pytest.fixture(scope="module")
def fiber_target(tmp_path_factory):
    from tests.fibers.helpers import write_target

    d = tmp_path_factory.mktemp("fibers")
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]])),
              (np.array([[6, 9, 3], [6, 9, 15], [2, 9, 18]], float), np.array([[0, 1], [1, 2]]))]
    mask = np.zeros(FIBER_SHAPE, bool)
    mask[4, 3:6, :] = True
    mask[6, 9, 5:] = True
    floors = {"oracle": dict(FIBER_ROW, erl=9.0, erl_merge_penalized=9.0),
              "floor_connected_components": dict(FIBER_ROW),
              "floor_single_instance": dict(FIBER_ROW, erl=3.0, erl_merge_penalized=None)}
    target = write_target(d / "fibers_tiny_10", fibers, mask, floors=floors)
    lab = np.zeros(FIBER_SHAPE, np.int32)
    lab[4, 4, :12] = 1
    lab[4, 4, 12:] = 3
    lab[6, 9, :] = 2
    np.save(d / "labels.npy", lab)
    np.save(d / "nothing.npy", np.zeros(FIBER_SHAPE, np.int32))
    return {"dir": d, "target": target, "labels": d / "labels.npy", "nothing": d / "nothing.npy"}


def audit_result():
    """A small audit result as `segscore audit --json` prints it: every label, an undefined cell."""
    rows = []
    spec = [("traceable_frac", "break", "dice", 0.8, 0.5, 0.95, "tracks"),
            ("traceable_frac", "break", "hd95", -0.6, -0.8, -0.2, "anti-correlated"),
            ("traceable_frac", "bridge", "dice", 0.1, -0.3, 0.4, "blind"),
            ("traceable_frac", "bridge", "hd95", None, None, None, "undefined"),
            ("traceable_frac", "radius", "dice", 0.4, None, None, "inconclusive"),
            ("conductance_twosided", "break", "dice", 0.7, 0.3, 0.9, "tracks"),
            ("conductance_twosided", "bridge", "dice", 0.2, -0.1, 0.5, "blind")]
    for cost, op, metric, rho, lo, hi, label in spec:
        rows.append({"cost": cost, "operator": op, "metric": metric, "n": 12, "n_units": 4, "aligned_rho": rho,
                     "ci_lo": lo, "ci_hi": hi, "label": label, "reason": "" if rho is not None else "cost constant",
                     "undefined": label == "undefined", "inconclusive": label == "inconclusive",
                     "blind": label == "blind", "anti": label == "anti-correlated", "cost_constant": rho is None})
    return {"n_cases": 24, "n_units": 4, "findings": rows, "operator_notes": {},
            "cost_labels": {"traceable_frac": "traceable length"}, "notes": {}}


# ---------------------------------------------------------------------------------------------
# the package


def test_importing_the_figures_loads_no_matplotlib_and_names_functions():
    code = ("import sys, types, segscore.figures as f, segscore.ink.auc, segscore.commands.target\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib loaded'\n"
            "bad = [n for n in f.__all__ if isinstance(getattr(f, n), types.ModuleType)]\n"
            "print(len(f.__all__), bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    n, bad = out.stdout.split(maxsplit=1)
    assert int(n) >= 8 and bad.strip() == "[]"


def test_no_family_imports_the_figures():
    from tests.test_repository import _layer_of, _segscore_imports

    bad = []
    for family in ("ink", "columns", "curvilinear", "objects", "fibers", "metrics", "io", "engine", "kernels"):
        for path in sorted((REPO / "segscore" / family).rglob("*.py")):
            bad += [f"{path.name} imports {m}" for m in _segscore_imports(path) if _layer_of(m) == "figures"]
    for path in sorted((REPO / "segscore" / "figures").rglob("*.py")):
        bad += [f"figures/{path.name} imports {m}" for m in _segscore_imports(path)
                if _layer_of(m) in ("cli", "batch", "commands")]
    assert not bad, bad


def test_save_is_atomic_and_takes_the_format_from_the_suffix(tmp_path):
    fig = figures.leaderboard([{"model": "m", "value": 0.5, "floors": {"f": 0.1}}])
    for name, fmt in (("a.png", "png"), ("b.SVG", "svg"), ("sub/c.svg", "svg")):
        figures.save(fig, tmp_path / name)
        check_file(tmp_path / name, fmt)
    with pytest.raises(ScoreError, match=r"\.png or \.svg") as exc:
        figures.save(fig, tmp_path / "d.pdf")
    one_line(exc)
    assert not (tmp_path / "d.pdf").exists()


def test_a_missing_matplotlib_is_refused_in_one_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(ScoreError, match=r"segscore\[plot\]") as exc:
        figures.require_matplotlib()
    one_line(exc)


# ---------------------------------------------------------------------------------------------
# ink target: curves from the metric's own histograms


def _area(x, y):
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def test_the_curves_are_the_histograms_the_card_used(target_scored):
    plain, result, curves = target_scored
    assert dumps(plain) == dumps(result)  # the default JSON is byte-identical
    assert type(result).__name__ == "Result"
    m = result["metrics"]
    pts = curves["prediction"]
    assert abs(_area(pts["fpr"], pts["tpr"]) - m["roc_auc"]) < 1e-12
    assert abs(-np.sum(np.diff(pts["recall"]) * pts["precision"][:-1]) - m["average_precision"]) < 1e-12
    assert pts["fpr"][0] == pts["tpr"][0] == 0 and pts["fpr"][-1] == pts["tpr"][-1] == 1
    assert np.isinf(pts["roc_thresholds"][0]) and np.all(np.diff(pts["roc_thresholds"][1:]) < 0)
    assert set(curves["floors"]) == set(result["floors"]) == {"all_positive", "constant_0_5", "uniform_random"}
    for name, fp in curves["floors"].items():
        card = result["floors"][name]
        assert abs(_area(fp["fpr"], fp["tpr"]) - card["roc_auc"]) < 1e-12, name
        assert abs(-np.sum(np.diff(fp["recall"]) * fp["precision"][:-1]) - card["average_precision"]) < 1e-12
    assert 0.3 < result["floors"]["uniform_random"]["roc_auc"] < 0.7
    assert m["roc_auc"] > 0.75


def test_the_curves_match_scikit_learn_on_the_pixels(ink_target, target_scored):
    from sklearn.metrics import precision_recall_curve, roc_curve

    from segscore.ink.targets import load_target, read_png

    _, _, curves = target_scored
    t = load_target(ink_target["target"])
    scored = (t.codes & 2) != 0
    y = (t.codes & 1)[scored]
    p = read_png(ink_target["pred"])[scored] / 255.0
    fpr, tpr, _ = roc_curve(y, p, drop_intermediate=False)
    precision, recall, _ = precision_recall_curve(y, p)
    np.testing.assert_allclose(curves["prediction"]["fpr"], fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(curves["prediction"]["tpr"], tpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(curves["prediction"]["precision"], precision, rtol=0, atol=1e-15)
    np.testing.assert_allclose(curves["prediction"]["recall"], recall, rtol=0, atol=1e-15)


def test_target_curves_draws_the_result(target_scored):
    _, result, curves = target_scored
    fig = figures.target_curves(result, curves)
    roc, pr = fig.axes
    assert roc.get_title() == "ROC" and pr.get_title() == "precision-recall"
    assert roc.get_xlabel().startswith("false positive rate") and pr.get_xlabel() == "recall"
    (line,) = by_gid(roc, "prediction")
    np.testing.assert_array_equal(line.get_xdata(), curves["prediction"]["fpr"])
    np.testing.assert_array_equal(line.get_ydata(), curves["prediction"]["tpr"])
    assert f"ROC-AUC {result['metrics']['roc_auc']:.4f}" in line.get_label()
    (pline,) = by_gid(pr, "prediction")
    np.testing.assert_array_equal(pline.get_xdata(), curves["prediction"]["recall"])
    assert pline.get_drawstyle() == "steps-post"
    for name, card in result["floors"].items():
        (fl,) = by_gid(roc, f"floor:{name}")
        assert f"ROC-AUC {card['roc_auc']:.4f}" in fl.get_label()
        (pt,) = by_gid(pr, f"point:{name}")
        assert pt.get_xdata()[0] == pytest.approx(card["recall"]) and pt.get_ydata()[0] == pytest.approx(
            card["precision"])
    assert len([ln for ln in roc.lines if str(ln.get_gid()).startswith("floor:")]) == 3
    (prev,) = by_gid(pr, "prevalence")
    assert prev.get_ydata()[0] == pytest.approx(result["metrics"]["positive_rate"])
    (op,) = by_gid(pr, "point:prediction")
    assert (op.get_xdata()[0], op.get_ydata()[0]) == pytest.approx((result["metrics"]["recall"],
                                                                    result["metrics"]["precision"]))
    (rop,) = by_gid(roc, "point:prediction")
    assert rop.get_ydata()[0] == pytest.approx(result["metrics"]["recall"])
    assert 0 <= rop.get_xdata()[0] <= 1
    assert result["target"] in fig.get_suptitle()
    # the legends sit below the axes: neither covers the operating point (nor any curve)
    check_legends_off_the_data(fig)
    for ax in (roc, pr):
        (pt,) = by_gid(ax, "point:prediction")
        x, y = ax.transData.transform((pt.get_xdata()[0], pt.get_ydata()[0]))
        box = ax.get_legend().get_window_extent()
        assert not (box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1)
        assert ax.get_window_extent().contains(x, y)


def test_target_curves_refuses_an_empty_chart(ink_target, target_scored):
    from segscore.ink.targets import score_target

    result, curves = score_target(ink_target["pred"], ink_target["no_ink"], return_curves=True, floors=False)
    assert result["metrics"]["roc_auc"] is None and curves["prediction"] is None
    with pytest.raises(ScoreError, match=r"metrics\.roc_auc is null \(degenerate: the mask holds one class") as exc:
        figures.target_curves(result, curves)
    one_line(exc)
    _, good, good_curves = target_scored
    with pytest.raises(ScoreError, match="return_curves=True"):
        figures.target_curves(good, None)
    other = {"prediction": good_curves["floors"]["uniform_random"], "floors": {}}
    with pytest.raises(ScoreError, match="not this result's"):
        figures.target_curves(good, other)


# ---------------------------------------------------------------------------------------------
# auc: the bootstrap draws and the paired difference


def test_the_draws_are_the_bootstrap_the_interval_came_from(auc_scored):
    plain, result, draws, paired, pdraws = auc_scored
    assert dumps(plain) == dumps(result)  # the default JSON is byte-identical
    boot = result["bootstrap"]
    assert draws["map"].shape == (boot["draws"],) == (40,) and draws["compare"] is None and draws["difference"] is None
    lo, hi = np.percentile(draws["map"][np.isfinite(draws["map"])], [2.5, 97.5])
    assert [round(lo, 4), round(hi, 4)] == boot["ci95"]
    assert boot["half_width"] == round((hi - lo) / 2, 4)
    assert abs(np.mean(draws["map"]) - result["forward"]["auc"]) < 0.05
    cmp_ = paired["bootstrap"]["compare"]
    np.testing.assert_array_equal(pdraws["difference"], pdraws["map"] - pdraws["compare"])
    d = pdraws["difference"][np.isfinite(pdraws["difference"])]
    assert [round(v, 4) for v in np.percentile(d, [2.5, 97.5])] == cmp_["ci95"]
    assert round(float(np.mean(d <= 0)), 4) == cmp_["share_draws_map_not_ahead"]


def test_block_bootstrap_returns_the_same_draws(seg, auc_scored):
    from segscore.ink import auc
    from tests.ink.helpers import segment

    pred, ink, mask = segment((50, 70), seed=21)
    boot = auc.block_bootstrap(pred, ink, mask, draws=30, block_px=8, seed=2)
    again, arrays = auc.block_bootstrap(pred, ink, mask, draws=30, block_px=8, seed=2, return_draws=True)
    assert again == boot
    lo, hi = np.percentile(arrays["map"], [2.5, 97.5])
    assert [round(lo, 4), round(hi, 4)] == boot["ci95"]


def test_auc_bootstrap_draws_the_result(auc_scored):
    """The README's case: a control near 0.5 far from the draws. The histogram's axis holds the
    draws (each bin visible), the control is marked on a strip below that shows the whole scale."""
    _, result, draws, _, _ = auc_scored
    c_auc, auc = result["control"]["auc"], result["forward"]["auc"]
    spread = np.ptp(draws["map"])
    assert abs(auc - c_auc) > 3 * spread  # the control is far off the draws: the case that hid them
    fig = rendered(figures.auc_bootstrap(result, draws))
    ax, strip = histogram_axes(fig)
    assert strip is not None and len(fig.axes) == 2
    (auc_line,) = by_gid(ax, "auc")
    assert list(auc_line.get_xdata()) == [auc] * 2
    assert by_gid(ax, "control") == []  # not on the histogram's axis ...
    (control,) = by_gid(strip, "control")  # ... but on the strip, whose scale reaches it
    assert list(control.get_xdata()) == [c_auc] * 2
    s0, s1 = strip.get_xlim()
    assert s0 < min(c_auc, draws["map"].min()) and s1 > max(auc, draws["map"].max())
    (zoom,) = by_gid(strip, "zoom", "patches")  # the histogram's range, shown on the whole scale
    assert (zoom.get_x(), zoom.get_x() + zoom.get_width()) == pytest.approx(ax.get_xlim())
    assert f"control AUC {c_auc:.4f}" in ax.get_title()
    assert any(t.get_text().startswith(f"control AUC {c_auc:.4f}") for t in ax.get_legend().get_texts())
    (span,) = by_gid(ax, "ci95", "patches")
    x0 = span.get_x() if hasattr(span, "get_x") else span.get_xy()[:, 0].min()
    x1 = x0 + span.get_width() if hasattr(span, "get_width") else span.get_xy()[:, 0].max()
    assert (x0, x1) == pytest.approx(tuple(result["bootstrap"]["ci95"]))
    bars = by_gid(ax, "draws", "patches")
    assert sum(p.get_height() for p in bars) == np.isfinite(draws["map"]).sum() == 40
    # the draws fill the axis and each bin is wide enough to see at the figure's resolution
    x0, x1 = ax.get_xlim()
    assert spread >= figures.ink.MIN_SHARE * (x1 - x0) * 0.99
    widths = pixel_widths(ax, bars)
    assert widths.min() >= 3.0, widths.min()
    assert bars[0].get_edgecolor() != (1.0, 1.0, 1.0, 1.0) and bars[0].get_linewidth() < 1  # no white edge over it
    assert ax.get_xlabel() == "AUC" and ax.get_ylabel() == "bootstrap draws" and strip.get_xlabel().startswith("AUC")
    check_legends_off_the_data(fig)


def test_auc_bootstrap_keeps_a_near_control_on_the_histogram(auc_scored):
    _, result, draws, _, _ = auc_scored
    near = json.loads(dumps(result))
    near["control"]["auc"] = float(np.median(draws["map"])) - 0.5 * np.ptp(draws["map"])
    fig = rendered(figures.auc_bootstrap(near, draws))
    ax, strip = histogram_axes(fig)
    assert strip is None and len(fig.axes) == 1
    (control,) = by_gid(ax, "control")
    x0, x1 = ax.get_xlim()
    assert x0 < near["control"]["auc"] < x1 and list(control.get_xdata()) == [near["control"]["auc"]] * 2
    assert pixel_widths(ax, by_gid(ax, "draws", "patches")).min() >= 3.0
    check_legends_off_the_data(fig)


def test_auc_compare_draws_the_paired_difference(auc_scored):
    _, _, _, paired, pdraws = auc_scored
    cmp_ = paired["bootstrap"]["compare"]
    fig = rendered(figures.auc_compare(paired, pdraws))
    ax, strip = histogram_axes(fig)
    (diff,) = by_gid(ax, "difference")
    assert list(diff.get_xdata()) == [cmp_["difference"]] * 2
    (zero,) = by_gid(strip or ax, "zero")
    assert list(zero.get_xdata()) == [0.0, 0.0]
    assert f"{100 * cmp_['share_draws_map_not_ahead']:.1f} %" in ax.get_title()
    assert pixel_widths(ax, by_gid(ax, "draws", "patches")).min() >= 3.0
    assert ax.get_xlabel().startswith("AUC difference")
    check_legends_off_the_data(fig)
    both = rendered(figures.auc_draws(paired, pdraws))
    assert [len(by_gid(a, "difference")) for a in both.axes if by_gid(a, "draws", "patches")] == [0, 1]
    for a in both.axes:
        if by_gid(a, "draws", "patches"):
            assert pixel_widths(a, by_gid(a, "draws", "patches")).min() >= 3.0
    check_legends_off_the_data(both)
    assert len([a for a in figures.auc_draws(*auc_scored[1:3]).axes if by_gid(a, "draws", "patches")]) == 1


def test_auc_compare_marks_a_far_zero_on_the_strip(auc_scored):
    """A difference far from zero (a much better map): zero goes to the strip, the draws keep the axis."""
    _, _, _, paired, pdraws = auc_scored
    far = json.loads(dumps(paired))
    shifted = dict(pdraws, difference=pdraws["difference"] + 0.3)
    d = shifted["difference"][np.isfinite(shifted["difference"])]
    far["bootstrap"]["compare"]["ci95"] = [round(float(v), 4) for v in np.percentile(d, [2.5, 97.5])]
    far["bootstrap"]["compare"]["difference"] += 0.3
    fig = rendered(figures.auc_compare(far, shifted))
    ax, strip = histogram_axes(fig)
    assert strip is not None and by_gid(ax, "zero") == []
    (zero,) = by_gid(strip, "zero")
    assert list(zero.get_xdata()) == [0.0, 0.0] and strip.get_xlim()[0] < 0.0
    assert ax.get_xlim()[0] > 0.0
    assert pixel_widths(ax, by_gid(ax, "draws", "patches")).min() >= 3.0


def test_auc_figures_refuse_an_empty_chart(seg, auc_scored):
    from segscore.ink import auc

    plain = auc.score_files(str(seg["map"]), seg["labels"], seg["mask"])
    with pytest.raises(ScoreError, match="has no bootstrap") as exc:
        figures.auc_bootstrap(plain, None)
    one_line(exc)
    _, result, draws, _, _ = auc_scored
    with pytest.raises(ScoreError, match="no paired comparison"):
        figures.auc_compare(result, draws)
    null = json.loads(dumps(result))
    null["bootstrap"]["ci95"] = [None, None]
    null["notes"]["bootstrap.ci95"] = "no bootstrap draw held both ink and background pixels"
    with pytest.raises(ScoreError, match=r"bootstrap\.ci95 is null \(no bootstrap draw held both") as exc:
        figures.auc_bootstrap(null, draws)
    one_line(exc)
    with pytest.raises(ScoreError, match="return_draws=True"):
        figures.auc_bootstrap(result, None)
    with pytest.raises(ScoreError, match="not this result's"):
        figures.auc_bootstrap(result, {"map": draws["map"] + 0.01})


# ---------------------------------------------------------------------------------------------
# objects, fibers, curvilinear, leaderboard


def test_objects_ap_points_are_the_results_sweep(objects_pair):
    from segscore.objects.metrics import score_segmentation

    result = score_segmentation(*objects_pair["arrays"])
    fig = figures.objects_ap(result)
    (ax,) = fig.axes
    (line,) = by_gid(ax, "ap")
    thresholds = [round(0.5 + 0.05 * k, 2) for k in range(9)]
    np.testing.assert_allclose(line.get_xdata(), thresholds)
    assert list(line.get_ydata()) == [result[f"ap_{t:g}"] for t in thresholds]
    assert list(line.get_ydata()) != sorted(line.get_ydata())  # AP falls as the IoU rises: a real sweep
    (mean,) = by_gid(ax, "ap_mean")
    assert mean.get_ydata()[0] == result["ap_mean"]
    (match,) = by_gid(ax, "match_iou")
    assert match.get_xdata()[0] == result["match_iou"] == 0.5
    assert ax.get_xlabel() == "IoU threshold" and "TP / (TP + FP + FN)" in ax.get_ylabel()
    assert ax.get_title().startswith("AP against the IoU threshold")
    check_legends_off_the_data(fig)


def test_objects_ap_refuses_an_empty_chart(objects_pair):
    from segscore.objects.metrics import score_segmentation

    t, _ = objects_pair["arrays"]
    result = score_segmentation(np.zeros_like(t), np.zeros_like(t))
    with pytest.raises(ScoreError, match=r"ap_0\.5 is null \(neither image has an object\)") as exc:
        figures.objects_ap(result)
    one_line(exc)
    with pytest.raises(ScoreError, match="not an objects result"):
        figures.objects_ap({"f1": 0.5})


def test_fiber_erl_bars_are_the_cards_values(fiber_target):
    from segscore.fibers.card import score_fibers

    card = score_fibers(fiber_target["target"], fiber_target["labels"])
    fig = figures.fiber_erl(card)
    (ax,) = fig.axes
    assert "oracle" not in card["floors"] and card["oracle"]["erl"] == 9.0
    for row_id, row in [("prediction", card["metrics"])] + list(card["floors"].items()) + [("oracle", card["oracle"])]:
        for key in ("erl", "erl_merge_penalized"):
            bars = by_gid(ax, f"{row_id}:{key}", "patches")
            if row.get(key) is None:
                assert bars == [], (row_id, key)  # a null is no bar, never a bar of 0
            else:
                (bar,) = bars
                assert bar.get_height() == pytest.approx(row[key]), (row_id, key)
    assert by_gid(ax, "floor_single_instance:erl_merge_penalized", "patches") == []
    (oracle,) = by_gid(ax, "class_oracle_erl")
    assert oracle.get_ydata()[0] == card["class_oracle_erl"] == 9.0
    assert [t.get_text() for t in ax.get_xticklabels()] == ["labels.npy", "connected_components",
                                                             "single_instance", "oracle"]
    assert "null" in [t.get_text() for t in ax.texts]
    assert ("BELOW" in ax.get_title()) == card["below_baseline"]
    assert "ERL" in ax.get_ylabel()
    check_legends_off_the_data(fig)


def test_fiber_erl_refuses_a_card_without_erl(fiber_target):
    from segscore.fibers.card import score_fibers

    card = score_fibers(fiber_target["target"], fiber_target["nothing"])
    assert card["metrics"]["erl"] is None
    with pytest.raises(ScoreError, match=r"metrics\.erl is null \(") as exc:
        figures.fiber_erl(card)
    assert card["notes"]["metrics.erl"].splitlines()[0] in one_line(exc)


def test_audit_bars_are_the_cells_coloured_by_label():
    from matplotlib.colors import to_rgba

    from segscore.figures.curvilinear import LABEL_COLOURS

    result = audit_result()
    fig = figures.audit_bars(result)
    assert len(fig.axes) == 2
    top, bottom = fig.axes
    assert top.get_title() == "vs traceable length" and bottom.get_title() == "vs conductance_twosided"
    bars = [p for ax in fig.axes for p in ax.patches if p.get_gid()]
    defined = [f for f in result["findings"] if f["label"] != "undefined"]
    assert len(bars) == len(defined) == 6
    for f in defined:
        ax = top if f["cost"] == "traceable_frac" else bottom
        key = f"{f['cost']}:{f['operator']}:{f['metric']}"
        (bar,) = by_gid(ax, key, "patches")
        assert bar.get_height() == pytest.approx(f["aligned_rho"])
        assert bar.get_facecolor()[:3] == pytest.approx(to_rgba(LABEL_COLOURS[f["label"]])[:3])
        ci = by_gid(ax, f"ci:{key}")
        if f["ci_lo"] is None:
            assert ci == []
        else:
            assert list(ci[0].get_ydata()) == [f["ci_lo"], f["ci_hi"]]
    (cross,) = by_gid(top, "undefined:traceable_frac:bridge:hd95")
    assert cross.get_ydata()[0] == 0.0
    assert [t.get_text() for t in top.get_xticklabels()] == ["dice", "hd95"]
    only = figures.audit_bars(result, costs="conductance_twosided")
    assert len(only.axes) == 1
    assert "crosses at 0" in fig.get_suptitle()  # only where a cross is drawn
    assert "crosses" not in only.get_suptitle()
    assert all("ρ" in ax.get_ylabel() for ax in fig.axes)
    check_legends_off_the_data(fig)


def test_audit_bars_refuse_an_empty_chart():
    result = audit_result()
    with pytest.raises(ScoreError, match="no findings") as exc:
        figures.audit_bars({**result, "findings": []})
    one_line(exc)
    undefined = [dict(f, label="undefined", aligned_rho=None) for f in result["findings"]]
    with pytest.raises(ScoreError, match="every cell of the audit is undefined"):
        figures.audit_bars({**result, "findings": undefined})
    with pytest.raises(ScoreError, match="'nope' is not in the audit"):
        figures.audit_bars(result, costs=["nope"])


ROWS = [{"model": "unet", "target": "a", "metric": "val_f1", "value": 0.61,
         "floors": {"all_positive": 0.28, "uniform_random": 0.27}},
        {"model": "unet", "target": "b", "metric": "val_f1", "value": None, "note": "degenerate",
         "floors": {"all_positive": 0.30, "uniform_random": None}},
        {"model": "resnet", "target": "a", "metric": "val_f1", "value": 0.55, "floors": {"all_positive": 0.28}}]


def test_leaderboard_bars_are_the_rows():
    fig = figures.leaderboard(ROWS)
    (ax,) = fig.axes
    bars = [p for p in ax.patches if p.get_gid()]
    n_numbers = sum(1 for r in ROWS for v in [r["value"], *r["floors"].values()] if v is not None)
    assert len(bars) == n_numbers == 6
    assert by_gid(ax, "value:0", "patches")[0].get_height() == 0.61
    assert by_gid(ax, "value:1", "patches") == []  # a null value is no bar
    assert by_gid(ax, "floor:1:all_positive", "patches")[0].get_height() == 0.30
    assert by_gid(ax, "floor:1:uniform_random", "patches") == []
    a0 = by_gid(ax, "floor:0:all_positive", "patches")[0].get_facecolor()
    assert by_gid(ax, "floor:2:all_positive", "patches")[0].get_facecolor() == a0  # one colour per floor name
    assert ax.get_ylabel() == "val_f1"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["unet\na", "unet\nb", "resnet\na"]
    assert ax.get_title() == "val_f1 per model beside its floors"
    check_legends_off_the_data(fig)
    bare = figures.leaderboard([{k: v for k, v in r.items() if k != "floors"} for r in ROWS])
    assert bare.axes[0].get_title() == "val_f1 per model" and bare.axes[0].get_ylabel() == "val_f1"
    mixed = figures.leaderboard([dict(ROWS[0], metric="roc_auc"), ROWS[2]])
    assert mixed.axes[0].get_ylabel() == "roc_auc / val_f1"
    assert figures.leaderboard(ROWS, metric="F1 at the best threshold").axes[0].get_ylabel() == \
        "F1 at the best threshold"


def test_leaderboard_takes_report_bars():
    """The rows of Report.bars (label, headline, references, roles) are drawn as they come."""
    bars = [{"label": "m1 / a", "id": "j1", "tags": {}, "command": "fibers", "headline": "erl", "value": 7.5,
             "references": {"connected_components": 3.0, "oracle": 9.0},
             "roles": {"connected_components": "floor", "oracle": "oracle"}},
            {"label": "m2 / a", "id": "j2", "tags": {}, "command": "fibers", "headline": "erl", "value": None,
             "references": {"connected_components": 3.0, "oracle": None},
             "roles": {"connected_components": "floor", "oracle": "oracle"}}]
    fig = figures.leaderboard(bars)
    (ax,) = fig.axes
    assert by_gid(ax, "value:0", "patches")[0].get_height() == 7.5 and by_gid(ax, "value:1", "patches") == []
    assert by_gid(ax, "floor:0:oracle", "patches")[0].get_height() == 9.0
    assert by_gid(ax, "floor:1:oracle", "patches") == []
    assert ax.get_ylabel() == "erl" and ax.get_title() == "fibers: erl per model beside its floors and oracle"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["model's erl", "floor connected_components", "oracle"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["m1 / a", "m2 / a"]
    rows, title = figures.board_rows(bars)
    assert title == "fibers: erl" and rows[0]["model"] == "m1 / a" and rows[0]["floors"]["oracle"] == 9.0
    control = [{"label": "m", "command": "auc", "headline": "map_auc", "value": 0.8, "references": {"control": 0.5},
                "roles": {"control": "control"}}]
    c = figures.leaderboard(control).axes[0]
    assert c.get_title() == "auc: map_auc per model beside its control"
    assert [t.get_text() for t in c.get_legend().get_texts()] == ["model's map_auc", "control"]
    with pytest.raises(ScoreError, match="roles must map"):
        figures.leaderboard([dict(ROWS[0], roles={"all_positive": "ceiling"})])


def test_leaderboard_refuses_an_empty_chart_and_bad_rows():
    with pytest.raises(ScoreError, match="no leaderboard rows"):
        figures.leaderboard([])
    with pytest.raises(ScoreError, match=r"every leaderboard row's value is null \(degenerate\)") as exc:
        figures.leaderboard([ROWS[1]])
    one_line(exc)
    with pytest.raises(ScoreError, match="row 1 has no model"):
        figures.leaderboard([ROWS[0], {"value": 1.0}])
    with pytest.raises(ScoreError, match="floor f = nan is not a finite"):
        figures.leaderboard([{"model": "m", "value": 1.0, "floors": {"f": float("nan")}}])


def test_every_figure_has_a_small_png_in_the_docs_made_by_the_script_beside_it():
    """docs/figures holds a PNG of each drawing function (under 100 KB), and make_figures.py writes each,
    drawn by the function itself or by the ``plot()`` of a ``segscore.api`` result (never an older
    per-family function)."""
    docs = REPO / "docs" / "figures"
    script = (docs / "make_figures.py").read_text()
    drawn = ["target_curves", "auc_bootstrap", "auc_compare", "auc_draws", "objects_ap", "fiber_erl", "audit_bars",
             "leaderboard"]
    assert set(drawn) <= set(figures.__all__)
    for name in drawn:
        png = docs / f"{name}.png"
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and 1000 < len(data) < 100 * 1024, (name, len(data))
        writes = [line for line in script.splitlines() if f'"{name}.png"' in line]
        assert writes and (f"figures.{name}(" in script or any(".plot()" in line for line in writes)), name
    assert "segscore.api" in script or "import api" in script
    from tests.test_docs import OLDER

    assert not [old for old in OLDER if re.search(r"(?<![\w.])" + re.escape(old) + r"\b", script)]


# ---------------------------------------------------------------------------------------------
# the command line: --plot FILE.png|svg


def command_lines(ink_target, seg, objects_pair, fiber_target):
    """Each command with --plot, scoring the inputs above."""
    return {
        "target": ["target", ink_target["pred"], ink_target["target"]],
        "auc": ["auc", seg["map"], "--labels", seg["labels"], "--mask", seg["mask"], "--control", seg["rev"],
                "--bootstrap", "25", "--block-px", "9", "--compare", seg["other"]],
        "objects": ["objects", objects_pair["truth"], objects_pair["pred"]],
        "fibers": ["fibers", fiber_target["labels"], fiber_target["target"]],
        "audit": ["audit", "--cases", AUDIT_FIXTURE, "--n-boot", "40", "--min-units", "3", "--min-cases", "3"],
    }


@pytest.mark.parametrize("command", ["target", "auc", "objects", "fibers", "audit"])
def test_plot_writes_png_and_svg_and_leaves_the_output_alone(cli, command, tmp_path, ink_target, seg, objects_pair,
                                                             fiber_target):
    argv = command_lines(ink_target, seg, objects_pair, fiber_target)[command]
    code, plain, err = cli(*argv, "--json")
    assert code == 0, err
    code, text, err = cli(*argv)
    assert code == 0, err
    for fmt in ("png", "svg"):
        out = tmp_path / f"fig.{fmt}"
        code, got, err = cli(*argv, "--json", "--plot", out, "--json-out", tmp_path / "r.json")
        assert code == 0 and err == "", err
        assert got == plain  # the JSON is unchanged by --plot
        assert json.loads((tmp_path / "r.json").read_text()) == json.loads(plain)
        check_file(out, fmt)
    code, got, err = cli(*argv, "--plot", tmp_path / "text.png")
    assert code == 0 and got == text  # and so is the text
    check_file(tmp_path / "text.png", "png")


@pytest.mark.parametrize("command", ["target", "auc", "objects", "fibers", "audit"])
def test_a_bad_plot_suffix_is_a_one_line_usage_error(cli, command, tmp_path, ink_target, seg, objects_pair,
                                                     fiber_target):
    argv = command_lines(ink_target, seg, objects_pair, fiber_target)[command]
    code, out, err = cli(*argv, "--plot", tmp_path / "fig.pdf")
    one_line_error(code, out, err, "argument --plot")
    assert err.startswith(f"segscore {command}: argument --plot: ") and ".png or .svg" in err
    assert not (tmp_path / "fig.pdf").exists()


def test_plot_of_an_empty_chart_warns_and_the_score_stands(cli, tmp_path, ink_target, seg, objects_pair,
                                                            fiber_target):
    """A null headline (with its note) is a score, exit 0 (the result contract): the JSON is
    written, no figure, one warning line saying why; what --plot can never draw is refused first."""
    fig, js = tmp_path / "fig.png", tmp_path / "r.json"
    empty = [
        (["target", ink_target["pred"], ink_target["no_ink"]], "target", "metrics.roc_auc is null"),
        (["objects", objects_pair["empty"], objects_pair["empty"]], "objects", "ap_0.5 is null"),
        (["fibers", fiber_target["nothing"], fiber_target["target"]], "fibers", "metrics.erl is null"),
    ]
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"format": "segscore-case-table", "version": 1, "cases": [
        {"unit": "a.png", "operator": "break", "severity": 0.1, "acted": True, "traceable_frac": 0.5, "dice": 0.9}]}))
    empty.append((["audit", "--cases", cases], "audit", "no findings"))
    for argv, command, fragment in empty:
        code, out, err = cli(*argv, "--plot", fig, "--json-out", js)
        assert code == 0, (argv, err)
        lines = [x for x in err.splitlines() if "--plot" in x]
        assert len(lines) == 1 and lines[0].startswith(f"segscore {command}: warning: --plot {fig} not drawn: ")
        assert fragment in lines[0], (argv, err)
        assert js.exists() and not fig.exists(), argv
        js.unlink()
    code, out, err = cli("auc", seg["map"], "--labels", seg["labels"], "--mask", seg["mask"], "--plot", fig,
                         "--json-out", js)  # nothing to draw, ever: refused before the work
    one_line_error(code, out, err, "--bootstrap N")
    assert not fig.exists() and not js.exists()


def test_plot_is_refused_before_the_work_without_matplotlib(cli, tmp_path, monkeypatch, objects_pair):
    import importlib.util

    import segscore.objects.metrics as M

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    monkeypatch.setattr(M, "score_segmentation", lambda *a, **k: pytest.fail("scored before refusing"))
    code, out, err = cli("objects", objects_pair["truth"], objects_pair["pred"], "--plot", tmp_path / "f.png")
    one_line_error(code, out, err, "segscore[plot]")
