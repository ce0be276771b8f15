"""The repository's own promises: README commands, CI, light imports."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (REPO / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_readme_starts_with_the_two_commands_and_ci_runs_them():
    cmds = readme_commands()
    assert len(cmds) == 2
    assert "segscore demo" in cmds[0] and "pytest" in cmds[1]
    ci = (REPO / ".ci" / "run").read_text()
    for c in cmds:
        assert c in ci, f".ci/run does not run the README's command {c!r}"


def test_import_segscore_is_light():
    code = ("import sys, segscore, segscore.ink.auc, segscore.cli.main, segscore.errors; "
            "heavy = [m for m in ('dask', 'zarr', 'matplotlib', 'distributed', 'numba', 'scipy', 'torch') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_bare_import_pulls_numpy_only():
    code = "import sys, segscore; print(sorted(m for m in ('numpy', 'numba', 'tifffile', 'PIL') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() in ("[]", "['numpy']")


def test_release_large_buffers_is_safe_to_call_twice():
    from segscore.engine.memory import release_large_buffers

    first = release_large_buffers()
    assert release_large_buffers() is first
    if sys.platform.startswith("linux") and first is False:
        pytest.skip("not glibc")


@pytest.mark.parametrize("family", ["columns", "objects", "fibers", "curvilinear", "topology"])
def test_every_exported_name_imports_as_what_it_names(family):
    """`from segscore.<family> import name` gives the function or constant, in a fresh process
    and after the family's submodules are loaded (a submodule named like a function would
    shadow it or recurse)."""
    code = (f"import importlib, types, segscore.{family} as pkg\n"
            "names = list(pkg.__all__)\n"
            "first = {n: getattr(pkg, n) for n in names}\n"
            "import pkgutil\n"
            "for m in pkgutil.iter_modules(pkg.__path__): importlib.import_module(pkg.__name__ + '.' + m.name)\n"
            "for n in names:\n"
            "    again = getattr(pkg, n)\n"
            "    assert not isinstance(first[n], types.ModuleType), n\n"
            "    assert again is first[n], n\n"
            "print(len(names))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr.strip().splitlines()[-1:]
    assert int(out.stdout) > 0


def test_the_command_exits_fast_with_its_code_and_all_its_output(tmp_path):
    """``segscore`` leaves without interpreter teardown: stdout, files and exit codes intact."""
    import json

    import numpy as np

    from segscore.curvilinear.masks import save_mask
    from tests.cli_checks import one_line_error
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree((96, 96), seed=0)
    save_mask(gt, tmp_path / "gt.png")
    save_mask(np.roll(gt, 1, axis=0), tmp_path / "pred.png")
    run = [sys.executable, "-m", "segscore", "curve", str(tmp_path / "pred.png"), "--gt", str(tmp_path / "gt.png")]
    ok = subprocess.run(run + ["--json", "--json-out", str(tmp_path / "row.json")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["dice"] == json.loads((tmp_path / "row.json").read_text())["dice"] < 1
    bad = subprocess.run(run[:-1] + [str(tmp_path / "missing.png")], capture_output=True, text=True)
    one_line_error(bad.returncode, bad.stdout, bad.stderr, "missing.png")


LEAN_START = (
    "import sys, threading\n"
    "from segscore.kernels import _jit\n"
    "assert 'numba.np.arraymath' not in sys.modules\n"
    "{before}"
    "started = _jit.start_without_blas_probe()\n"
    "print(started, 'scipy.linalg' in sys.modules, 'scipy.linalg.cython_blas' in sys.modules)\n"
    "import numba, numpy as np\n"
    "import scipy.linalg.cython_blas\n"  # importable again once numba has started
    "f = numba.njit(lambda a, b: np.dot(a, b))\n"  # numba's BLAS path still works afterwards
    "print(f(np.ones(3), np.arange(3.0)), _jit.start_without_blas_probe())\n"
)


@pytest.mark.parametrize(("before", "want"), [
    ("", "True False False"),  # numba started without importing scipy.linalg
    ("import scipy.linalg\n", "False True True"),  # scipy.linalg there already: nothing to skip
    ("t = threading.Thread(target=threading.Event().wait, args=(5,), daemon=True); t.start()\n",
     "False False False"),  # another thread could import scipy meanwhile: left to the first kernel
])
def test_numba_starts_without_its_blas_probe_only_when_safe(before, want):
    out = subprocess.run([sys.executable, "-c", LEAN_START.format(before=before)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first == want
    assert second == "3.0 False"


def test_the_command_starts_numba_lean_and_scores_as_the_library(tmp_path):
    """``segscore curve`` (a kernel command) runs without scipy.linalg; its row is the API's."""
    import json

    from segscore.curvilinear.masks import save_mask
    from segscore.curvilinear.scoring import score
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree((96, 96), seed=1)
    pred = gt.copy()
    pred[40:44] = False
    save_mask(gt, tmp_path / "gt.png")
    save_mask(pred, tmp_path / "pred.png")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nLINALG %s\\n' % ('scipy.linalg' in sys.modules)))\n"
            "from segscore.cli.main import entry\n"
            f"sys.argv = ['segscore', 'curve', {str(tmp_path / 'pred.png')!r}, '--gt', {str(tmp_path / 'gt.png')!r},"
            " '--json']\n"
            "entry()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "LINALG False"
    row = json.loads(out.stdout)
    want = score(gt, pred)
    assert row.keys() == want.keys()
    assert all(row[k] == want[k] or (isinstance(want[k], tuple) and row[k] == list(want[k])) for k in want)


@pytest.mark.parametrize("command", ["audit", "profile"])
def test_audit_and_profile_run_without_scipy(tmp_path, command):
    """``segscore audit`` and ``segscore profile`` (operators, scoring, every metric, the
    statistics, the non-negative fit) import no scipy subpackage: scipy.spatial alone would add
    35 MB to an audit's resident memory, scipy.optimize 40 MB to a profile's."""
    from segscore.curvilinear.masks import save_mask
    from tests.curvilinear.helpers import vessel_tree

    masks = []
    for seed in (1, 2):
        save_mask(vessel_tree((96, 96), seed=seed), tmp_path / f"m{seed}.png")
        masks.append(str(tmp_path / f"m{seed}.png"))
    args = ([*masks, "--prune-px", "2", "--n-boot", "50"] if command == "audit" else
            [masks[1], "--gt", masks[0], "--prune-px", "2", "--seeds", "1"])
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nSCIPY %s\\n' % sorted(m for m in sys.modules"
            " if m.startswith('scipy.') and m.split('.')[1] in ('spatial', 'ndimage', 'sparse', 'linalg', 'optimize'))))\n"
            "from segscore.cli.main import entry\n"
            f"sys.argv = ['segscore', {command!r}, *{args!r}, '--quiet', '--json-out', {str(tmp_path / 'out.json')!r}]\n"
            "entry()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "SCIPY []"
    assert (tmp_path / "out.json").stat().st_size > 0


KERNEL_A = ("from segscore.kernels._jit import jit\n"
            "from segscore.kernels.b import helper\n\n\n"
            "@jit\n"
            "def kernel(x):\n"
            "    return helper(x) * 10\n")
KERNEL_B = "from segscore.kernels._jit import jit\n\n\n@jit\ndef helper(x):\n    return x + 1\n"
RUN_A = ("import segscore\n"
         "from segscore.kernels.a import kernel\n"
         "print(kernel(1), sum(kernel.stats.cache_hits.values()), sum(kernel.stats.cache_misses.values()),"
         " segscore.__file__)\n")


def test_a_kernel_sees_an_edit_to_a_compiled_helper_in_another_kernel_file(tmp_path):
    """numba stamps a cache entry with its function's own file; segscore.kernels._jit stamps every
    kernel with the contents of all kernel files. Kernel ``a.kernel`` calls ``b.helper``; an edit
    to b.py alone, keeping its size and mtime, must reach ``a.kernel`` in the next process."""
    import os
    import shutil

    pkg = tmp_path / "segscore"
    (pkg / "kernels").mkdir(parents=True)
    for rel in ("__init__.py", "cachedir.py", "kernels/__init__.py", "kernels/_jit.py"):
        shutil.copyfile(REPO / "segscore" / rel, pkg / rel)
    (pkg / "kernels" / "a.py").write_text(KERNEL_A)
    b = pkg / "kernels" / "b.py"
    b.write_text(KERNEL_B)
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)

    def run():  # a new process; -B: no .pyc, which Python would trust by size and mtime
        out = subprocess.run([sys.executable, "-B", "-c", RUN_A], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stderr
        value, hits, misses, where = out.stdout.split()
        assert Path(where).resolve() == (pkg / "__init__.py").resolve()  # the copy, not the checkout
        return int(value), int(hits), int(misses)

    assert run() == (20, 0, 1)  # compiled and saved
    assert run() == (20, 1, 0)  # loaded from the cache
    st = b.stat()
    b.write_text(KERNEL_B.replace("x + 1", "x + 2"))
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (b.stat().st_size, b.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert run() == (30, 0, 1)  # the stale entry of a.kernel was not used
    assert run() == (30, 1, 0)
    assert list(cache.rglob("a.kernel-*.nbi"))  # NUMBA_CACHE_DIR honoured
    assert not (pkg / "kernels" / "__pycache__").exists()


FAMILY_PACKAGES = ("ink", "columns", "curvilinear", "objects", "fibers", "topology", "families", "batch", "cli")


def _segscore_imports(path: Path) -> set[str]:
    """Every ``segscore.*`` module a file imports, at any depth (function-level imports too)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("segscore")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("segscore"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


@pytest.mark.parametrize("layer, forbidden", [
    ("io", ("engine", "metrics") + FAMILY_PACKAGES),
    ("engine", ("metrics",) + FAMILY_PACKAGES),
    ("kernels", ("io", "engine", "metrics") + FAMILY_PACKAGES),
    ("metrics", ("io",) + FAMILY_PACKAGES),
])
def test_layers_import_only_downwards(layer, forbidden):
    """cli -> batch -> families -> metrics -> engine -> io -> kernels (DESIGN.md, "Layout": metrics
    shared by families may run their kernels side by side through the engine's executors; the
    engine knows no metric)."""
    bad = []
    for path in sorted((REPO / "segscore" / layer).rglob("*.py")):
        for module in _segscore_imports(path):
            if _layer_of(module) in forbidden:
                bad.append(f"{path.relative_to(REPO)} imports {module}")
    assert not bad, bad


def test_the_registry_names_every_family_and_warms_it():
    from segscore.cli.main import COMMANDS
    from segscore.families import FAMILIES, family

    assert set(FAMILIES) == {"ink", "columns", "objects", "fibers", "curvilinear", "topology"}
    commands = {c for f in FAMILIES.values() for c in f.commands}
    assert commands <= set(COMMANDS) and {"run"} | commands == set(COMMANDS)
    for f in FAMILIES.values():
        assert callable(f.load("score")) and callable(f.load("warm"))
    with pytest.raises(KeyError, match="families:"):
        family("nope")
    code = "import segscore; print(segscore.warm(['ink', 'objects']))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['ink', 'objects']"


#: a family may build on another only where its spec does: ScrollGT's column targets on its ink targets
FAMILY_BUILDS_ON = {"columns": ("ink",)}


@pytest.mark.parametrize("family", ["ink", "columns", "curvilinear", "objects", "fibers", "topology"])
def test_families_share_code_through_the_layers_below_not_each_other(family):
    others = {"ink", "columns", "curvilinear", "objects", "fibers", "topology"} - {family} - set(FAMILY_BUILDS_ON.get(family, ()))
    bad = [f"{path.relative_to(REPO)} imports {module}"
           for path in sorted((REPO / "segscore" / family).rglob("*.py"))
           for module in _segscore_imports(path) if _layer_of(module) in others]
    assert not bad, bad
