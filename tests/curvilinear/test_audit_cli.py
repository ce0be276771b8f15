"""``segscore audit``: the report's layout, JSON and CSV fields, --cases re-analysis (curvicost's own
audit JSON, tests/data/curvicost/audit_fixture*.json), --cost-fn, refusals and option ranges."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from segscore.curvilinear.masks import save_mask
from tests.cli_checks import one_line_error
from tests.curvilinear.helpers import vessel_tree
from tests.test_result_contract import check_contract, parse

DATA = Path(__file__).resolve().parents[1] / "data" / "curvicost"
FIXTURE = DATA / "audit_fixture.json"
FIXTURE_3_5 = DATA / "audit_fixture_floors_3_5.json"
SHORT = ["--severities", "0.1,0.3,0.6", "--radius-scales", "0.7,1.3", "--boundary-fracs", "0.05,0.2", "--n-boot", "100"]
TINY = ["--severities", "0.3", "--radius-scales", "0.7", "--boundary-fracs", "0.1", "--n-boot", "20"]
CURVICOST_ROW = ["cost", "operator", "metric", "n", "n_units", "aligned_rho", "ci_lo", "ci_hi", "label", "reason",
                 "undefined", "inconclusive", "blind", "anti", "cost_constant"]


@pytest.fixture(scope="module")
def masks(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit_cli")
    out = []
    for i in range(4):
        save_mask(vessel_tree((96, 96), seed=10 + i), d / f"m{i}.png")
        out.append(str(d / f"m{i}.png"))
    return out


@pytest.fixture(scope="module")
def run_once(masks, tmp_path_factory):
    """One audit through the command: text, JSON file (with cases) and CSV."""
    from segscore.cli.main import main

    d = tmp_path_factory.mktemp("audit_cli_out")
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", *masks, *SHORT, "--include-cases", "--json-out", str(d / "a.json"),
                     "--csv", str(d / "a.csv")])
    return code, out.getvalue(), err.getvalue(), d


def _nan_none(v):
    return None if isinstance(v, float) and math.isnan(v) else v


# ------------------------------------------------------------------------------------------
# the report
# ------------------------------------------------------------------------------------------

def test_the_text_report_is_laid_out_as_curvicosts(run_once):
    code, out, err, d = run_once
    assert code == 0 and err == ""  # no progress: stderr is not a terminal
    result = json.loads((d / "a.json").read_text())
    roles, *lines = out.splitlines()  # the first line names the inputs' roles
    assert roles.startswith("masks: ") and len(roles.split()) == 5
    assert lines[1] == f"{result['n_cases']} cases from 4 reference mask(s)"
    assert lines[2] == "scored against:"
    assert lines[3] == "  traceable_frac         traceable length (reachable reference skeleton)"
    assert lines[4] == "  conductance_twosided   conductance (Kirchhoff, two-sided: excess is loss)"
    head = "  metric                break     bridge   truncate     radius   boundary     redraw"
    assert lines.count(head) == 2
    grid = lines[lines.index(head) + 1: lines.index(head) + 12]
    cell = r"(\s*\(\+?-?\d\.\d\d\)\?|\s+[+-]\d\.\d\d[ *!]|\s+undef|\s+--)"
    for row in grid:
        assert re.fullmatch(r"  \w+\s+" + cell * 5 + r"\s+(\d\.\d{3}|--)", row), row
    assert "(" in "".join(grid) and ")?" in "".join(grid)  # 4 masks: inconclusive at the paper's floors
    v = result["redraw_floor"]["values"]["conductance_twosided"]
    assert (f"  redraw floor of conductance_twosided: {v['median']:.3f} [min {v['min']:.3f}, max {v['max']:.3f}] "
            "over 4 mask(s)") in lines
    assert "  redraw floor of traceable_frac: 1.000 [min 1.000, max 1.000] over 4 mask(s)" in lines
    assert any(line.startswith("  every cell: sign-aligned Spearman ρ") for line in lines)
    assert lines.count("  operator  metric                ρ  [   lo,    hi]  cases  units  label") == 2
    assert any(re.fullmatch(r"  break     dice\s+\(?[+-]\d\.\d{3}\s+\[ [+-]\d\.\d\d,  [+-]\d\.\d\d\]\s+\d+\s+4  "
                            r"inconclusive \(<10 units.*\)", line) for line in lines)
    sc = result["scale"]
    assert (f"  scale: median vessel radius {sc['median_radius']:.1f} px; --prune-px 5 = "
            f"{sc['prune_in_radii']:.1f} vessel radii.") in lines
    legend = [line for line in lines if re.search(r"   \((\d+)\)$", line)]
    assert len(legend) == 5
    assert sum(int(re.search(r"\((\d+)\)$", x).group(1)) for x in legend) == len(result["findings"])
    assert any(line.startswith(f"  labels ({len(result['findings'])} cells;") for line in lines)
    assert any(line.startswith("⚠  bridge: ") for line in lines)  # why bridge has no cells


def test_the_scale_warning_and_no_redraw_column_without_the_floor(masks, cli):
    code, out, err = cli("audit", *masks[:3], *TINY, "--prune-px", "20", "--no-redraw-floor")
    assert code == 0, err
    assert "  metric                break     bridge   truncate     radius   boundary" in out.splitlines()
    assert "redraw" not in out
    assert "⚠  that is far from the ~2 radii" in out and "--prune-px 20 =" in out


def test_progress_shows_on_a_terminal_only(masks, cli, monkeypatch, capsys):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = cli("audit", masks[0], *TINY)
    assert code == 0 and re.search(r"audit: \d+/6 cases, \d+ s elapsed", err)
    for quiet in (["--quiet"], ["--json"]):
        code, out, err = cli("audit", masks[0], *TINY, *quiet)
        assert code == 0 and err == ""


# ------------------------------------------------------------------------------------------
# JSON and CSV
# ------------------------------------------------------------------------------------------

def test_json_is_the_apis_dict_with_curvicosts_fields(masks, cli):
    from segscore.curvilinear import audit

    code, out, err = cli("audit", *masks[:3], *TINY, "--cost", "traceable_frac", "--cost", "density_kept",
                         "--min-units", "3", "--min-cases", "3", "--json")
    assert code == 0 and err == ""
    got = parse(out)
    want = audit(masks[:3], severities=[0.3], radius_scales=[0.7], boundary_fracs=[0.1], n_boot=20,
                 costs=("traceable_frac", "density_kept"), min_units=3, min_cases=3)
    assert got == json.loads(json.dumps(want))
    for k in ("n_cases", "n_units", "has_ci", "min_units", "min_cases", "findings", "ladder", "scale",
              "redraw_floor", "operator_notes", "notes", "cost_labels", "cost_sided"):
        assert k in got
    assert got["cases"] is None and got["costs"] == ["traceable_frac", "density_kept"]
    assert all(list(f) == CURVICOST_ROW + ["redraw_metric", "redraw_cost"] for f in got["findings"])
    check_contract(got, not_given=("cases",))


def test_the_json_with_cases_keeps_the_contract_and_the_csv_is_the_findings(run_once):
    code, out, err, d = run_once
    result = parse((d / "a.json").read_text())
    check_contract(result)
    assert len(result["cases"]) == 4 * (3 * 3 + 2 + 2) and len(result["redraw_floor"]["cases"]) == 4
    rows = list(csv.DictReader((d / "a.csv").open()))
    assert list(rows[0]) == CURVICOST_ROW + ["redraw_metric", "redraw_cost"]
    assert len(rows) == len(result["findings"])
    for r, f in zip(rows, result["findings"]):
        assert r["label"] == f["label"] and r["redraw_metric"] == repr(f["redraw_metric"])
        assert r["aligned_rho"] == ("" if f["aligned_rho"] is None else repr(f["aligned_rho"]))
        assert r["blind"] == str(f["blind"])


def test_an_audit_without_cells_writes_a_csv_header(masks, cli, tmp_path):
    code, out, err = cli("audit", masks[0], *TINY, "--csv", tmp_path / "f.csv")
    assert code == 0, err
    assert "No correlations could be computed" in out
    assert (tmp_path / "f.csv").read_text().strip() == ",".join(CURVICOST_ROW + ["redraw_metric", "redraw_cost"])


def test_the_study_ladder_and_no_erl(masks, cli):
    code, out, err = cli("audit", masks[0], "--study-ladder", *TINY, "--no-erl", "--include-cases", "--json")
    assert code == 0, err
    r = parse(out)
    assert r["ladder"]["seeds"] == [0, 1, 2] and r["ladder"]["n_boot"] == 20 and r["n_boot"] == 20
    assert r["ladder"]["severities"]["break"] == [0.3]
    assert len([c for c in r["cases"] if c["operator"] == "break"]) == 3
    assert len([c for c in r["cases"] if c["operator"] == "radius"]) == 1
    assert not any("erl_star" in c or "node_recall" in c for c in r["cases"])
    code, out, err = cli("audit", masks[0], "--study-ladder", "--radius-scales", "0.7", "--boundary-fracs", "0.1",
                         "--severities", "0.3", "--seeds", "1", "--json")
    assert parse(out)["ladder"]["n_boot"] == 2000


# ------------------------------------------------------------------------------------------
# --cases
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, floors", [(FIXTURE, []), (FIXTURE_3_5, ["--min-units", "3", "--min-cases", "5"])])
def test_cases_reproduce_curvicosts_findings(path, floors, cli, tmp_path):
    """curvicost's own audit JSON (--include-cases), re-read: its 110 cells, rho and intervals
    to 1e-12, labels and counts exactly (audit_fixture_floors_3_5: curvicost's audit() on the
    same cases at lowered floors; its cases are those of audit_fixture.json)."""
    theirs = json.loads(path.read_text())
    code, out, err = cli("audit", "--cases", FIXTURE, *floors, "--json", "--csv", tmp_path / "f.csv")
    assert code == 0, err
    ours = parse(out)
    assert len(ours["findings"]) == len(theirs["findings"]) == 110
    for a, b in zip(ours["findings"], theirs["findings"]):
        for k in ("cost", "operator", "metric", "n", "n_units", "label", "undefined", "inconclusive", "blind", "anti",
                  "cost_constant"):
            assert a[k] == b[k], (a, b, k)
        for k in ("aligned_rho", "ci_lo", "ci_hi"):
            if _nan_none(b[k]) is None:
                assert a[k] is None
            else:
                assert a[k] == pytest.approx(b[k], abs=1e-12)
    assert (ours["n_cases"], ours["n_units"], ours["has_ci"]) == (theirs["n_cases"], theirs["n_units"], theirs["has_ci"])
    assert ours["scale"] == theirs.get("scale", ours["scale"]) and ours["ladder"]["n_boot"] == 1000
    assert ours["source"] == str(FIXTURE) and ours["redraw_floor"] is None
    check_contract(ours, not_given=("cases", "redraw_floor"))
    assert len(list(csv.DictReader((tmp_path / "f.csv").open()))) == 110
    code, text, err = cli("audit", "--cases", FIXTURE, *floors)
    assert code == 0 and "(findings recomputed from" in text.splitlines()[1]


def test_cases_read_back_segscores_own_json(run_once, cli, tmp_path):
    code, out, err, d = run_once
    first = json.loads((d / "a.json").read_text())
    code, out, err = cli("audit", "--cases", d / "a.json", "--json", "--n-boot", "100")
    assert code == 0, err
    again = parse(out)
    assert again["findings"] == first["findings"] and again["operator_notes"] == first["operator_notes"]
    assert again["redraw_floor"]["values"] == first["redraw_floor"]["values"]
    # without its cases, the file says how to get them
    (tmp_path / "nocases.json").write_text(json.dumps(dict(first, cases=None)))
    code, out, err = cli("audit", "--cases", tmp_path / "nocases.json")
    one_line_error(code, out, err, "--include-cases")


@pytest.mark.parametrize("extra, fragment", [
    (["m.png"], "MASK arguments"), (["--study-ladder"], "--study-ladder"), (["--cost-fn", "a:b"], "--cost-fn"),
    (["--processes", "2"], "--processes"), (["--prune-px", "3"], "--prune-px"),
])
def test_cases_refuse_the_options_of_scoring(extra, fragment, cli):
    code, out, err = cli("audit", "--cases", FIXTURE, *extra)
    one_line_error(code, out, err, fragment)


def test_cases_refuse_bad_files(cli, tmp_path):
    code, out, err = cli("audit", "--cases", tmp_path / "missing.json")
    one_line_error(code, out, err, "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    code, out, err = cli("audit", "--cases", tmp_path / "bad.json")
    one_line_error(code, out, err, "bad.json")
    (tmp_path / "cc.json").write_text(json.dumps({"findings": [], "cases": None}))
    code, out, err = cli("audit", "--cases", tmp_path / "cc.json")
    one_line_error(code, out, err, "--include-cases")


# ------------------------------------------------------------------------------------------
# --cost-fn and refusals
# ------------------------------------------------------------------------------------------

def test_cost_fn_from_the_current_folder(masks, cli, tmp_path, monkeypatch):
    (tmp_path / "clim.py").write_text("import numpy as np\n\ndef area(mask):\n    return float(mask.sum())\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("audit", *masks[:3], *TINY, "--cost-fn", "clim:area", "--cost-sided", "one", "--json")
    assert code == 0, err
    r = parse(out)
    assert r["costs"][-1] == "user:area" and r["cost_sided"]["user:area"] == "one"
    assert r["redraw_floor"]["values"]["user:area"]["n"] == 3
    code, text, err = cli("audit", *masks[:3], *TINY, "--cost-fn", "clim:area")
    assert "  user:area              user-supplied clim:area (two-sided fraction" in text
    assert "redraw floor of user:area:" in text


@pytest.mark.parametrize("body, spec, fragment", [
    (None, "no_such_module_abc:f", "cannot import no_such_module_abc"),
    ("def g(mask):\n    return 1.0\n", "MOD:f", "has no function f"),
    ("def f(mask):\n    raise KeyError('gone')\n", "MOD:f", "raised KeyError"),
    ("def f(mask):\n    return float('nan')\n", "MOD:f", "returned nan"),
    ("raise ImportError('broken module')\n", "MOD:f", "raised ImportError: broken module"),
    ("1/0\n", "MOD:f", "raised ZeroDivisionError"),
])
def test_cost_fn_refusals_are_one_line(body, spec, fragment, masks, cli, tmp_path):
    if body is not None:
        (tmp_path / "cf.py").write_text(body)
        spec = spec.replace("MOD", str(tmp_path / "cf.py"))
    code, out, err = cli("audit", *masks[:2], *TINY, "--cost-fn", spec)
    one_line_error(code, out, err, fragment)
    if "raised KeyError" in fragment or "nan" in fragment:
        assert "m0.png" in err  # the mask it failed on


def test_mask_refusals_are_one_line(masks, cli, tmp_path):
    code, out, err = cli("audit")
    one_line_error(code, out, err, "no reference masks")
    np.save(tmp_path / "empty.npy", np.zeros((30, 30), bool))
    code, out, err = cli("audit", masks[0], tmp_path / "empty.npy")
    one_line_error(code, out, err, "empty.npy: the mask is empty")
    (tmp_path / "junk.png").write_bytes(b"\x89PNG not really")
    code, out, err = cli("audit", masks[0], tmp_path / "junk.png")
    one_line_error(code, out, err, "junk.png")
    code, out, err = cli("audit", masks[0], tmp_path / "absent.png")
    one_line_error(code, out, err, "absent.png")
    code, out, err = cli("audit", masks[0], masks[0])
    one_line_error(code, out, err, "given twice")


BAD = [("--severities", "0"), ("--severities", "1.01"), ("--severities", "x"), ("--severities", ","),
       ("--severities", "0.1,0.1"), ("--radius-scales", "-1"), ("--radius-scales", "3.5"), ("--boundary-fracs", "inf"),
       ("--seeds", "0"), ("--seeds", "1.5"), ("--n-boot", "0"), ("--bootstrap", "-3"), ("--min-units", "-1"),
       ("--min-cases", "x"), ("--prune-px", "nan"), ("--prune-px", "-2"), ("--threads", "0"), ("--processes", "0"),
       ("--cost", "volume"), ("--cost-sided", "both")]


@pytest.mark.parametrize("option, value", BAD, ids=[" ".join(b) for b in BAD])
def test_bad_option_values_are_usage_errors(option, value, cli):
    code, out, err = cli("audit", "m.png", option, value)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("segscore audit: argument --"), err
    assert option in lines[0].split(":")[1], err


def test_processes_and_scheduler_exclude_each_other(cli):
    code, out, err = cli("audit", "m.png", "--processes", "2", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not allowed with" in err


_MODULES_AT_EXIT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('MODULES ' + ','.join(m for m in ('numba', 'scipy.linalg') "
    "if m in sys.modules) + '\\n'))\n"
    "from segscore.cli.main import entry\n"
    "sys.argv[0] = 'segscore'\n"
    "entry()\n")


@pytest.mark.parametrize("fan_out, want", [([], "numba,scipy.linalg"), (["--processes", "1"], ""),
                                           (["--processes", "1", "--profile", "P0", "--gt", "G"], "numba,scipy.linalg")])
def test_the_command_starts_numba_only_where_the_cases_run(masks, tmp_path, fan_out, want):
    """On threads the command's own process runs the kernels; with --processes the cases, the
    warm-up and the statistics run on the workers, and this process never starts numba, unless
    --profile asks for a profile, which runs here after the audit."""
    fan_out = [{"P0": masks[3], "G": masks[0]}.get(a, a) for a in fan_out]
    import os
    import subprocess
    import sys

    pytest.importorskip("distributed")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _MODULES_AT_EXIT, "audit", *masks[:3], *TINY, *fan_out,
                           "--json-out", str(tmp_path / "a.json")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line for line in proc.stderr.splitlines() if line.startswith("MODULES")] == [f"MODULES {want}"]
    assert json.loads((tmp_path / "a.json").read_text())["n_cases"] > 0


def test_cases_from_a_bare_table_keep_the_contract_and_name_the_file(cli, tmp_path):
    rows = [{"unit": f"u{i % 3}", "operator": "break", "traceable_frac": (i * 7 % 5) / 5, "dice": 1 - i / 20}
            for i in range(9)]
    (tmp_path / "t.json").write_text(json.dumps({"format": "segscore-case-table", "version": 1, "cases": rows}))
    code, out, err = cli("audit", "--cases", tmp_path / "t.json", "--json")
    assert code == 0, err
    r = parse(out)
    notes = check_contract(r, not_given=("cases", "redraw_floor"))
    assert set(notes) == {"ladder", "scale"} and r["findings"][0]["n"] == 9
    rows[4]["dice"] = "high"
    (tmp_path / "t.json").write_text(json.dumps(rows))
    code, out, err = cli("audit", "--cases", tmp_path / "t.json")
    one_line_error(code, out, err, "t.json: cases[4].dice")


def test_audit_ends_with_what_to_report_for_profiled_predictions(cli, tmp_path):
    from segscore.curvilinear import perturb
    from tests.curvilinear.helpers import vessel_tree

    gts = []
    for s in range(3):
        np.save(tmp_path / f"gt{s}.npy", vessel_tree((96, 96), seed=s))
        gts.append(tmp_path / f"gt{s}.npy")
    broken, _ = perturb(vessel_tree((96, 96), seed=0), "break", 0.3, seed=1)
    np.save(tmp_path / "pred.npy", broken)
    args = ["audit", *gts, "--severities", "0.1,0.3", "--radius-scales", "0.85", "--boundary-fracs", "0.05",
            "--n-boot", "50", "--min-units", "3", "--min-cases", "3", "--quiet"]
    code, out, err = cli(*args, "--profile", tmp_path / "pred.npy", "--gt", gts[0], "--json-out", tmp_path / "a.json")
    assert code == 0, err
    assert "Which metric should I report?" in out and "Unexplained" in out
    rec = json.loads((tmp_path / "a.json").read_text())["recommendation"]
    assert rec["error_types"] and rec["error_types"][0]["operator"] == "break"
    code, _, err = cli("profile", tmp_path / "pred.npy", "--gt", gts[0], "--json-out", tmp_path / "p.json", "--quiet")
    assert code == 0, err
    code, out2, err = cli(*args, "--profile-json", tmp_path / "p.json")
    assert code == 0 and out2.split("Which metric")[1] == out.split("Which metric")[1]
    code, out, err = cli(*args, "--profile", tmp_path / "pred.npy")
    assert code == 2 and "needs --gt" in err and len(err.strip().splitlines()) == 1
