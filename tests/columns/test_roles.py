"""A column target folder given as the prediction (issue 35 item 3): one line naming the roles."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.errors import ScoreError
from tests.cli_checks import one_line_error
from tests.columns.helpers import make_column_target, reading_prediction


def test_a_swapped_column_target_is_refused_naming_the_roles(cli, tmp_path):
    folder, _ = make_column_target(tmp_path / "cols")
    np.save(tmp_path / "pred.npy", reading_prediction().astype(np.float32))
    code, out, err = cli("columns", folder, tmp_path / "pred.npy")
    one_line_error(code, out, err, f"{folder} is a column target folder: it is the truth; "
                                   "`segscore columns PRED TARGET` takes the prediction first")
    from segscore.columns.score import score_columns

    with pytest.raises(ScoreError, match="is a column target folder: it is the truth"):
        score_columns(folder, tmp_path / "pred.npy")
    code, out, err = cli("columns", tmp_path / "pred.npy", folder, "--json", "--no-floors")
    assert code == 0, err
