"""A fiber target folder given as the labels (issue 35 item 3): one line naming the roles."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.errors import ScoreError
from tests.cli_checks import one_line_error
from tests.fibers.helpers import write_target

SHAPE = (10, 12, 24)


def test_a_swapped_fiber_target_is_refused_naming_the_roles(cli, tmp_path):
    fibers = [(np.array([[4, 4, 2], [4, 4, 20]], float), np.array([[0, 1]]))]
    mask = np.zeros(SHAPE, bool)
    mask[4, 3:6, :] = True
    folder = write_target(tmp_path / "fibers_tiny_10", fibers, mask)
    labels = tmp_path / "labels.npy"
    np.save(labels, mask.astype(np.uint32))
    code, out, err = cli("fibers", folder, labels)
    one_line_error(code, out, err, f"{folder} is a fiber target folder: it is the truth; "
                                   "`segscore fibers LABELS TARGET` takes the labels (the prediction) first")
    from segscore.fibers.card import score_fibers

    with pytest.raises(ScoreError, match="is a fiber target folder: it is the truth"):
        score_fibers(labels, folder)
    code, out, err = cli("fibers", labels, folder, "--json")
    assert code == 0, err
