"""A user's --cost-fn that calls sys.exit: one line naming the module, exit 2 (not its exit code,
not silence), at import (a file or a module) and inside the function."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.hostile import bombs


@pytest.fixture()
def masks(tmp_path):
    from tests.curvilinear.helpers import vessel_tree
    from tests.targets.helpers import write_png

    gt = vessel_tree((64, 64), seed=3)
    write_png(tmp_path / "gt.png", gt.astype(np.uint8) * 255)
    return tmp_path


@pytest.mark.parametrize("body, spec, needle", [
    ("import sys\nsys.exit(3)\ndef f(m):\n    return 1.0\n", "exit_import.py:f", "called sys.exit(3)"),
    ("raise SystemExit('usage: cost.py MASK')\ndef f(m):\n    return 1.0\n", "exit_usage.py:f",
     "called sys.exit('usage: cost.py MASK')"),
    ("import sys\ndef f(m):\n    sys.exit(0)\n", "exit_call.py:f", "called sys.exit(0)"),
])
def test_a_cost_fn_that_exits_is_one_refusal_naming_it(cli, masks, monkeypatch, body, spec, needle):
    path = masks / spec.split(":")[0]
    path.write_text(body)
    monkeypatch.chdir(masks)
    before = bombs.digests([path, masks / "gt.png"])
    code, out, err = cli("audit", "gt.png", "--cost-fn", spec, "--seeds", "1", "--n-boot", "10",
                         "--severities", "0.2", "--radius-scales", "0.85", "--boundary-fracs", "0.05")
    lines = err.strip().splitlines()
    assert code == 2, (code, err[-1500:])
    assert len(lines) == 1 and "Traceback" not in err, err[-1500:]
    assert spec in lines[0] and needle in lines[0], lines[0]
    assert bombs.digests([path, masks / "gt.png"]) == before


def test_a_cost_fn_module_that_exits_on_import(cli, masks, monkeypatch):
    (masks / "exitmod_hostile.py").write_text("import sys\nsys.exit(4)\ndef f(m):\n    return 1.0\n")
    monkeypatch.chdir(masks)
    monkeypatch.syspath_prepend(str(masks))
    try:
        code, out, err = cli("audit", "gt.png", "--cost-fn", "exitmod_hostile:f")
    finally:
        sys.modules.pop("exitmod_hostile", None)
    assert code == 2 and err.count("\n") == 1, err
    assert "importing exitmod_hostile called sys.exit(4)" in err


def test_the_api_raises_a_score_error_not_system_exit(masks):
    from segscore.curvilinear.auditing import load_cost_fn
    from segscore.errors import ScoreError

    path = masks / "exit_api.py"
    path.write_text("import sys\ndef f(m):\n    sys.exit(5)\n")
    uc = load_cost_fn(f"{path}:f")
    with pytest.raises(ScoreError, match=r"gt: the cost function .* called sys.exit\(5\)"):
        uc.value(np.ones((4, 4), bool), "gt")
