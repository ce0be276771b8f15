"""curvicost 0.3.1's documented command lines as segscore lines (the table in docs/curvilinear.md
section, run here line by line, the score lines beside curvicost's own CLI run in-process), and
the options of `segscore curve` that mirror curvicost's `score`: `--json [FILE.json]` (also on
`profile`), `--no-erl`, `--reference-radii`, `--voxel-size`, `--quiet`, the default text table, and
the warning when a file's anisotropic spacing is applied."""

from __future__ import annotations

import glob
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from segscore.curvilinear.masks import save_mask
from segscore.curvilinear.scoring import ERL_KEYS, NO_ERL_NOTE, OPTIONAL_KEYS, REFRADII_KEYS, score
from tests.curvilinear.helpers import vessel_tree

cc = pytest.importorskip("curvicost")
from curvicost.cli import main as curvicost_main

REPO = Path(__file__).resolve().parents[2]
#: keys of curvicost's CLI row that are not numbers of the score (voxel_size: compared as text)
CC_ONLY = {"prediction", "reference", "voxel_size"}
#: curvicost 0.3.1's default metrics the text used to leave out (the issue's five)
FIVE = ("skeleton_recall", "cbdice_star", "apls", "junction_f1", "hd95")


def readme_lines() -> list[tuple[str, str]]:
    return re.findall(r"^\| `(curvicost [^`]+)` \| `(segscore [^`]+)` \|", (REPO / "docs" / "curvilinear.md").read_text(), re.MULTILINE)


def words(line: str, folder: Path) -> list[str]:
    """The line's words after the program name, globs expanded in ``folder`` as a shell would."""
    out = []
    for w in shlex.split(line)[1:]:
        if any(c in w for c in "*?["):
            hits = sorted(glob.glob(w, root_dir=folder))
            assert hits, w
            out += hits
        else:
            out.append(w)
    return out


def table(text: str) -> list[str]:
    """The metric | cost table of a text report (its header to the first blank line), its metrics
    column without betti_matching (which the curvicost installed here reports as NaN, so leaves out:
    it needs a compiled module; segscore computes it), re-flowed as curvicost's report flows it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric "))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    rows = lines[start + 2:end]
    left = [r.split("|")[0].rstrip() for r in rows]
    right = [r.split("|")[1].strip() if "|" in r else "" for r in rows]
    left = [cell for cell in left if cell and not cell.startswith("betti_matching ")]
    right = [cell for cell in right if cell]
    width = max((len(r.split("|")[0]) for r in rows), default=0)
    out = lines[start:start + 2]
    for i in range(max(len(left), len(right))):
        lc = left[i] if i < len(left) else ""
        rc = right[i] if i < len(right) else ""
        out.append(f"{lc:<{width}}|  {rc}".rstrip() if rc else f"{lc:<{width}}|".rstrip())
    return out


def assert_same_numbers(theirs: dict, ours: dict) -> int:
    """Every number of curvicost's row equal here (1e-9); its NaNs null here with a note, the keys
    it leaves out under --no-erl null here with that note; returns how many numbers matched."""
    n = 0
    for k, v in theirs.items():
        if k in CC_ONLY:
            continue
        if k == "betti_matching" and isinstance(v, float) and np.isnan(v):
            # curvicost without its compiled Betti-matching module reports NaN; segscore computes it
            assert isinstance(ours[k], int) and ours[k] >= 0, ours[k]
            continue
        if isinstance(v, float) and np.isnan(v):
            assert ours[k] is None and k in ours["notes"], k
            continue
        assert ours[k] == pytest.approx(v, rel=0, abs=1e-9), (k, v, ours[k])
        n += 1
    for k in ERL_KEYS:
        if k not in theirs:
            assert ours[k] is None and ours["notes"][k] == NO_ERL_NOTE
    if "voxel_size" in theirs:  # curvicost records "0.5,0.5,2.0"; the row's list, as the CSV writes it
        assert ",".join(str(v) for v in ours["voxel_size"]) == theirs["voxel_size"]
    return n


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The files the README's lines name, in the working folder."""
    import tifffile

    gt = vessel_tree((128, 128), seed=0, depth=3, r0=5.0)
    save_mask(gt, tmp_path / "gt.png")
    save_mask(gt, tmp_path / "reference.png")
    save_mask(cc.perturb(gt, "break", 0.3, seed=0, prune_px=5)[0], tmp_path / "pred1.png")
    save_mask(cc.perturb(gt, "radius", 0.8)[0], tmp_path / "pred2.png")
    for i in range(4):
        save_mask(vessel_tree((96, 96), seed=10 + i, depth=3, r0=4.0), tmp_path / f"gt{i + 1}.png")
    g3 = vessel_tree((32, 32, 32), seed=1, depth=3, r0=3.0)
    tifffile.imwrite(tmp_path / "gt.tif", g3.astype(np.uint8) * 255)
    tifffile.imwrite(tmp_path / "seg.tif", cc.perturb(g3, "truncate", 0.5, seed=0, prune_px=3)[0].astype(np.uint8) * 255)
    (tmp_path / "mymeasures.py").write_text("import numpy as np\n\n\ndef vessel_area(mask):\n"
                                            "    return float(np.count_nonzero(mask))\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_table_lines_run(cli, capsys, folder):
    lines = readme_lines()
    assert len(lines) >= 10 and sum(s.startswith("segscore curve ") for _, s in lines) >= 4
    assert any(s.startswith("segscore profile ") and "--json profile.json" in s for _, s in lines)
    matched = 0
    for theirs, ours in lines:
        argv = words(ours, folder)
        code, out, err = cli(*argv)
        assert code == 0, (ours, err)
        if "--json" in argv and argv.index("--json") + 1 < len(argv) and argv[argv.index("--json") + 1].endswith(".json"):
            i = argv.index("--json")
            written = json.loads(Path(argv[i + 1]).read_text())
            if "--quiet" in argv:
                assert out == "" and err == ""
            else:  # the file, and the text report on stdout (curvicost's --json PATH)
                assert out.strip() and not out.lstrip().startswith("{")
            code2, out2, _ = cli(*argv[:i], *argv[i + 2:], "--json")  # --json alone: the same JSON on stdout
            assert code2 == 0 and json.loads(out2) == written, ours
        if argv[0] != "curve":
            continue
        # curvicost's own line on the same files, its outputs renamed
        cargv = words(theirs, folder)
        for opt in ("--json", "--csv"):
            if opt in cargv:
                cargv[cargv.index(opt) + 1] = "cc_" + cargv[cargv.index(opt) + 1]
        assert curvicost_main(cargv) == 0, theirs
        cout, _ = capsys.readouterr()
        if "--json" in cargv:  # both wrote a file (``written`` above)
            matched += assert_same_numbers(json.loads(Path(cargv[cargv.index("--json") + 1]).read_text()), written)
        elif "--csv" in cargv:  # curvicost prints its text report: the same table here
            assert table(out) == table(cout)
            assert all(any(line.startswith(k + " ") for line in table(out)) for k in FIVE)
        else:  # curvicost prints the row as JSON: segscore's line asks with --json
            matched += assert_same_numbers(json.loads(cout), json.loads(out))
    assert matched >= 40


def test_json_path_in_either_order_and_ambiguity(cli, tmp_path):
    gt = vessel_tree((96, 96), seed=2, depth=3, r0=4.0)
    np.save(tmp_path / "g.npy", gt)
    np.save(tmp_path / "p.npy", cc.perturb(gt, "break", 0.3, seed=1, prune_px=5)[0])
    g, p = str(tmp_path / "g.npy"), str(tmp_path / "p.npy")
    code, out, err = cli("curve", p, "--gt", g, "--json", tmp_path / "a.json")
    assert code == 0 and out.startswith(f"truth: {g}  pred: {p}\nmetric"), err
    a = json.loads((tmp_path / "a.json").read_text())
    code, out, err = cli("curve", "--json", tmp_path / "b.json", p, "--gt", g)
    assert code == 0 and out.split("\n", 1)[1].startswith("metric") and json.loads((tmp_path / "b.json").read_text()) == a
    for argv in (["--json", p, "--gt", g], ["--gt", g, "--json", p], [p, "--gt", g, "--json"]):
        code, out, err = cli("curve", *argv)  # a word after --json that is not a .json name is the input
        assert code == 0 and json.loads(out) == a, argv
    # the input already given: the word is neither it nor a JSON name
    code, out, err = cli("curve", p, "--gt", g, "--json", tmp_path / "x.txt")
    assert code == 2 and out == "" and err.count("\n") == 1 and "x.txt" in err and ".json" in err
    assert not (tmp_path / "x.txt").exists()
    # an input whose name ends in .json is never overwritten, however it is spelled
    (tmp_path / "g.json").write_text('{"mine": 1}')
    for argv in (["--json", tmp_path / "g.json"], ["--json", f"{tmp_path}/./g.json"], ["--json-out", tmp_path / "g.json"],
                 ["--csv", tmp_path / "g.json"]):
        code, out, err = cli("curve", p, "--gt", tmp_path / "g.json", *argv)
        assert code == 2 and err.count("\n") == 1 and "g.json" in err and "would replace the input" in err, argv
    code, out, err = cli("profile", tmp_path / "g.json", "--gt", g, "--json", tmp_path / "g.json")
    assert code == 2 and err.count("\n") == 1 and "g.json" in err and "would replace the input" in err
    assert (tmp_path / "g.json").read_text() == '{"mine": 1}'
    code, out, err = cli("curve", "--gt", g, "--json")
    assert code == 2 and err.count("\n") == 1 and "prediction" in err


def test_profile_json_path(cli, tmp_path):
    gt = vessel_tree((80, 80), seed=3, depth=3, r0=4.0)
    np.save(tmp_path / "g.npy", gt)
    np.save(tmp_path / "a.npy", cc.perturb(gt, "break", 0.3, seed=1, prune_px=5)[0])
    np.save(tmp_path / "b.npy", cc.perturb(gt, "truncate", 0.3, seed=1, prune_px=5)[0])
    a, b, g = (str(tmp_path / n) for n in ("a.npy", "b.npy", "g.npy"))
    code, out, err = cli("profile", a, b, "--gt", g, "--seeds", "1", "--json", tmp_path / "prof.json")
    assert code == 0 and "unexplained" in out, err
    written = json.loads((tmp_path / "prof.json").read_text())
    for argv in ([a, b, "--gt", g, "--seeds", "1", "--json"], ["--json", a, b, "--gt", g, "--seeds", "1"],
                 [a, "--json", b, "--gt", g, "--seeds", "1"]):
        code, out, err = cli("profile", *argv)
        assert code == 0 and json.loads(out) == written, argv  # same predictions, same order
    assert [r["prediction"] for r in written["predictions"]] == [a, b]
    code, out, err = cli("profile", "--json", tmp_path / "q.json", a, "--gt", g, "--seeds", "1", "--quiet")
    assert code == 0 and out == "" and json.loads((tmp_path / "q.json").read_text())["n_predictions"] == 1


@pytest.fixture(scope="module")
def pairs():
    """2D and 3D (reference, prediction) pairs under curvicost's operators, radius ones among them
    (where the prediction's own radii and the reference's differ)."""
    out = []
    for seed in (0, 1):
        gt = vessel_tree((160, 160), seed=seed, depth=4, r0=4.0)
        for op, sev in (("break", 0.3), ("boundary", 0.05), ("radius", 0.7), ("radius", 1.3)):
            out.append((gt, cc.perturb(gt, op, sev, seed=seed, prune_px=6)[0], 6))
    g3 = vessel_tree((40, 40, 40), seed=3, depth=3, r0=3.0)
    out.append((g3, cc.perturb(g3, "break", 0.3, seed=1, prune_px=4)[0], 4))
    return out


def test_reference_radii_and_no_erl_equal_curvicost(pairs):
    moved = 0
    for gt, pred, pp in pairs:
        theirs = cc.score(gt, pred, prune_px=pp, with_erl=False, reference_radii=True)
        ours = score(gt, pred, prune_px=pp, with_erl=False, reference_radii=True, all_metrics=True)
        assert list(ours)[-2:] == list(REFRADII_KEYS)
        assert_same_numbers(theirs, ours)
        assert all(k not in theirs for k in ERL_KEYS)
        moved += abs(ours["conductance_refradii_frac"] - ours["conductance_frac"]) > 0.05
    assert moved >= 4  # the reference's radii are read: the topology-only conductance is another number
    plain = score(gt, pred, prune_px=pp)
    assert not set(REFRADII_KEYS) & set(plain) and all(plain[k] is not None for k in ERL_KEYS)


def test_no_erl_reference_radii_cli(cli, tmp_path, pairs):
    gt, pred, _ = pairs[2]
    np.save(tmp_path / "g.npy", gt)
    np.save(tmp_path / "p.npy", pred)
    code, out, err = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "g.npy", "--prune-px", 6, "--json")
    full = json.loads(out)
    assert code == 0 and all(full[k] is not None for k in ERL_KEYS) and not set(REFRADII_KEYS) & set(full)
    code, out, err = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "g.npy", "--prune-px", 6, "--no-erl",
                         "--reference-radii", "--json")
    row = json.loads(out)
    assert code == 0, err
    assert all(row[k] is None and row["notes"][k] == NO_ERL_NOTE for k in ERL_KEYS)
    assert {k: v for k, v in row.items() if k not in ERL_KEYS + REFRADII_KEYS + ("notes",)} == \
        {k: v for k, v in full.items() if k not in ERL_KEYS + ("notes",)}
    assert row["conductance_refradii_frac"] == pytest.approx(
        cc.score(gt, pred, prune_px=6, all_metrics=False, reference_radii=True)["conductance_refradii_frac"], abs=1e-9)
    code, out, _ = cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "g.npy", "--prune-px", 6, "--no-erl",
                       "--reference-radii")
    lines = table(out)
    assert not any(line.startswith(("erl_star", "node_recall", "merged_frac")) for line in lines)
    assert any("conductance_refradii_twosided" in line for line in lines) and "not computed: --no-erl" in out


def test_default_text_has_curvicosts_default_metrics(cli, capsys, tmp_path, pairs):
    gt, pred, _ = pairs[0]
    save_mask(gt, tmp_path / "g.png")
    save_mask(pred, tmp_path / "p.png")
    code, out, err = cli("curve", tmp_path / "p.png", "--gt", tmp_path / "g.png", "--prune-px", 6)
    assert code == 0, err
    assert curvicost_main(["score", str(tmp_path / "p.png"), "--gt", str(tmp_path / "g.png"), "--prune-px", "6",
                           "--csv", str(tmp_path / "cc.csv")]) == 0
    cout, _ = capsys.readouterr()
    assert table(out) == table(cout)
    assert all(any(line.startswith(k + " ") for line in table(out)) for k in FIVE)
    code, out, err = cli("curve", tmp_path / "p.png", "--gt", tmp_path / "g.png", "--prune-px", 6, "--no-all-metrics")
    assert code == 0 and not any(line.startswith(k + " ") for line in table(out) for k in FIVE)
    assert not any(k in json.loads(cli("curve", tmp_path / "p.png", "--gt", tmp_path / "g.png", "--no-all-metrics",
                                       "--json")[1]) for k in OPTIONAL_KEYS)


def test_voxel_size_recorded_not_applied(cli, tmp_path):
    import nibabel

    gt = vessel_tree((96, 96), seed=4, depth=3, r0=4.0)
    pred = cc.perturb(gt, "break", 0.3, seed=0, prune_px=5)[0]
    np.save(tmp_path / "g.npy", gt)
    np.save(tmp_path / "p.npy", pred)
    base = [tmp_path / "p.npy", "--gt", tmp_path / "g.npy", "--json"]
    plain = json.loads(cli("curve", *base)[1])
    assert plain["voxel_size"] is None
    for spec, want in (("0.5,2", [0.5, 2.0]), ("0.5x2", [0.5, 2.0]), ("0.5", [0.5, 0.5])):
        code, out, err = cli("curve", *base, "--voxel-size", spec)
        row = json.loads(out)
        assert code == 0 and row["voxel_size"] == want and row["spacing"] == [1.0, 1.0], spec
        assert {k: v for k, v in row.items() if k not in ("voxel_size", "warnings")} == \
            {k: v for k, v in plain.items() if k not in ("voxel_size", "warnings")}
        # curvicost's own note, as curvicost gives it over anisotropic voxels scored in voxels
        assert ("not applied" in err) == (len(set(want)) > 1) and err.count("\n") == len(row["warnings"])
    for spec, what in (("0.5,0.5,2", "2D"), ("a,b", "numbers"), ("0,1", "positive")):
        code, out, err = cli("curve", *base, "--voxel-size", spec)
        assert code == 2 and out == "" and err.count("\n") == 1 and what in err, spec
    # over a NIfTI header: the given voxel size is recorded, the header's spacing still applies
    aff = np.diag([0.5, 2.0, 1.0, 1.0])
    for name, m in (("g", gt), ("p", pred)):
        nibabel.save(nibabel.Nifti1Image(m.astype(np.uint8), aff), tmp_path / f"{name}.nii.gz")
    nii = [tmp_path / "p.nii.gz", "--gt", tmp_path / "g.nii.gz", "--json"]
    header = json.loads(cli("curve", *nii)[1])
    code, out, err = cli("curve", *nii, "--voxel-size", "1,1")
    row = json.loads(out)
    assert code == 0 and header["voxel_size"] == [0.5, 2.0] and row["voxel_size"] == [1.0, 1.0]
    assert row["spacing"] == header["spacing"] == [0.5, 2.0] and row["traceable_length"] == header["traceable_length"]


def test_quiet(cli, tmp_path):
    gt = vessel_tree((96, 96), seed=0, r0=4.0)
    np.save(tmp_path / "g.npy", gt)
    base = [tmp_path / "g.npy", "--gt", tmp_path / "g.npy", "--prune-px", 40]  # off scale: a warning
    code, out, err = cli("curve", *base)
    assert code == 0 and out and "outside 1-4" in err
    code, out, err = cli("curve", *base, "--quiet", "--json-out", tmp_path / "q.json", "--csv", tmp_path / "q.csv",
                         "--json", tmp_path / "r.json")
    assert code == 0 and out == "" and err == ""
    row = json.loads((tmp_path / "q.json").read_text())
    assert row == json.loads((tmp_path / "r.json").read_text()) and (tmp_path / "q.csv").read_text().startswith("dice,")
    assert any("outside 1-4" in w for w in row["warnings"])  # kept in the result, not printed
    code, out, err = cli("curve", *base, "--quiet", "--json")
    assert code == 0 and json.loads(out) == row and err == ""
    code, out, err = cli("curve", tmp_path / "missing.npy", "--gt", tmp_path / "g.npy", "--quiet")
    assert code == 2 and "missing.npy" in err  # errors are still said


@pytest.mark.parametrize("zooms", [(0.5, 0.5, 2.0), (2.0, 0.5)])
def test_anisotropic_nifti_warns_and_says_how_to_match_curvicost(cli, tmp_path, zooms):
    import nibabel

    shape = (32, 32, 32) if len(zooms) == 3 else (128, 128)
    gt = vessel_tree(shape, seed=1, depth=3, r0=3.0)
    pred = cc.perturb(gt, "truncate", 0.5, seed=0, prune_px=3)[0]
    aff = np.diag(list(zooms) + [1.0] * (4 - len(zooms)))
    for name, m in (("gt", gt), ("p", pred)):
        nibabel.save(nibabel.Nifti1Image(m.astype(np.uint8), aff), tmp_path / f"{name}.nii.gz")
    args = [tmp_path / "p.nii.gz", "--gt", tmp_path / "gt.nii.gz", "--prune-px", 3]
    code, out, err = cli("curve", *args, "--json")
    row = json.loads(out)
    assert code == 0 and row["spacing"] == list(zooms) and row["spacing_source"] == "nifti"
    ones = " ".join(["1"] * len(zooms))
    mine = [w for w in row["warnings"] if w.startswith("anisotropic spacing")]
    assert len(mine) == 1 and f"--spacing {ones} to reproduce curvicost's numbers" in mine[0]
    assert f"{tuple(zooms)}" in mine[0] and "NIfTI header" in mine[0]
    lines = [line for line in err.splitlines() if "anisotropic" in line]
    assert lines == [f"segscore curve: warning: {mine[0]}"]
    # the text run says it too, once
    code, out, err = cli("curve", *args)
    assert code == 0 and err.count("anisotropic spacing") == 1
    # --spacing 1 1 ... gives curvicost's numbers (and curvicost's own warning, not this one)
    code, out, err = cli("curve", *args, "--spacing", *ones.split(), "--json")
    vox = json.loads(out)
    assert code == 0 and "anisotropic spacing" not in err and "not applied" in err
    assert_same_numbers(cc.score(gt, pred, prune_px=3), vox)
    assert abs(vox["traceable_length_ref"] - row["traceable_length_ref"]) > 1  # the applied spacing moved it
    # an isotropic header says nothing
    nibabel.save(nibabel.Nifti1Image(gt.astype(np.uint8), np.diag([2.0] * len(zooms) + [1.0] * (4 - len(zooms)))),
                 tmp_path / "iso.nii.gz")
    code, out, err = cli("curve", tmp_path / "iso.nii.gz", "--gt", tmp_path / "iso.nii.gz", "--prune-px", 3, "--json")
    assert code == 0 and "anisotropic" not in err and not any("anisotropic" in w for w in json.loads(out)["warnings"])
