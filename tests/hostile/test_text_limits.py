"""Text inputs read with a size limit: a device through a symlink, a huge file, a huge line.

Manifests, JSON (regions, cards, held-out manifests, audit cases) and results lines are read with
segscore.io.budget's limit: never more than the limit (plus one byte) is read, whatever the
file is. (Non-regular files are also refused up front elsewhere; the limit holds regardless.)
"""

from __future__ import annotations

import json
import os

import pytest

from segscore.io import budget
from tests.hostile import bombs


@pytest.fixture()
def zero(tmp_path):
    """A symlink to /dev/zero with each suffix a text input may have."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    links = {}
    for suffix in (".json", ".csv", ".jsonl", ""):
        link = tmp_path / f"zero{suffix}"
        link.symlink_to("/dev/zero")
        links[suffix] = link
    return links


def _cases(zero, tmp_path):
    out = tmp_path / "out"
    return [
        ("batch json manifest", ["batch", zero[".json"], "--out", out], zero[".json"]),
        ("batch csv manifest", ["batch", zero[".csv"], "--out", out], zero[".csv"]),
        ("batch jsonl manifest", ["batch", zero[".jsonl"], "--out", out], zero[".jsonl"]),
        ("regions", ["check", "--window-px", "64", "--scan-um", "7.91", "--regions-json", zero[".json"]],
         zero[".json"]),
        ("fiber card", ["fibers-aggregate", zero[".json"]], zero[".json"]),
        ("held-out manifest", ["holdout", "--verify", zero[".json"]], zero[".json"]),
        ("audit cases", ["audit", "--cases", zero[".json"]], zero[".json"]),
    ]


def test_dev_zero_through_a_symlink_is_never_read_whole(zero, tmp_path):
    wrong = []
    for label, argv, name in _cases(zero, tmp_path):
        r = bombs.run_measured(argv, budget="1G", timeout=60)
        try:
            bombs.refused_in_one_line(r, name)
            assert r["peak"] < bombs.PEAK_LIMIT, f"peak {r['peak'] / 1e6:.0f} MB"
        except AssertionError as exc:
            wrong.append(f"{label}: {exc}")
    assert not wrong, "\n".join(wrong)


def test_a_100_mb_results_line_is_refused_not_parsed(tmp_path):
    """One line of 100 MB (a list of small numbers: 40 bytes of Python objects per byte of
    text) made `report` take 4.3 GB; it is refused naming the file and the line, before it is
    read whole, with the default budget too (the text limit is at most 64 MB)."""
    folder = tmp_path / "results"
    folder.mkdir()
    jsonl = folder / "results.jsonl"
    good = {"id": "a", "job": "curve p.png --gt g.png", "family": "curvilinear", "tags": {}, "status": "scored",
            "result": {"dice": 0.5, "notes": {}}, "error": None, "inputs": {}, "version": "0", "seconds": 1.0,
            "finished": "2026-12-03T10:00:00"}
    with open(jsonl, "w") as fh:
        fh.write(json.dumps(good) + "\n")
        fh.write('{"id": "b", "result": [' + "0," * (50 << 20) + "0]}\n")
    assert jsonl.stat().st_size > 100e6
    before = bombs.digests([jsonl])
    r = bombs.run_measured(["report", folder], budget=None, timeout=120)
    line = bombs.refused_in_one_line(r, f"{jsonl}:2")
    assert "larger than" in line
    assert r["peak"] < bombs.PEAK_LIMIT, f"peak {r['peak'] / 1e6:.0f} MB"
    assert bombs.digests([jsonl]) == before


def test_a_huge_manifest_is_refused_by_its_size_before_it_is_read(tmp_path):
    manifest = tmp_path / "jobs.csv"
    with open(manifest, "wb") as fh:  # sparse: 200 MB declared, nothing written
        fh.truncate(200 << 20)
    r = bombs.run_measured(["batch", manifest, "--out", tmp_path / "out"], budget="1G")
    assert "larger than" in bombs.refused_in_one_line(r, manifest)
    assert r["peak"] < 300e6


def test_read_text_never_reads_past_its_limit(tmp_path):
    from segscore.errors import ScoreError

    p = tmp_path / "a.json"
    p.write_text('{"a": 1}')
    assert budget.load_json(p, fix="x") == {"a": 1}
    with pytest.raises(budget.TooLargeError, match="a.json: the file is larger than"):
        budget.read_text(p, fix="x", limit=4)
    p.write_bytes(b'{"a": "\0"}')
    with pytest.raises(ScoreError, match="NUL"):
        budget.read_text(p, fix="x")
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(ScoreError, match="not UTF-8"):
        budget.read_text(p, fix="x")
    for text, needle in (("[" * 100_000, "nested too deeply"), ('{"a": NaN}', "NaN"), ('[1e400]', "1e400"),
                         ("[-Infinity]", "Infinity"), ("{", "not valid JSON")):
        p.write_text(text)
        with pytest.raises(ScoreError, match=needle) as err:
            budget.load_json(p, fix="fix it")
        assert str(p) in str(err.value) and "\n" not in str(err.value)


def test_iter_lines_refuses_a_long_line_by_its_number(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b"a\n" + b"x" * 100 + b"\nb\n")
    with pytest.raises(budget.TooLargeError, match=r"r.jsonl:2: the line is larger than"):
        list(budget.iter_lines(p, fix="x", limit=50))
    assert list(budget.iter_lines(p, fix="x", limit=101)) == [(1, b"a"), (2, b"x" * 100), (3, b"b")]
    with pytest.raises(budget.TooLargeError, match="r.jsonl: needs more than"):
        list(budget.iter_lines(p, fix="x", limit=200, total=10))


def test_the_budget_comes_from_the_setting_the_environment_or_the_machine(monkeypatch):
    from segscore.errors import ScoreError

    monkeypatch.delenv(budget.ENV, raising=False)
    budget.set_read_budget(None)
    available = 10 << 30  # the machine's free memory changes from one read to the next: fixed here
    monkeypatch.setattr(budget, "available_memory", lambda: available)
    assert budget.read_budget() == max(int(available * budget.DEFAULT_FRACTION), 1 << 20)
    monkeypatch.undo()
    monkeypatch.delenv(budget.ENV, raising=False)
    assert 0 < budget.available_memory() < 1 << 50
    monkeypatch.setenv(budget.ENV, "512M")
    assert budget.read_budget() == 512 << 20
    assert budget.text_limit() == 8 << 20
    budget.set_read_budget("2G")
    try:
        assert budget.read_budget() == 2 << 30
        with pytest.raises(budget.TooLargeError, match=r"F: needs 3 GB, 2.1 GB available \(the read budget"):
            budget.check_bytes("F", 3 * 10**9)
        budget.check_bytes("F", 2 << 30)
    finally:
        budget.set_read_budget(None)
    monkeypatch.setenv(budget.ENV, "lots")
    with pytest.raises(ScoreError, match="SEGSCORE_READ_BUDGET='lots'"):
        budget.read_budget()
    for text, n in (("1000", 1000), ("1.5K", 1536), ("2GB", 2 << 30), ("3 MiB", 3 << 20)):
        assert budget.parse_size(text) == n
    for text in ("-1", "0", "1e400", "5Q", "nan"):
        with pytest.raises(ValueError):
            budget.parse_size(text)
