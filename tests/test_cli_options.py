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
