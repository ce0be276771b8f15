"""One result contract for every family (docs/concepts.md, "Results: nulls and notes").

Each command's ``--json`` on degenerate inputs: ``notes`` is present at the top level, every
null metric has a note at its dotted path (a row's nulls a ``reason`` in the row), every note
points at a null, fields null because an input was not given have none, nothing is NaN, and no
nested part keeps a ``notes`` of its own. The JSON writer refuses NaN and inf (a bug: exit 1).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.io.results import NonFiniteError, dumps, jsonable, lift_notes, write_json


def _no_constant(text):
    raise AssertionError(f"JSON holds {text}")


def parse(out: str) -> dict:
    """The JSON of a command, refusing NaN and Infinity."""
    return json.loads(out, parse_constant=_no_constant)


def null_paths(result: dict, not_given=()) -> tuple[set, list]:
    """``(paths of null fields outside rows, problems found in rows)``; a list whose items are all
    null counts as one null field at the list's path."""
    nulls: set = set()
    problems: list = []

    def walk(obj, path):
        if isinstance(obj, dict):
            if path and "notes" in obj:
                problems.append(f"{path[:-1]}: a nested part keeps its own notes")
            if "reason" in obj:  # a row: its nulls are explained in its own reason
                reason = obj["reason"]
                for k, v in obj.items():
                    if v is None and k != "reason" and f"{path}{k}" not in not_given:
                        ok = (k in reason) if isinstance(reason, dict) else bool(reason)
                        if not ok:
                            problems.append(f"{path}{k}: null in a row without a reason")
                return
            for k, v in obj.items():
                if not path and k == "notes":
                    continue
                walk(v, f"{path}{k}.")
        elif isinstance(obj, list):
            if obj and all(v is None for v in obj):
                nulls.add(path[:-1])
                return
            for i, v in enumerate(obj):
                walk(v, f"{path}{i}.")
        elif obj is None:
            nulls.add(path[:-1])

    walk(result, "")
    return nulls - set(not_given), problems


def check_contract(result: dict, not_given=()) -> dict:
    """Assert the contract on a parsed result; returns its notes."""
    assert isinstance(result.get("notes"), dict), "no top-level notes"
    notes = result["notes"]
    nulls, problems = null_paths(result, not_given)
    assert not problems, problems
    missing = sorted(nulls - set(notes))
    assert not missing, f"null without a note: {missing}"
    stray = sorted(set(notes) - nulls)
    assert not stray, f"note on a field that is not null: {stray}"
    for path in not_given:
        assert path not in notes, f"{path} is null because it was not given: no note"
    assert all(isinstance(v, str) and v and "\n" not in v for v in notes.values())
    return notes


def run_json(cli, *args, code=0):
    got, out, err = cli(*args, "--json")
    assert got == code, err
    return parse(out)


# ------------------------------------------------------------------ ink: segscore auc

@pytest.fixture
def ink_seg(tmp_path):
    import tifffile

    from tests.ink.helpers import segment, write_levels

    pred, ink, mask = segment((50, 70), seed=21)
    tifffile.imwrite(tmp_path / "MAP.tif", pred)
    tifffile.imwrite(tmp_path / "REV.tif", pred[::-1].copy())
    none = np.zeros_like(ink, np.uint8)
    return {"map": tmp_path / "MAP.tif", "rev": tmp_path / "REV.tif",
            "labels": write_levels(tmp_path / "inklabels.zarr", {"2": ink.astype(np.uint8)}),
            "no_ink": write_levels(tmp_path / "noink.zarr", {"2": none}),
            "mask": write_levels(tmp_path / "supervision.zarr", {"2": mask.astype(np.uint8)}),
            "no_mask": write_levels(tmp_path / "nomask.zarr", {"2": none})}


def test_auc_no_ink_in_the_mask(cli, ink_seg):
    r = run_json(cli, "auc", ink_seg["map"], "--labels", ink_seg["no_ink"], "--mask", ink_seg["mask"],
                 "--control", ink_seg["rev"])
    notes = check_contract(r, not_given=("crop",))
    assert r["forward"]["auc"] is None and r["control"]["auc"] is None
    assert set(notes) == {"forward.auc", "control.auc"} and "no ink pixel" in notes["forward.auc"]


def test_auc_empty_mask_and_not_given_inputs(cli, ink_seg):
    r = run_json(cli, "auc", ink_seg["map"], "--labels", ink_seg["labels"], "--mask", ink_seg["no_mask"])
    notes = check_contract(r, not_given=("files.control", "crop"))
    assert r["files"]["control"] is None and set(notes) == {"forward.auc"}
    assert "no ink or background pixel" in notes["forward.auc"]


def test_auc_defined_has_empty_notes_and_refusals_stay(cli, ink_seg):
    r = run_json(cli, "auc", ink_seg["map"], "--labels", ink_seg["labels"], "--mask", ink_seg["mask"],
                 "--bootstrap", "20", "--block-px", "9", "--compare", ink_seg["rev"])
    assert check_contract(r, not_given=("files.control", "crop")) == {}
    code, _, err = cli("auc", ink_seg["map"], "--labels", ink_seg["no_ink"], "--mask", ink_seg["mask"],
                       "--bootstrap", "20")
    assert code == 2 and "one class" in err  # kit refuses a one-class bootstrap: the refusal stays
    code, _, err = cli("auc", ink_seg["map"], "--labels", ink_seg["labels"], "--mask", ink_seg["mask"],
                       "--inner", "40")
    assert code == 2 and "leaves nothing" in err


def test_auc_api_results_carry_notes():
    from segscore.ink import auc

    pred = np.arange(1, 101, dtype=np.uint8).reshape(10, 10)
    card = auc.score_array(pred, np.zeros((10, 10), bool), np.ones((10, 10), bool))
    assert card["auc"] is None and set(card["notes"]) == {"auc"}


# ------------------------------------------------------------------ ink targets and columns

@pytest.fixture
def one_class_target(tmp_path):
    from tests.targets.helpers import make_target, reading_map, write_png

    folder, ink, _ = make_target(tmp_path / "t1")
    write_png(folder / "gt_ink.png", np.zeros(ink.shape, np.uint8))  # no ink anywhere: one class
    write_png(tmp_path / "pred.png", reading_map(ink))
    return folder, tmp_path / "pred.png"


def test_target_one_class_mask(cli, one_class_target):
    folder, pred = one_class_target
    r = run_json(cli, "target", pred, folder)
    notes = check_contract(r)
    assert r["metrics"]["roc_auc"] is None and "one class" in notes["metrics.roc_auc"]
    assert "floors.uniform_random.roc_auc" in notes and "floors.all_positive.average_precision" in notes
    code, out, _ = cli("target", pred, folder)
    assert code == 0 and "are null: degenerate" in out


def test_placement_constant_prediction_and_no_tile(cli, tmp_path):
    from tests.targets.helpers import write_png

    folder = tmp_path / "t"
    folder.mkdir()
    gt = np.zeros((64, 64), np.uint8)
    gt[20:30, 20:30] = 255
    write_png(folder / "gt_ink.png", gt)
    (folder / "meta.json").write_text("{}")
    write_png(tmp_path / "flat.png", np.full((64, 64), 128, np.uint8))
    r = run_json(cli, "placement", tmp_path / "flat.png", folder)
    notes = check_contract(r, not_given=("recorded_placement",))
    assert "constant" in notes["offset_px"] and "tile_sd_dy" in notes
    code, out, _ = cli("placement", tmp_path / "flat.png", folder)
    assert code == 0 and "no peak (the prediction or the label is constant" in out


def test_target_empty_mask(cli, one_class_target, tmp_path):
    from tests.targets.helpers import write_png

    folder, pred = one_class_target
    write_png(folder / "mask.png", np.zeros((48, 64), np.uint8))
    r = run_json(cli, "target", pred, folder, "--no-floors")
    notes = check_contract(r)
    assert r["metrics"]["positive_rate"] is None and "metrics.positive_rate" in notes


def test_columns_too_few_columns(cli, tmp_path):
    from tests.columns.helpers import make_column_target

    folder, _ = make_column_target(tmp_path / "cols")
    np.save(tmp_path / "pred.npy", np.full((220, 100), 0.3))
    r = run_json(cli, "columns", tmp_path / "pred.npy", folder, "--origin", "20", "220")
    notes = check_contract(r)
    assert "too few" in notes["metrics.col_gutter_auc"] and "metrics.col_gutter_pixel_auc" in notes
    assert "metrics.traces_mean_ratio" in notes and "floors.uniform_random.col_gutter_auc" in notes
    code, out, _ = cli("columns", tmp_path / "pred.npy", folder, "--origin", "20", "220")
    assert code == 0 and "note: col_gutter_auc is null: " in out


def test_columns_line_period_and_traces(cli, tmp_path):
    from tests.columns.helpers import make_column_target, reading_prediction

    folder, _ = make_column_target(tmp_path / "cols")
    np.save(tmp_path / "pred.npy", reading_prediction())
    r = run_json(cli, "columns", tmp_path / "pred.npy", folder, "--no-floors")
    notes = check_contract(r)
    traces = [i for i, c in enumerate(r["per_column"]) if c["status"] == "traces"]
    assert traces and all(f"per_column.{i}.line_period_peak" in notes for i in traces)
    assert r["metrics"]["line_period_peak_mean"] is not None and r["metrics"]["traces_mean_ratio"] is not None


# ------------------------------------------------------------------ objects and held-out sets

@pytest.fixture
def label_pair(tmp_path):
    import tifffile

    from tests.objects.helpers import synthetic_pair

    t, _ = synthetic_pair(seed=2, n=10, shape=(60, 60))
    tifffile.imwrite(tmp_path / "t.tif", t)
    np.save(tmp_path / "empty.npy", np.zeros_like(t))
    return tmp_path


@pytest.mark.parametrize("truth, pred", [("t.tif", "empty.npy"), ("empty.npy", "t.tif"),
                                         ("empty.npy", "empty.npy")])
def test_objects_empty_images(cli, label_pair, truth, pred):
    r = run_json(cli, "objects", label_pair / truth, label_pair / pred)
    notes = check_contract(r)
    assert notes  # something is always undefined here
    if truth == pred:
        assert "ap_0.5" in notes and "ap_mean" in notes


def test_holdout_rows_carry_reasons(cli, tmp_path):
    from tests.objects.test_holdout import write_set

    manifest = write_set(tmp_path, n=2)
    for p in (tmp_path / "pred").iterdir():  # every prediction empty
        p.unlink()
    for k in range(2):
        np.save(tmp_path / "pred" / f"f{k}.npy", np.zeros((96, 100), np.uint32))
    r = run_json(cli, "holdout", manifest, "--predictions", tmp_path / "pred", "--baseline", tmp_path / "base")
    notes = check_contract(r)
    assert r["finetuned"]["precision"] is None and "finetuned.precision" in notes
    assert all("precision" in row["reason"] for row in r["per_field"])
    row = {x["metric"]: x for x in r["rows"]}["precision"]
    assert row["finetuned"] is None and row["reason"].startswith("finetuned is null: no predicted objects")
    assert r["n_left_out"]["precision"] == 2 and "precision" not in r["vanilla_n_left_out"]
    r = run_json(cli, "holdout", manifest, "--verify")
    assert r["notes"] == {}


# ------------------------------------------------------------------ fibers

@pytest.fixture
def fiber_target(tmp_path):
    from tests.fibers.helpers import write_target

    shape = (10, 12, 24)
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    mask = np.zeros(shape, bool)
    mask[4, 3:6, :] = True
    np.save(tmp_path / "empty.npy", np.zeros(shape, np.int32))
    return write_target(tmp_path / "fibers_tiny_10", fibers, mask), tmp_path / "empty.npy"


def test_fibers_empty_prediction(cli, fiber_target, tmp_path):
    target, empty = fiber_target
    r = run_json(cli, "fibers", empty, target, "--recompute-floors")
    notes = check_contract(r)
    assert {"metrics.erl", "metrics.erl_merge_penalized", "metrics.precision"} <= set(notes)
    assert "notes" not in r["metrics"]
    code, out, _ = cli("fibers", empty, target, "--recompute-floors", "--json-out", tmp_path / "card.json")
    assert code == 0 and "note: erl is null: " in out
    agg = run_json(cli, "fibers-aggregate", tmp_path / "card.json")
    assert check_contract(agg) == {} and agg["n_null_erl"] == 1 and agg["erl_mean"] == 0.0


# ------------------------------------------------------------------ curvilinear

@pytest.fixture
def curve_masks(tmp_path):
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree((64, 64), seed=1, depth=3)
    stub = np.zeros((20, 20), bool)
    stub[10, 10:13] = True  # pruned away at prune_px 5: no source, no sinks
    np.save(tmp_path / "gt.npy", gt)
    np.save(tmp_path / "empty.npy", np.zeros_like(gt))
    np.save(tmp_path / "stub.npy", stub)
    return tmp_path


def test_curve_degenerate_reference(cli, curve_masks):
    r = run_json(cli, "curve", curve_masks / "stub.npy", "--gt", curve_masks / "stub.npy")
    notes = check_contract(r, not_given=("voxel_size", "spacing_unit", "prune_length"))
    assert {"conductance_frac", "conductance_twosided", "traceable_single_frac"} <= set(notes)
    code, out, _ = cli("curve", curve_masks / "stub.npy", "--gt", curve_masks / "stub.npy")
    assert code == 0 and f"note: conductance_frac is null: {notes['conductance_frac']}" in out.splitlines()


def test_curve_empty_prediction_all_metrics(cli, curve_masks):
    r = run_json(cli, "curve", curve_masks / "empty.npy", "--gt", curve_masks / "gt.npy", "--all-metrics")
    notes = check_contract(r, not_given=("voxel_size", "spacing_unit", "prune_length"))
    assert set(notes) == {"cbdice_star"} and r["traceable_frac"] == 0.0 and isinstance(r["betti_matching"], int)
    code, out, _ = cli("curve", curve_masks / "empty.npy", "--gt", curve_masks / "gt.npy")
    assert code == 0 and "note: the prediction is empty: every cost is 0" in out


# ------------------------------------------------------------------ the writer

@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan"), np.array([1.0, np.inf])])
def test_writer_refuses_nan_and_inf(tmp_path, bad):
    result = {"metrics": {"f1": bad}, "notes": {}}
    with pytest.raises(NonFiniteError, match=r"metrics\.f1"):
        dumps(result)
    with pytest.raises(NonFiniteError):
        write_json(tmp_path / "r.json", result)
    assert not (tmp_path / "r.json").exists()  # nothing written, not even a part
    assert issubclass(NonFiniteError, ValueError) and not issubclass(NonFiniteError, ScoreError)


def test_csv_writers_refuse_nan_too():
    from segscore.io.results import csv_text
    from segscore.objects.holdout import scorecard_csv

    with pytest.raises(NonFiniteError):
        csv_text([{"f1": float("nan")}])
    with pytest.raises(NonFiniteError):
        scorecard_csv([{"metric": "f1", "finetuned": float("nan"), "vanilla": 0.5, "delta": None}])


def test_writer_keeps_finite_values_and_none():
    assert jsonable({"a": np.float64(0.25), "b": None, "c": [np.int64(3)]}) == {"a": 0.25, "b": None, "c": [3]}
    assert math.isfinite(json.loads(dumps({"x": 1e308}))["x"])


def test_a_leaked_nan_is_a_crash_not_a_null(cli, monkeypatch):
    from segscore.fibers import card

    monkeypatch.setattr(card, "load_cards", lambda paths: [])
    monkeypatch.setattr(card, "aggregate_fiber_scores", lambda cards, names=None: {
        "size_class": 256, "n": 1, "tolerance": 2.0, "erl_mean": float("nan"), "erl_merge_penalized_mean": 0.0,
        "n_null_erl": 0, "notes": {}})
    code, out, err = cli("fibers-aggregate", "card.json", "--json")
    assert code == 1 and out == "" and "NonFiniteError" in err and "erl_mean" in err


def test_lift_notes_moves_nested_notes_to_dotted_paths():
    part = {"auc": None, "notes": {"auc": "no ink"}}
    result = {"forward": part, "rows": [{"x": None, "notes": {"x": "why"}}], "notes": {"top": "t"}}
    out = lift_notes(result)
    assert out == {"forward": {"auc": None}, "rows": [{"x": None}],
                   "notes": {"top": "t", "forward.auc": "no ink", "rows.0.x": "why"}}
    assert part == {"auc": None, "notes": {"auc": "no ink"}}  # the parts are not changed
    assert lift_notes({"a": 1}) == {"a": 1, "notes": {}}


# ------------------------------------------------------------------ the Result dict (notebooks)

def _results_of_each_family(tmp_path):
    """One public call per family, on tiny arrays: (name, result)."""
    from segscore.curvilinear.scoring import score as curve_score
    from segscore.ink.auc import score_array
    from segscore.objects.metrics import score_segmentation
    from segscore.objects.surface import surface_distances

    rng = np.random.default_rng(3)
    pred = rng.random((32, 32)).astype(np.float32)
    ink = rng.random((32, 32)) < 0.3
    mask = np.ones((32, 32), bool)
    truth = np.zeros((32, 32), np.int32)
    truth[4:12, 4:12], truth[18:28, 16:30] = 1, 2
    m = np.zeros((24, 24), bool)
    m[12, 2:22] = True
    return [("auc", score_array(pred, ink, mask)), ("objects", score_segmentation(truth, truth)),
            ("surface", surface_distances(truth > 0, np.zeros_like(truth))), ("curve", curve_score(m, m))]


def test_results_are_dicts_that_show_themselves(tmp_path):
    import pickle

    from segscore.io.results import Result

    for name, r in _results_of_each_family(tmp_path):
        assert type(r) is Result, name
        plain = json.loads(dumps(r))
        assert r == plain and isinstance(r, dict), name  # still the plain dict, still JSON
        back = pickle.loads(pickle.dumps(r))
        assert type(back) is Result and back == r, name
        text = repr(r)
        assert text.startswith("Result(") and len(text) < 800 and "note" in text, (name, text)
        html = r._repr_html_()
        assert html.startswith("<table>") and html.count("<tr>") >= 2, name
        for key, why in r["notes"].items():  # every note shows beside its field
            assert f"<code>{key}</code>" in html and why.replace("&", "&amp;").replace("<", "&lt;")[:20] in html


def test_result_repr_names_scalars_and_counts_notes():
    from segscore.io.results import REPR_FIELDS, Result

    r = Result({"auc": 0.123456789, "name": "<x>", "part": {"a": 1}, "notes": {"part.b": "why"},
                **{f"f{i}": i for i in range(REPR_FIELDS + 2)}})
    text = repr(r)
    assert "auc=0.123457" in text and "name=<x>" in text and "4 more" in text and "parts: part" in text
    assert "1 note)" in text
    html = r._repr_html_()
    assert "&lt;x&gt;" in html and "<code>part.b</code>" in html  # escaped; a note without its field still shown


def test_csv_rows_of_one_key_order_and_of_several():
    """One key order (a per-object table) writes the values as they are; rows of other orders or
    keys are written under the union of their keys; None is an empty field either way."""
    from segscore.io.results import csv_text

    assert csv_text([{"a": 1, "b": None, "c": 1.5}, {"a": 2, "b": "x,y", "c": None}]) == 'a,b,c\n1,,1.5\n2,"x,y",\n'
    assert csv_text([{"a": 1, "b": None}, {"b": 2, "a": 3, "c": True}]) == "a,b,c\n1,,\n3,2,True\n"
    assert csv_text([{"x": None}]) == 'x\n""\n' and csv_text([]) == ""
