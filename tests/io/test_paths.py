"""segscore.io.paths: pipes and devices refused up front; an output never replaces an input."""

import os

import pytest

from segscore.errors import ScoreError
from segscore.io.paths import check_outputs, check_readable, one_line, special_kind


def test_special_kinds(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", tmp_path / "link")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    assert special_kind(f) is None and special_kind(tmp_path) is None and special_kind(tmp_path / "missing") is None
    assert special_kind(tmp_path / "pipe") == "a FIFO (named pipe)"
    assert special_kind(tmp_path / "link") == "a FIFO (named pipe)"  # a link is judged by its target
    assert special_kind(tmp_path / "zero.json") == "a character device"
    assert special_kind("https://host/x.zarr") is None
    with pytest.raises(ScoreError, match=r"zero.json: is a character device, not a regular file"):
        check_readable(tmp_path / "zero.json")
    check_readable(f)


def test_outputs_onto_inputs(tmp_path):
    gt = tmp_path / "gt.png"
    gt.write_bytes(b"png")
    (tmp_path / "d").mkdir()
    os.link(gt, tmp_path / "hard.png")
    os.symlink(gt, tmp_path / "soft.png")
    folder = tmp_path / "target"
    folder.mkdir()
    (folder / "meta.json").write_text("{}")
    for out in (gt, tmp_path / "hard.png", tmp_path / "soft.png", tmp_path / "d" / ".." / "gt.png"):
        with pytest.raises(ScoreError, match="names the input"):
            check_outputs([gt], [("--json-out", str(out))])
    with pytest.raises(ScoreError, match="inside the input folder"):
        check_outputs([folder], [("--csv", str(folder / "meta.json"))])
    # allowed: a new file beside an input, a new file in an input folder, a URL
    check_outputs([gt, folder], [("--json-out", str(tmp_path / "out.json")), ("--csv", str(folder / "new.csv")),
                                 ("--plot", "s3://bucket/x.png")])


def test_one_line_names():
    assert one_line("a\nb.png") == "a\\nb.png" and one_line("plain.png") == "plain.png"
