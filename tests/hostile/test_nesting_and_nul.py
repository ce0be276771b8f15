"""Recursion depth and NUL bytes: 100,000 nested [ and a NUL in a job are one-line refusals.

Run through segscore.cli.main.main in-process (the recursion limit of the test process is the
interpreter's default, as the console script's is)."""

from __future__ import annotations

import json

import pytest

from tests.hostile import bombs

DEEP = "[" * 100_000


def _check(cli, argv, name):
    code, out, err = cli(*argv)
    lines = err.strip().splitlines()
    assert code == 2, (code, err[-2000:])
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert str(name) in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name, text", [
    ("deep.json", DEEP),
    ("deep.jsonl", DEEP),
    ("deep", DEEP),  # no suffix: told by its first character
    ("deep2.json", '[{"id": "a", "job": "curve a.png --gt b.png", "tags": ' + "[" * 100_000 + "}]"),
    ("grid.json", '{"template": "curve {p} --gt g.png", "grid": ' + "[" * 100_000 + "}"),
])
def test_a_deeply_nested_manifest_is_refused_naming_it(cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    before = bombs.digests([path])
    line = _check(cli, ["batch", path, "--out", tmp_path / "out"], path)
    assert "nested too deeply" in line or "not valid JSON" in line
    assert bombs.digests([path]) == before
    assert not (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize("text", [DEEP, '{"format": "segscore-case-table", "version": 1, "cases": ' + DEEP])
def test_a_deeply_nested_cases_file_is_refused_naming_it(cli, tmp_path, text):
    path = tmp_path / "cases.json"
    path.write_text(text)
    before = bombs.digests([path])
    line = _check(cli, ["audit", "--cases", path], path)
    assert "nested too deeply" in line or "not JSON" in line
    assert bombs.digests([path]) == before


@pytest.mark.parametrize("option", [["check", "--window-px", "64", "--scan-um", "7.91", "--regions-json"],
                                    ["fibers-aggregate"], ["holdout", "--verify"]])
def test_a_deeply_nested_json_input_is_refused_naming_it(cli, tmp_path, option):
    path = tmp_path / "deep.json"
    path.write_text(DEEP)
    _check(cli, [*option, path], path)


def test_a_nul_in_a_csv_job_is_refused_naming_the_manifest(cli, tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_bytes(b"id,job\na,curve p\0.png --gt g.png\n")
    before = bombs.digests([path])
    line = _check(cli, ["batch", path, "--out", tmp_path / "out"], path)
    assert "NUL" in line
    assert bombs.digests([path]) == before


def test_an_escaped_nul_in_a_json_job_is_refused_naming_its_line(cli, tmp_path):
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps([{"id": "a", "job": "curve p\u0000.png --gt g.png"}]))
    line = _check(cli, ["batch", path, "--out", tmp_path / "out"], path)
    assert f"{path}:1" in line and "NUL" in line


def test_a_nul_in_a_path_has_no_fingerprint_crash():
    from segscore.batch.store import fingerprint

    assert fingerprint("a\0b") == {"path": "a\0b", "missing": True}


def test_deep_results_lines_are_refused_by_report(cli, tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "results.jsonl").write_text('{"id": "a", "result": ' + DEEP + "\n")
    line = _check(cli, ["report", folder], folder / "results.jsonl")
    assert "line 1" in line and "nested too deeply" in line
