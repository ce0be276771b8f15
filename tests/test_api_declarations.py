"""The declarations behind segscore.api (issue 35): required options have no default in the
signature and a call without one is a typed refusal naming it; ``run_command`` records what the
ledger records (``recorded=``), never a command line; every command's options, ``run``'s among
them, come from one declaration each."""

from __future__ import annotations

import importlib
import inspect

import pytest

from segscore import api
from segscore.commands._declare import api_options
from segscore.errors import MissingOptionError, ScoreError


def _module(name):
    return importlib.import_module("segscore.commands." + name.replace("-", "_"))


def test_required_options_have_no_default_and_every_other_one_has():
    seen = 0
    for name, fn in api.COMMANDS.items():
        sig = inspect.signature(fn)
        for o in api_options(_module(name).OPTIONS):
            p = sig.parameters[o.name]
            assert (p.default is inspect.Parameter.empty) == o.needed, (name, o.name, p.default)
            if o.needed and p.kind is inspect.Parameter.KEYWORD_ONLY:
                seen += 1
    assert seen >= 6  # perturb's operator, severity, output; check's window_px, scan_um; fibers-target's out
    sig = inspect.signature(api.perturb)
    assert [n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty] == \
        ["mask", "operator", "severity", "output"]
    assert all(sig.parameters[n].kind is inspect.Parameter.KEYWORD_ONLY for n in ("operator", "severity", "output"))


@pytest.mark.parametrize("call, names, says", [
    (lambda: api.perturb("m.npy", operator="break", output="o.npy"), ["severity"],
     "segscore.api.perturb(): the required option severity= (--severity) is missing"),
    (lambda: api.perturb("m.npy"), ["operator", "severity", "output"],
     "the required options operator= (--operator), severity= (--severity), output= (-o) are missing"),
    (lambda: api.check(scan_um=7.91), ["window_px"], "segscore.api.check(): the required option window_px="),
    (lambda: api.fibers_target("nml", "mask.npz"), ["out"], "the required option out= (--out)"),
    (lambda: api.objects("t.tif"), ["pred"], "segscore.api.objects(): the required option pred= (PRED)"),
])
def test_a_missing_required_option_is_a_typed_refusal_naming_it(call, names, says):
    with pytest.raises(MissingOptionError) as info:
        call()
    assert isinstance(info.value, ScoreError) and isinstance(info.value, TypeError)
    assert says in str(info.value) and info.value.option == names[0]
    assert all(f"{n}=" in str(info.value) for n in names) and "\n" not in str(info.value)


def test_none_for_a_required_option_is_the_same_refusal():
    with pytest.raises(MissingOptionError, match="operator="):
        api.perturb("m.npy", operator=None, severity=0.2, output="o.npy")


def test_the_cli_still_says_what_argparse_says(capsys):
    from segscore.cli.main import main

    assert main(["perturb", "m.npy", "--operator", "break"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("segscore perturb: the following arguments are required: --severity, -o")


def test_run_command_takes_recorded_not_argv():
    params = inspect.signature(api.run_command).parameters
    assert "recorded" in params and "argv" not in params
    for name in api.COMMANDS:
        compute = inspect.signature(_module(name).compute).parameters
        assert "recorded" in compute and "argv" not in compute, name


def test_every_command_run_among_them_is_built_from_its_declarations():
    """Every subcommand's module declares OPTIONS (no hand-built parser: ``add_argument`` is called
    in _declare.py only, besides ``segscore --version``), no option name twice in a module."""
    import re
    from pathlib import Path

    from segscore.cli.main import COMMANDS, main

    for name, module in COMMANDS.items():
        loaded = importlib.import_module(module)
        names = [o.name for o in loaded.OPTIONS]
        assert len(names) == len(set(names)), name
        assert not hasattr(loaded, "add_arguments"), name
    root = Path(api.__file__).parent
    hand = [f"{p.relative_to(root)}:{m.group(0)}" for p in root.rglob("*.py") if p.name != "_declare.py"
            for m in re.finditer(r"\.add_argument\((?!\"--version\")[^)]*", p.read_text())]
    assert hand == []
    run = importlib.import_module(COMMANDS["run"])
    assert [o.name for o in run.OPTIONS] == ["action", "slug", "root"]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", "--help"]) == 0
    usage = out.getvalue().split("\n\n")[0]
    assert "usage: segscore run [-h] [--root DIR] ACTION SLUG" in " ".join(usage.split())


def test_segscore_run_init_and_show(tmp_path, capsys):
    import json

    from segscore.cli.main import main

    root = tmp_path / "ledger"
    assert main(["run", "init", "--root", str(root), "exp"]) == 0
    assert capsys.readouterr().out == f"started {root / 'exp' / 'run.json'}\n"
    assert main(["run", "show", "exp", "--root", str(root)]) == 0
    assert json.loads(capsys.readouterr().out)["checks"] == []
    assert main(["run", "start", "exp", "--root", str(root)]) == 2
    assert "segscore run: argument ACTION: invalid choice: 'start'" in capsys.readouterr().err
    assert main(["run", "init", "exp", "--rot", str(root)]) == 2
    assert "did you mean --root?" in capsys.readouterr().err


def test_plot_means_one_thing_on_every_command():
    """``--plot FILE.png|svg`` on every command that has it: a file name of a figure, written
    there (never a flag, never a folder of files)."""
    from segscore.cli.main import COMMANDS
    from segscore.figures._base import plot_file

    having = []
    for name, module in COMMANDS.items():
        for o in importlib.import_module(module).OPTIONS:
            if "--plot" in o.flags:
                assert o.name == "plot" and o.type is plot_file and o.kind == "value", name
                assert o.metavar == "FILE.png|svg" and "to FILE" in o.help, name
                having.append(name)
    assert {"auc", "target", "objects", "fibers", "audit", "report", "surfaces"} <= set(having)
