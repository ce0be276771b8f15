"""`segscore fibers-target`: a fiber target built from .nml traces and a mask, its refusals, a
round trip through a shipped ScrollGT cube, and the card's coverage/precision note."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segscore.io.samples import NML_CUBE as CUBE  # the package's sample tracing
from segscore.io.samples import NML_FIBERS as FIBERS
from segscore.io.samples import NML_ORIGIN as ORIGIN
from segscore.io.samples import NML_SHAPE as SHAPE
from segscore.io.samples import nml_mask as tiny_mask
from segscore.io.samples import nml_text
from tests.cli_checks import one_line_error


@pytest.fixture
def inputs(tmp_path):
    nml = tmp_path / "nml"
    nml.mkdir()
    (nml / f"{CUBE}.nml").write_text(nml_text(FIBERS, ORIGIN))
    np.save(tmp_path / "mask.npy", tiny_mask())
    return nml, tmp_path / "mask.npy"


def refusal(result, fragment):
    """``one_line_error`` on a ``cli`` result; returns the line."""
    one_line_error(*result, fragment)
    return result[2]


def build(cli, *args, code=0):
    got, out, err = cli("fibers-target", *args)
    assert got == code, (got, out, err)
    return out, err


def test_builds_a_target_the_scorer_reads(cli, inputs, tmp_path):
    from segscore.fibers.target import load_target

    nml, mask = inputs
    out_dir = tmp_path / "targets" / "fibers_tiny"
    out, err = build(cli, nml, mask, "--out", out_dir)
    assert err == ""
    assert "3 fibers, 2 scored" in out and "origin z 500, y 600, x 700 (file name)" in out
    assert f"segscore fibers LABELS {out_dir}" in out.splitlines()[-1]
    assert sorted(p.name for p in out_dir.iterdir()) == ["mask.npz", "meta.json", "skeleton.npz"]
    assert sorted(p.name for p in out_dir.parent.iterdir()) == ["fibers_tiny"]  # no temporary folder left

    t = load_target(out_dir)
    assert t.shape == SHAPE and t.n_fibers == 2 and t.n_fibers_total == 3 and t.tolerance == 2.0
    assert t.fiber_ids.tolist() == [11, 12]
    np.testing.assert_array_equal(t.coords, np.concatenate([f[2] for f in FIBERS]))
    np.testing.assert_array_equal(t.mask, tiny_mask())
    with np.load(out_dir / "skeleton.npz", allow_pickle=False) as z:  # nothing pickled, names included
        assert z["fiber_names"].tolist() == ["fiber a", "fiber b", "mostly outside"]
        assert z["edges"].tolist() == [[0, 1], [1, 2], [4, 3], [4, 5], [6, 7], [7, 8]]
        assert z["fiber_offsets"].tolist() == [0, 3, 6, 9] and z["edge_offsets"].tolist() == [0, 2, 4, 6]
        assert z["origin_zyx"].tolist() == list(ORIGIN) and z["shape"].tolist() == list(SHAPE)
        np.testing.assert_array_equal(z["scale_um"], [7.91] * 3)
        assert z["coords"].dtype == np.float32
    meta = json.loads((out_dir / "meta.json").read_text())
    assert meta["target_id"] == "fibers_tiny" and meta["cube"] == CUBE and meta["size_class"] == 16
    assert meta["origin_zyx"] == list(ORIGIN) and meta["shape"] == list(SHAPE) and meta["voxel_size_um"] == 7.91
    gt = meta["ground_truth"]
    assert (gt["n_fibers"], gt["n_fibers_scored"], gt["n_nodes"], gt["n_nodes_in_bounds"]) == (3, 2, 9, 7)
    assert gt["source_files"] == [f"{CUBE}.nml"] and "floors" not in meta
    assert meta["convention_check"]["measured_node_landing_rate_on_scoring_mask"] == pytest.approx(6 / 7, abs=1e-6)


def test_json_is_the_api_summary(cli, inputs, tmp_path):
    from segscore.fibers.build import build_target

    nml, mask = inputs
    out, _ = build(cli, nml, mask, "--out", tmp_path / "a", "--json", "--tolerance", "3")
    card = json.loads(out, parse_constant=lambda c: pytest.fail(f"JSON holds {c}"))
    api = build_target(nml, mask, tmp_path / "b", tolerance=3)
    assert card.keys() == api.keys() and card["notes"] == {} and card["tolerance"] == 3.0
    assert {k: v for k, v in card.items() if k not in ("target", "target_id")} == \
           {k: v for k, v in api.items() if k not in ("target", "target_id")}
    assert json.loads((tmp_path / "a" / "meta.json").read_text())["tolerance"] == 3.0


def test_several_files_one_cube_read_in_name_order(cli, tmp_path):
    from segscore.fibers.target import load_target

    nml = tmp_path / "nml"
    nml.mkdir()
    (nml / f"{CUBE}_b.nml").write_text(nml_text(FIBERS[1:], ORIGIN))  # node ids restart: files are separate
    (nml / f"{CUBE}_a.nml").write_text(nml_text(FIBERS[:1], ORIGIN))
    (nml / "notes.txt").write_text("not a skeleton")
    np.save(tmp_path / "mask.npy", tiny_mask())
    build(cli, nml, tmp_path / "mask.npy", "--out", tmp_path / "t")
    t = load_target(tmp_path / "t")
    assert t.fiber_ids.tolist() == [11, 12] and t.n_fibers_total == 3
    one = tmp_path / "one"
    one.mkdir()
    (one / f"{CUBE}.nml").write_text(nml_text(FIBERS, ORIGIN))
    build(cli, one / f"{CUBE}.nml", tmp_path / "mask.npy", "--out", tmp_path / "t1")  # one file works too
    np.testing.assert_array_equal(load_target(tmp_path / "t1").coords, t.coords)


@pytest.mark.parametrize("kind", ["bool.npy", "uint8_255.tif", "float01.npy", "int_classes.npy", "packed.npz"])
def test_mask_formats(cli, inputs, tmp_path, kind):
    import tifffile

    from segscore.fibers.target import load_target

    nml, _ = inputs
    m = tiny_mask()
    path = tmp_path / f"mask_{kind}"
    if kind == "bool.npy":
        np.save(path, m)
    elif kind == "uint8_255.tif":
        tifffile.imwrite(path, m.astype(np.uint8) * 255)
    elif kind == "float01.npy":
        np.save(path, m.astype(np.float32))
    elif kind == "int_classes.npy":  # e.g. horizontal / vertical fiber classes: any non-zero is fiber
        np.save(path, m.astype(np.int16) * np.where(np.arange(16) % 2, 1, 2)[None, None, :])
    else:
        np.savez(path, packed=np.packbits(m.ravel()), shape=np.asarray(SHAPE, np.int64))
    build(cli, nml, path, "--out", tmp_path / "t")
    np.testing.assert_array_equal(load_target(tmp_path / "t").mask, m)


def test_origin_option_and_shape_option(cli, tmp_path):
    from segscore.fibers.target import load_target

    nml = tmp_path / "nml"
    nml.mkdir()
    (nml / "tracing.nml").write_text(nml_text(FIBERS, ORIGIN, scale=False))  # no cube in the name
    np.save(tmp_path / "mask.npy", tiny_mask())
    err = refusal(cli("fibers-target", nml, tmp_path / "mask.npy", "--out", tmp_path / "t"), "tracing.nml")
    assert "--origin Z Y X" in err
    out, _ = build(cli, nml, tmp_path / "mask.npy", "--out", tmp_path / "t", "--origin", *ORIGIN, "--shape", *SHAPE)
    assert "(given (--origin))" in out
    meta = json.loads((tmp_path / "t" / "meta.json").read_text())
    assert meta["origin_source"] == "given (--origin)" and "cube" not in meta and "voxel_size_um" not in meta
    assert load_target(tmp_path / "t").n_fibers == 2
    # --origin wins over the name, even a name that gives another cube
    (nml / "tracing.nml").rename(nml / "s1_00000_00000_00000_16.nml")
    build(cli, nml, tmp_path / "mask.npy", "--out", tmp_path / "t2", "--origin", *ORIGIN)
    np.testing.assert_array_equal(load_target(tmp_path / "t2").coords, load_target(tmp_path / "t").coords)


def test_villa_annotation_names(cli, tmp_path):
    """villa's ``fibers_<scroll>_<z>z_<y>y_<x>x_<size>`` names give the annotated region: read when
    its size is the mask's, refused (with the reason) when the mask is the padded cube around it."""
    nml = tmp_path / "nml"
    nml.mkdir()
    (nml / "fibers_s1_00500z_00600y_00700x_16_v02.nml").write_text(nml_text(FIBERS, ORIGIN))
    np.save(tmp_path / "mask.npy", tiny_mask())
    build(cli, nml, tmp_path / "mask.npy", "--out", tmp_path / "t")
    np.save(tmp_path / "big.npy", np.pad(tiny_mask(), 2))
    err = refusal(cli("fibers-target", nml, tmp_path / "big.npy", "--out", tmp_path / "t2"),
                         "fibers_s1_00500z_00600y_00700x_16_v02.nml")
    assert "annotated region" in err and "(20, 20, 20)" in err


def test_low_landing_enrichment_warns(cli, inputs, tmp_path):
    nml, mask = inputs
    code, out, err = cli("fibers-target", nml, mask, "--out", tmp_path / "t", "--origin", 500, 595, 700)
    assert code == 0 and "0.0x chance" in out
    assert err.startswith("segscore fibers-target: warning: ") and "check the origin" in err and err.count("\n") == 1


def test_existing_folders(cli, inputs, tmp_path):
    from segscore.fibers.target import load_target

    nml, mask = inputs
    out_dir = tmp_path / "t"
    out_dir.mkdir()
    build(cli, nml, mask, "--out", out_dir)  # an empty folder is filled
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    err = refusal(cli("fibers-target", nml, mask, "--out", out_dir, "--tolerance", "3"), str(out_dir))
    assert "--force" in err
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before  # untouched
    (out_dir / "stale.txt").write_text("old")
    out, _ = build(cli, nml, mask, "--out", out_dir, "--tolerance", "3", "--force")
    assert "(replaced)" in out and not (out_dir / "stale.txt").exists()
    assert load_target(out_dir).tolerance == 3.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mask.npy", "nml", "t"]
    (tmp_path / "file").write_text("x")
    one_line_error(*cli("fibers-target", nml, mask, "--out", tmp_path / "file", "--force"), "is a file")


def test_force_never_deletes_the_inputs(cli, tmp_path):
    nml = tmp_path / "work" / "nml"
    nml.mkdir(parents=True)
    (nml / f"{CUBE}.nml").write_text(nml_text(FIBERS, ORIGIN))
    np.save(tmp_path / "work" / "mask.npy", tiny_mask())
    for out_dir in (tmp_path / "work", nml):
        err = refusal(cli("fibers-target", nml, tmp_path / "work" / "mask.npy", "--out", out_dir, "--force"),
                             str(out_dir))
        assert "would delete" in err
    assert (nml / f"{CUBE}.nml").exists() and (tmp_path / "work" / "mask.npy").exists()


def test_a_failed_build_leaves_nothing_behind(inputs, tmp_path, monkeypatch):
    from segscore.fibers import build, target

    nml, mask = inputs
    out_dir = tmp_path / "t"
    build.build_target(nml, mask, out_dir)
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}

    def broken(path):
        raise OSError("disk full")

    monkeypatch.setattr(target, "load_target", broken)
    for dest, force in ((tmp_path / "new", False), (out_dir, True)):
        with pytest.raises(OSError, match="disk full"):
            build.build_target(nml, mask, dest, tolerance=5, force=force)
    assert not (tmp_path / "new").exists()
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before  # the old target intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mask.npy", "nml", "t"]  # no temporary folder


def _bad_nml(tmp_path, name, text):
    d = tmp_path / f"bad_{len(list(tmp_path.iterdir()))}"
    d.mkdir()
    (d / name).write_text(text)
    return d


def test_refusals_are_one_line_exit_2(cli, inputs, tmp_path):
    nml, mask = inputs
    out_dir = tmp_path / "out"

    def refused(*args, want):
        one_line_error(*cli("fibers-target", *args), want)
        assert not out_dir.exists()

    refused(tmp_path / "nowhere", mask, "--out", out_dir, want="nowhere")
    (tmp_path / "empty_dir").mkdir()
    refused(tmp_path / "empty_dir", mask, "--out", out_dir, want="holds no .nml file")
    refused(mask, mask, "--out", out_dir, want="not an .nml file")
    refused(nml, tmp_path / "nomask.npy", "--out", out_dir, want="nomask.npy")
    np.save(tmp_path / "prob.npy", np.full(SHAPE, 0.7, np.float32))
    refused(nml, tmp_path / "prob.npy", "--out", out_dir, want="threshold")
    np.save(tmp_path / "zero.npy", np.zeros(SHAPE, bool))
    refused(nml, tmp_path / "zero.npy", "--out", out_dir, want="no fiber voxel")
    np.save(tmp_path / "flat.npy", np.ones((16, 16), bool))
    refused(nml, tmp_path / "flat.npy", "--out", out_dir, want="flat.npy")
    np.save(tmp_path / "odd.npy", np.ones((16, 16, 20), bool))
    refused(nml, tmp_path / "odd.npy", "--out", out_dir, want="(16, 16, 20)")
    np.savez(tmp_path / "bad.npz", packed=np.zeros(3, np.uint8))
    refused(nml, tmp_path / "bad.npz", "--out", out_dir, want="no 'shape' array")
    refused(nml, mask, "--out", out_dir, "--shape", 16, 16, 17, want="--shape")
    refused(nml, mask, "--out", out_dir, "--origin", 0, 0, 0, want="no fiber has two nodes inside")
    two = _bad_nml(tmp_path, f"{CUBE}.nml", nml_text(FIBERS, ORIGIN))
    (two / "s1_00500_00600_00701_16.nml").write_text(nml_text(FIBERS, ORIGIN))
    refused(two, mask, "--out", out_dir, want="a target is one cube")
    sizes = _bad_nml(tmp_path, f"{CUBE}_a.nml", nml_text(FIBERS[:1], ORIGIN))
    (sizes / f"{CUBE}_b.nml").write_text(nml_text(FIBERS[1:], ORIGIN).replace('x="7.91"', 'x="8.0"'))
    refused(sizes, mask, "--out", out_dir, want="state different voxel sizes")
    for text, want in ((nml_text(FIBERS, ORIGIN)[:200], "not well-formed XML"),
                       (nml_text(FIBERS, ORIGIN).replace('x="702"', 'x="nan"'), "not a finite number"),
                       (nml_text(FIBERS, ORIGIN).replace('node id="2"', 'node id="1"'), "appears twice"),
                       (nml_text(FIBERS, ORIGIN).replace('y="604"', ''), "no 'y' attribute"),
                       ('<!DOCTYPE a [<!ENTITY b "c">]><things/>', "DOCTYPE or ENTITY")):
        bad = _bad_nml(tmp_path, f"{CUBE}.nml", text)
        refused(bad, mask, "--out", out_dir, want=f"{bad / CUBE}.nml: ")
        assert want in cli("fibers-target", bad, mask, "--out", out_dir)[2]
    empty_trees = _bad_nml(tmp_path, f"{CUBE}.nml", '<things><thing id="1"/></things>')
    refused(empty_trees, mask, "--out", out_dir, want="no tree has a node")


@pytest.mark.parametrize("option, values", [("--tolerance", ["-1"]), ("--tolerance", ["nan"]), ("--tolerance", ["65"]),
                                            ("--origin", ["-1", "0", "0"]), ("--origin", ["a", "0", "0"]),
                                            ("--shape", ["0", "16", "16"])])
def test_out_of_range_options_are_usage_errors(cli, inputs, tmp_path, option, values):
    nml, mask = inputs
    code, out, err = cli("fibers-target", nml, mask, "--out", tmp_path / "t", option, *values)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"segscore fibers-target: argument {option}") and "--help" in err
    assert not (tmp_path / "t").exists()


def test_usage_and_registry(cli):
    from segscore.cli.main import COMMANDS, HELP
    from segscore.families import FAMILIES

    assert "fibers-target" in FAMILIES["fibers"].commands and "fibers-target" in COMMANDS and "fibers-target" in HELP
    code, out, _ = cli("fibers-target", "--help")
    assert code == 0 and "--origin Z Y X" in out and "--force" in out
    code, _, err = cli("fibers-target", "a")
    assert code == 2 and err.count("\n") == 1 and "required" in err


# ------------------------------------------------------------------ round trip through a shipped cube

REAL = "fibers_s1_00497_01497_03997_256"


def write_cube_as_nml(target_dir, nml_dir, parts=2):
    """Write a shipped target's skeleton.npz as WEBKNOSSOS .nml files named after its cube
    (``<cube>.nml``, ``<cube>_part2.nml``, ...: name order keeps the fibers' order)."""
    with np.load(target_dir / "skeleton.npz", allow_pickle=False) as z:
        coords, edges = z["coords"].astype(np.float64), z["edges"].astype(np.int64)
        f_off, e_off, ids, origin = z["fiber_offsets"], z["edge_offsets"], z["fiber_ids"], z["origin_zyx"]
    cube = json.loads((target_dir / "meta.json").read_text())["cube"]
    fibers = [(int(ids[i]), f"fiber_{ids[i]}", coords[f_off[i]:f_off[i + 1]], edges[e_off[i]:e_off[i + 1]] - f_off[i])
              for i in range(len(ids))]
    nml_dir.mkdir()
    cuts = np.linspace(0, len(fibers), parts + 1).astype(int)
    for k in range(parts):
        name = f"{cube}.nml" if k == 0 else f"{cube}_part{k + 1}.nml"
        (nml_dir / name).write_text(nml_text(fibers[cuts[k]:cuts[k + 1]], origin))
    return cube


@pytest.fixture(scope="module")
def real_cube(shared_data):
    path = shared_data / "scrollgt" / REAL
    if not path.is_dir():
        pytest.skip(f"{path} not present: the round trip needs a shipped ScrollGT fiber cube")
    return path


def test_round_trip_through_a_shipped_cube(cli, real_cube, tmp_path):
    from segscore.fibers.floors import oracle
    from segscore.fibers.target import load_target

    write_cube_as_nml(real_cube, tmp_path / "nml")
    rebuilt = tmp_path / REAL
    out, err = build(cli, tmp_path / "nml", real_cube / "mask.npz", "--out", rebuilt)
    meta, orig_meta = (json.loads((p / "meta.json").read_text()) for p in (rebuilt, real_cube))
    assert meta["convention_check"] == {k: orig_meta["convention_check"][k] for k in meta["convention_check"]}
    for key in ("n_fibers", "n_fibers_scored", "n_nodes_in_bounds"):
        assert meta["ground_truth"][key] == orig_meta["ground_truth"][key]
    with np.load(real_cube / "skeleton.npz", allow_pickle=False) as a, np.load(rebuilt / "skeleton.npz") as b:
        for key in ("coords", "edges", "fiber_offsets", "edge_offsets", "fiber_ids", "origin_zyx", "shape"):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    t0, t1 = load_target(real_cube), load_target(rebuilt)
    np.testing.assert_array_equal(t0.mask, t1.mask)

    labels = tmp_path / "oracle.npy"
    np.save(labels, oracle(t0).astype(np.uint8))
    for args in (["--floor", "connected_components"], ["--floor", "single_instance"], [labels]):
        cards = []
        for target, extra in ((real_cube, ["--recompute-floors"]), (rebuilt, [])):
            code, out, err = cli("fibers", *args, target, "--json", *extra)
            assert code == 0, err
            cards.append(json.loads(out))
        assert cards[1]["floors_source"] == "recomputed"  # the built target publishes no floors
        assert cards[0] == cards[1], args


# ------------------------------------------------------------------ the card's coverage/precision note

TIE_KEYS = {"coverage", "precision"}


@pytest.fixture
def tiny_target(inputs, tmp_path):
    from segscore.fibers.build import build_target

    nml, mask = inputs
    return build_target(nml, mask, tmp_path / "fibers_tiny")["target"]


def card_of(cli, *args):
    code, out, err = cli("fibers", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_note_when_the_labelling_ties_with_every_floor(cli, tiny_target, tmp_path):
    card = card_of(cli, "--floor", "connected_components", tiny_target)
    assert set(card["cannot_rank"]) == TIE_KEYS and card["notes"] == {} and card["floors_source"] == "recomputed"
    cov, prec = card["metrics"]["coverage"], card["metrics"]["precision"]
    assert all(card["floors"][k]["coverage"] == cov and card["floors"][k]["precision"] == prec
               for k in card["floors"] if k.startswith("floor_"))
    assert f"coverage {cov:.4f}" in card["cannot_rank"]["coverage"]
    assert "cannot rank" in card["cannot_rank"]["precision"] and "\n" not in card["cannot_rank"]["precision"]
    # a tracer that labels exactly the mask voxels, with ids of its own, ties too
    np.save(tmp_path / "relabelled.npy", tiny_mask().astype(np.int32) * (1 + np.arange(16) // 4))
    assert set(card_of(cli, tmp_path / "relabelled.npy", tiny_target)["cannot_rank"]) == TIE_KEYS

    code, out, err = cli("fibers", "--floor", "connected_components", tiny_target)
    lines = out.splitlines()
    tie = [ln for ln in lines if "cannot rank it" in ln]
    assert code == 0 and len(tie) == 1
    assert tie[0].startswith(f"note: coverage {cov:.4f} and precision {prec:.4f} are the same for this labelling "
                             f"and all 4 floors")
    assert "is null" not in out and lines[-1].startswith("ERL ")  # the ERL verdict stays the last line


def test_no_note_when_the_labelling_or_the_floors_differ(cli, tiny_target, tmp_path):
    card = card_of(cli, "--floor", "oracle", tiny_target)  # the oracle covers more than the floors
    assert card["notes"] == {} and card["cannot_rank"] == {}
    assert "cannot rank" not in cli("fibers", "--floor", "oracle", tiny_target)[1]
    lab = np.zeros(SHAPE, np.int32)
    lab[4, 4, :] = 1  # labels only part of the mask: its coverage and precision are its own
    np.save(tmp_path / "part.npy", lab)
    assert card_of(cli, tmp_path / "part.npy", tiny_target)["cannot_rank"] == {}
    assert "cannot rank" not in cli("fibers", tmp_path / "part.npy", tiny_target)[1]
    np.save(tmp_path / "empty.npy", np.zeros(SHAPE, np.int32))  # null precision: its own note, no tie note
    card = card_of(cli, tmp_path / "empty.npy", tiny_target)
    assert "metrics.precision" in card["notes"] and "metrics.coverage" not in card["notes"]
    assert card["cannot_rank"] == {}
    assert "note: precision is null: " in cli("fibers", tmp_path / "empty.npy", tiny_target)[1]


def test_published_floors_decide_too(cli, tmp_path):
    """Floors read from meta.json: the note needs two or more floor rows, all tied with the
    labelling (``--floor`` scores the floor itself; the other rows come from meta.json)."""
    from segscore.fibers.floors import recompute_floors
    from segscore.fibers.target import load_target
    from tests.fibers.helpers import write_target

    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    mask = np.zeros((10, 12, 24), bool)
    mask[4, 3:6, :] = True
    rows = recompute_floors(load_target(write_target(tmp_path / "probe", fibers, mask)))
    single, cc = ({k: v for k, v in rows[key].items() if k != "notes"}
                  for key in ("floor_single_instance", "floor_connected_components"))
    cases = {"tied": ({"floor_single_instance": single, "floor_connected_components": cc}, TIE_KEYS, set()),
             "differ": ({"floor_single_instance": dict(single, coverage=0.5), "floor_connected_components": cc},
                        set(), set()),
             "one floor": ({"oracle": dict(cc, erl=99.0), "floor_connected_components": cc}, set(), set()),
             "null": ({"floor_single_instance": dict(single, precision=None), "floor_connected_components": cc},
                      set(), {"floors.floor_single_instance.precision"})}
    for name, (floors, want, nulls) in cases.items():
        t = write_target(tmp_path / name.replace(" ", "_"), fibers, mask, floors=floors)
        card = card_of(cli, "--floor", "connected_components", t)
        assert set(card["cannot_rank"]) == want, name
        assert set(card["notes"]) - {"class_oracle_erl", "oracle"} == nulls, name
        assert (card["oracle"] is None) == ("oracle" in card["notes"]) == ("oracle" not in floors), name
        assert ("cannot rank it" in cli("fibers", "--floor", "connected_components", t)[1]) == (want == TIE_KEYS)


def test_note_on_a_shipped_cube(cli, real_cube):
    from segscore.fibers.card import format_card

    card = card_of(cli, "--floor", "single_instance", real_cube)
    assert set(card["cannot_rank"]) == TIE_KEYS and "coverage 0.9177" in card["cannot_rank"]["coverage"]
    assert "precision 0.2194" in card["cannot_rank"]["precision"]
    assert "note: coverage 0.9177 and precision 0.2194 are the same for this labelling and all 4 floors" \
        in format_card(card)


def test_dangling_edges_and_empty_files_are_read_and_warned(cli, inputs, tmp_path):
    """ScrollGT's reader contract: an edge naming a node its tree does not hold is dropped, an
    empty file is an empty skeleton; each is a `warnings` entry and a stderr line."""
    from segscore.fibers.build import build_target

    nml, mask = inputs
    d = tmp_path / "dangling"
    d.mkdir()
    (d / f"{CUBE}_a.nml").write_text(nml_text(FIBERS, ORIGIN).replace('target="2"', 'target="99"'))
    (d / f"{CUBE}_b.nml").write_text("")
    ref = build_target(nml, mask, tmp_path / "t_ref")
    got = build_target(d, mask, tmp_path / "t_dangling")
    assert ref["warnings"] == []
    assert got["n_edges"] == ref["n_edges"] - 1 and got["n_fibers"] == ref["n_fibers"]
    assert len(got["warnings"]) == 2
    assert got["warnings"][0].startswith(f"{d / CUBE}_a.nml: 1 edge dropped") and "node 99, in no tree" in got["warnings"][0]
    assert got["warnings"][1].startswith(f"{d / CUBE}_b.nml: the file is empty")
    code, out, err = cli("fibers-target", d, mask, "--out", tmp_path / "t_cli")
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(x.startswith("segscore fibers-target: warning: ") for x in lines)
    assert "1 edge dropped" in lines[0] and "the file is empty" in lines[1]
    # an empty file alone holds no fiber: the target is still refused
    e = tmp_path / "only_empty"
    e.mkdir()
    (e / f"{CUBE}.nml").write_text("")
    refusal(cli("fibers-target", e, mask, "--out", tmp_path / "t_empty"), "no tree has a node")
