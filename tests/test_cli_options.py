"""Every numeric option is range-checked at the parser: a usage error (exit 2, one line)."""

import pytest

BAD = [
    ("auc", "--seed", "-1"), ("auc", "--crop", "-1"), ("auc", "--surface-shape", "0"),
    ("auc", "--tile-rows", "-3"), ("auc", "--tile-rows", "0"), ("auc", "--threads", "0"), ("auc", "--seed", "x"),
    ("demo", "--seed", "-1"), ("demo", "--bootstrap", "-1"),
    ("check", "--scan-um", "1e308"), ("check", "--scan-um", "nan"), ("check", "--window-px", "inf"),
    ("check", "--window-px", "0"),
    ("placement", "--gate", "inf"), ("placement", "--gate", "nan"), ("placement", "--radius", "-1"),
    ("placement", "--threshold", "2"),
    ("curve", "--prune-px", "inf"), ("curve", "--prune-px", "-1"), ("curve", "--prune-px", "nan"),
    ("perturb", "--prune-px", "inf"), ("perturb", "--severity", "nan"), ("perturb", "--seed", "-4"),
    ("objects", "--iou", "0"), ("objects", "--iou", "1.5"), ("objects", "--tolerances", "-1"),
    ("objects", "--minimum-overlap", "nan"), ("objects", "--threads", "-1"),
    ("holdout", "--iou", "nan"), ("target", "--seed", "-1"), ("target", "--threads", "0"),
    ("columns", "--tile-rows", "0"),
]


def argv_for(command, option, value):
    positional = {"auc": ["m.tif", "--labels", "l.zarr", "--mask", "m.zarr"], "demo": [],
                  "check": ["--window-px", "64", "--scan-um", "7.91"], "placement": ["p.png", "t"],
                  "curve": ["p.png", "--gt", "g.png"], "perturb": ["g.png", "--operator", "break", "--severity",
                                                                  "0.1", "-o", "o.png"],
                  "objects": ["t.tif", "p.tif"], "holdout": ["m.json"], "target": ["p.png", "t"],
                  "columns": ["p.png", "t"]}[command]
    rest = {"--crop": ["0", "1", "0", "1"], "--surface-shape": ["1", "1"]}.get(option, [value])
    if option in ("--crop", "--surface-shape"):
        rest[0] = value
    return [command, *positional, option, *rest]


@pytest.mark.parametrize("command, option, value", BAD, ids=[" ".join(b) for b in BAD])
# (auc's --inner, --bootstrap and --block-px keep kit's own refusals, tested in tests/ink)
def test_out_of_range_is_a_one_line_usage_error(cli, command, option, value):
    code, out, err = cli(*argv_for(command, option, value))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"segscore {command}: argument {option}") and "--help" in lines[0], lines[0]


def test_a_closed_output_pipe_is_not_a_crash():
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "segscore", "check", "--window-px", "64", "--scan-um", "9",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the command writes (`segscore ... | head -0`)
    err = p.stderr.read().decode()
    assert p.wait() == 0 and "Traceback" not in err


@pytest.mark.parametrize("argv, says", [
    (["curve", "p.png", "--gt", "g.png", "--threads", "2"], "segscore curve: unrecognized argument --threads; see "),
    (["objects", "t.tif", "p.tif", "--tiles-rows", "2"],
     "segscore objects: unrecognized argument --tiles-rows; did you mean --tile-rows?; see `segscore objects --help`"),
    (["target", "p.png", "t", "--no-flors"], "segscore target: unrecognized argument --no-flors; did you mean --no-floors?"),
])
def test_an_unknown_option_names_the_subcommand_and_the_nearest_option(cli, argv, says):
    code, out, err = cli(*argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(says), err


def test_usage_lines_name_the_roles(cli):
    for command, order in (("objects", "TRUTH PRED"), ("surfaces", "[PRED] [TRUTH]"), ("target", "PRED TRUTH"),
                           ("curve", "--gt TRUTH"), ("fibers", "[PRED] TRUTH")):
        code, out, err = cli(command, "--help")
        usage = " ".join(out.split("\n\n")[0].split())
        assert code == 0 and order in usage, (command, usage)


def test_placement_prints_no_none_and_counts_in_the_singular():
    from segscore.ink.placement import format_probe

    r = {"offset_px": 0.0, "peak_dy": 0, "peak_dx": 0, "peak_ncc": 0.5, "ncc_at_zero": 0.5, "gate_px": 48,
         "gate_from": "meta.json", "passed": True, "n_tiles": 1, "tile_px": 768, "tile_sd_dy": 0.0, "tile_sd_dx": 0.0,
         "worst_tile_px": 0.0, "tile_radius": 32, "recorded_placement": {"offset_level2_px": 10.0}}
    text = format_probe(r)
    assert "None" not in text and "tiles: 1 tile of 768 px" in text and "recorded in meta.json: 10.0 px (" in text
    assert "2 tiles of 768 px" in format_probe({**r, "n_tiles": 2})
