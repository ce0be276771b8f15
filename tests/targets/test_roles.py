"""A target folder given as the prediction (issue 35 item 3): refused in one line that names the
roles (the target is the truth, the command takes the prediction first), by the family code, so the
command line and the Python functions alike; never only "no such target folder"."""

from __future__ import annotations

import pytest

from segscore.errors import ScoreError
from tests.cli_checks import one_line_error
from tests.targets.helpers import make_target, reading_map, write_png


@pytest.fixture
def swapped(tmp_path):
    folder, ink, _ = make_target(tmp_path / "t1")
    write_png(tmp_path / "pred.png", reading_map(ink))
    return folder, tmp_path / "pred.png"


@pytest.mark.parametrize("command", ["target", "placement"])
def test_a_swapped_target_and_prediction_are_refused_naming_the_roles(cli, swapped, command):
    folder, pred = swapped
    code, out, err = cli(command, folder, pred)
    one_line_error(code, out, err, f"{folder} is an ink target folder: it is the truth; "
                                   f"`segscore {command} PRED TARGET` takes the prediction first")
    code, out, err = cli(command, pred, folder, "--json")  # the right order still scores
    assert code == 0, err


def test_the_python_functions_refuse_it_too(swapped):
    from segscore.ink.placement import probe_target
    from segscore.ink.targets import score_target

    folder, pred = swapped
    with pytest.raises(ScoreError, match="is an ink target folder: it is the truth"):
        score_target(str(folder), str(pred))
    with pytest.raises(ScoreError, match="is an ink target folder: it is the truth"):
        probe_target(folder, pred)
