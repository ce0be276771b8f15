"""Every code block of README.md and docs/*.md runs (issue 29 item 5): a small doctest-like runner.

Each page runs in its own temporary folder, prepared by ``prepare``: what ``segscore demo --keep
DIR`` writes, the demo's sample segment in ``seg/`` and small synthetic inputs of every kind in
``data/`` (:func:`segscore.io.samples.write_data`).
The blocks of one page run in order in that folder, so a block may use what an earlier one
wrote. A ```bash block runs with ``bash -euo pipefail`` (``segscore`` from this checkout); a
```python block runs in a fresh interpreter whose namespace the page's later python blocks share
(one process per page, block after block, between its bash blocks). ```text blocks show output or a usage synopsis
and are not run; neither is the README's first block (the set-up, which ``.ci/run`` runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(page: str):
    """``[(language, code, line)]`` of a page's fenced blocks, the README's set-up block left out."""
    text = (REPO / page).read_text()
    found = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]
    if page == "README.md":
        assert found[0][0] == "bash" and "segscore demo" in found[0][1]
        found = found[1:]
    return found


def prepare(folder: Path) -> None:
    """The inputs the pages' examples read, written as a user gets them: ``segscore demo --keep``
    (``seg/``, the sample segment, and ``data/``, :func:`segscore.io.samples.write_data`)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "segscore", "demo", "--keep", str(folder), "--bootstrap", "0"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["data", "seg"]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs-inputs")
    prepare(folder)
    return folder


PY_WORKER = r"""
import contextlib, io, json, sys, traceback
ns = {"__name__": "__docs__"}
status = sys.stdout
for request in sys.stdin:
    code, line = json.loads(request)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"block at line {line}", "exec"), ns)
        status.write(json.dumps(None) + "\n")
    except BaseException:
        status.write(json.dumps(traceback.format_exc()) + "\n")
    status.flush()
"""


@pytest.mark.parametrize("page", PAGES)
def test_every_block_of_the_page_runs(page, prepared, tmp_path):
    found = blocks(page)
    unknown = {lang for lang, _, _ in found} - {"bash", "python", "text"}
    assert not unknown, f"{page}: code blocks must say bash, python or text, not {unknown}"
    work = tmp_path / "work"
    shutil.copytree(prepared, work)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               MPLBACKEND="Agg")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # one interpreter for the page's python blocks, in page order between its bash blocks
    worker = subprocess.Popen([sys.executable, "-c", PY_WORKER], cwd=work, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for lang, code, line in found:
            if lang == "bash":
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env,
                                   capture_output=True, text=True, timeout=300)
                assert r.returncode == 0, (f"{page}: the bash block at line {line} exited {r.returncode}:\n"
                                           f"{r.stderr[-2000:]}")
            elif lang == "python":
                worker.stdin.write(json.dumps([code, line]) + "\n")
                worker.stdin.flush()
                failure = json.loads(worker.stdout.readline() or '"the interpreter ended"')
                assert failure is None, f"{page}: the python block at line {line} failed:\n{failure[-3000:]}"
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)


def test_the_refusals_page_names_every_row_of_the_matrix():
    """docs/refusals.md has a table row naming every case id of tests/test_refusal_matrix.py
    (the matrix is code, one builder a case, so the page is written by hand and checked here),
    and names no row the matrix does not have."""
    from tests.test_refusal_matrix import CASES

    ids = {c.id for c in CASES} | {f"kit:{d}-is-required" for d in ("numpy", "tifffile", "zarr")}
    page = (REPO / "docs" / "refusals.md").read_text()
    named = set()
    for row in re.findall(r"^\| (`[^|]*)\|", page, re.MULTILINE):
        named |= set(re.findall(r"`([a-z]+:[a-z0-9-]+)`", row))
    assert sorted(ids - named) == [], "rows of the matrix the page does not name"
    assert sorted(named - ids) == [], "rows the page names that the matrix does not test"


#: the older per-family entry points (each warns FutureWarning naming its segscore.api call)
OLDER = ("score_files", "score_array", "auc_scores", "score_target", "probe_target", "score_columns",
         "score_segmentation", "score_holdout", "score_fibers", "curvilinear.score", "scoring.score",
         "curvilinear import score")


def test_the_pages_use_only_segscore_api():
    """README and every docs page but the migration page name none of the older per-family
    functions (docs/migration.md maps each to its segscore.api call, and names them all)."""
    import re as _re

    for page in PAGES:
        if page == "docs/migration.md":
            continue
        text = (REPO / page).read_text()
        found = [name for name in OLDER if _re.search(r"(?<![\w.])" + _re.escape(name) + r"\b", text)]
        assert not found, f"{page} names {found}; use segscore.api (docs/migration.md)"
    migration = (REPO / "docs" / "migration.md").read_text()
    for name in ("score_files", "score_array", "auc_scores", "score_target", "probe_target", "score_columns",
                 "score_segmentation", "score_holdout", "score_fibers", "curvilinear.score"):
        assert name in migration, name


def test_the_benchmarks_and_the_figure_script_call_segscore_api():
    """benchmarks/ and docs/figures/make_figures.py import and call none of the older per-family
    functions (a peer's function of the same name, ``sp.score_segmentation``, is not one): what they
    time and draw is what a user of segscore.api gets."""
    import re as _re

    names = ("score_files", "score_array", "auc_scores", "score_target", "probe_target", "score_columns",
             "score_segmentation", "score_holdout", "score_holdout_files", "score_fibers")
    scripts = sorted((REPO / "benchmarks").glob("*.py")) + [REPO / "docs" / "figures" / "make_figures.py"]
    assert len(scripts) > 10
    for path in scripts:
        text = path.read_text()
        called = [n for n in names if _re.search(r"(?<![\w.])" + n + r"\s*\(", text)
                  or _re.search(r"import[^\n]*\b" + n + r"\b", text)]
        called += [s for s in ("curvilinear.scoring import score\n", "curvilinear import score\n",
                               "curvilinear.score(", "scoring.score(") if s in text]
        assert not called, f"{path.relative_to(REPO)} calls {called}; call segscore.api (docs/migration.md)"
