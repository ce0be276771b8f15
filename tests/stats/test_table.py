"""The CSV reader: the plain fast path gives what :mod:`csv` gives, and quoting still goes through csv."""

from __future__ import annotations

import csv
import io

import pytest

from segscore.errors import ScoreError
from segscore.stats.table import _split_plain_csv, build_suite, read_columns


def _csv_module(text):
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    return {h: list(c) for h, c in zip(rows[0], zip(*rows[1:]))}


@pytest.mark.parametrize("text", [
    "case,model,score\nc1,a,0.5\nc2,a,\nc1,b,NA\n\nc2,b,1e-3\n",
    "case,model,score\r\nc1,a,0.5\r\nc2,a,0.25\r\n",
    "case,model,score\nc1,a, 0.5 \nc2,a,0.25",
])
def test_plain_csv_fast_path_equals_the_csv_module(text, tmp_path):
    assert _split_plain_csv(text) == _csv_module(text)
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    assert read_columns(path) == _csv_module(text)


@pytest.mark.parametrize("text", ['case,model,score\n"c,1",a,0.5\n', "case,model,score\rc1,a,0.5\r",
                                  "case,model,score\nc1,a,0.5,9\nc2,a\n"])
def test_quoting_lone_cr_or_ragged_rows_leave_the_fast_path(text):
    assert _split_plain_csv(text) is None


def test_quoted_cells_and_ragged_rows_through_the_csv_module(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('case,model,score\n"c,1",a,0.5\n"c,2",a,"0.75"\n')
    suite = build_suite(path, case="case", by="model", metrics=["score"])
    assert suite.tasks[0].cases == ["c,1", "c,2"]
    assert suite.tasks[0].values["score"].tolist() == [[0.5, 0.75]]
    path.write_text("case,model,score\nc1,a,0.5,9\nc2,a\n")
    with pytest.raises(ScoreError, match="data row 1 has 4 cells"):
        read_columns(path)
