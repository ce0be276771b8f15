"""The repository's own promises: README commands, CI, light imports."""

import re
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


def test_the_command_scores_as_the_library(tmp_path):
    """``segscore curve`` through the console entry point: its row is the API's."""
    import json

    from segscore.curvilinear.masks import save_mask
    from segscore.curvilinear.scoring import score
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree((96, 96), seed=1)
    pred = gt.copy()
    pred[40:44] = False
    save_mask(gt, tmp_path / "gt.png")
    save_mask(pred, tmp_path / "pred.png")
    code = ("import sys\n"
            "from segscore.cli.main import entry\n"
            f"sys.argv = ['segscore', 'curve', {str(tmp_path / 'pred.png')!r}, '--gt', {str(tmp_path / 'gt.png')!r},"
            " '--json']\n"
            "entry()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    want = score(gt, pred, all_metrics=True)  # curve computes curvicost's further metrics by default
    assert row.keys() == want.keys()
    assert all(row[k] == want[k] or (isinstance(want[k], tuple) and row[k] == list(want[k])) for k in want)


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
    for rel in ("__init__.py", "_version.py", "cachedir.py", "kernels/__init__.py", "kernels/_jit.py"):
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
    ("stats", ("engine", "figures", "commands") + FAMILY_PACKAGES),  # the metrics layer: kernels, io, metrics
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


def _root_imports(path: Path) -> list[str]:
    """Where a file imports the package root itself (``import segscore``, ``from segscore import
    NAME``), at any depth; ``from segscore import <subpackage>`` counts too: say the module."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(a.name == "segscore" for a in node.names):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: import segscore")
        elif isinstance(node, ast.ImportFrom) and node.module == "segscore" and not node.level:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: from segscore import "
                         + ", ".join(a.name for a in node.names))
    return found


@pytest.mark.parametrize("layer", ["ink", "columns", "curvilinear", "objects", "fibers", "topology", "metrics",
                                   "engine", "io", "kernels"])
def test_no_family_and_no_layer_below_imports_the_package_root(layer):
    """The root re-exports the layers (``segscore.warm``, ``__version__``, the API): a family reaching
    back up through it would import every layer above it. The version lives in
    ``segscore._version``, each family's warm-up in ``segscore.<family>.warmup``."""
    bad = [hit for path in sorted((REPO / "segscore" / layer).rglob("*.py")) for hit in _root_imports(path)]
    assert not bad, bad


def test_the_version_module_is_the_one_pyproject_declares():
    import tomllib

    import segscore
    from segscore._version import __version__

    assert segscore.__version__ == __version__
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"] == __version__


def test_io_has_no_import_circle():
    """No module of ``segscore.io`` reaches itself through the others' imports (function-level
    imports included): io/remote builds sources of io/sources, so io/sources never imports io/remote."""
    io_dir = REPO / "segscore" / "io"
    graph = {}
    for path in sorted(io_dir.glob("*.py")):
        me = f"segscore.io.{path.stem}"
        graph[me] = {m for m in _segscore_imports(path) if m.startswith("segscore.io.")
                     and (io_dir / f"{m.split('.')[2]}.py").exists() and m.split(".")[2] != path.stem}
        graph[me] = {".".join(m.split(".")[:3]) for m in graph[me]}
    cycles = []

    def walk(node, trail):
        for nxt in sorted(graph.get(node, ())):
            if nxt == trail[0]:
                cycles.append(" -> ".join(trail + [nxt]))
            elif nxt not in trail:
                walk(nxt, trail + [nxt])

    for start in graph:
        walk(start, [start])
    assert not cycles, cycles[:5]


def test_the_engine_names_no_family():
    """engine/ keeps generic planners and executors (issue 35 item 6): no function, constant,
    argument or attribute it defines or reads is named for a family; a family's window shapes and
    budgets live with the family (objects/tiles.py, ink/scan.py, ink/targets.py)."""
    import ast

    family = re.compile(r"ink|object|fiber|column|curv|topolog|surface|vessel|audit", re.IGNORECASE)
    bad = []
    for path in sorted((REPO / "segscore" / "engine").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = (node.name if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else node.id
                    if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else node.attr
                    if isinstance(node, ast.Attribute) else None)
            if name and family.search(name):
                bad.append(f"{path.name}:{node.lineno}: {name}")
    assert not bad, bad


def test_every_family_defines_its_own_warm_up():
    from segscore.families import FAMILIES

    for f in FAMILIES.values():
        assert f.warm == f"segscore.{f.name}.warmup:warm", f.warm


def test_the_registry_names_every_family_and_warms_it():
    from segscore.cli.main import COMMANDS
    from segscore.families import FAMILIES, family

    assert set(FAMILIES) == {"ink", "columns", "objects", "fibers", "curvilinear", "topology"}
    commands = {c for f in FAMILIES.values() for c in f.commands}
    assert commands <= set(COMMANDS) and {"run", "batch", "report", "warm"} | commands == set(COMMANDS)
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
#: ... or on one module of another, named here: surfaces' streamed VOI labels its foregrounds with
#: objects' blockwise labelling (issue 37; it needs io and metrics, which no layer below a family
#: may both import)
FAMILY_USES_MODULE = {"topology": ("segscore.objects.blocklabel",)}


@pytest.mark.parametrize("family", ["ink", "columns", "curvilinear", "objects", "fibers", "topology"])
def test_families_share_code_through_the_layers_below_not_each_other(family):
    others = {"ink", "columns", "curvilinear", "objects", "fibers", "topology"} - {family} - set(FAMILY_BUILDS_ON.get(family, ()))
    bad = [f"{path.relative_to(REPO)} imports {module}"
           for path in sorted((REPO / "segscore" / family).rglob("*.py"))
           for module in _segscore_imports(path) if _layer_of(module) in others
           and not any(module == m or module.startswith(m + ".") for m in FAMILY_USES_MODULE.get(family, ()))]
    assert not bad, bad


#: libraries whose private names segscore never touches (DESIGN.md, "Dependencies")
_LIBRARIES = ("numba", "distributed", "dask", "multiprocessing", "atexit", "scipy", "zarr", "fsspec", "numcodecs",
              "tifffile", "skimage", "numpy", "PIL", "nibabel", "sklearn", "concurrent", "threading")


def _private_uses(path: Path) -> list[str]:
    import ast

    tree = ast.parse(path.read_text())
    aliases, found = {}, []

    def private(name):
        return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in _LIBRARIES:
                    aliases[(a.asname or a.name).split(".")[0]] = a.name
                    if any(private(p) for p in a.name.split(".")):
                        found.append(f"{path.name}:{node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in _LIBRARIES:
            if any(private(p) for p in node.module.split(".")):
                found.append(f"{path.name}:{node.lineno}: from {node.module}")
            for a in node.names:
                if private(a.name):
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import {a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.value if not isinstance(root, ast.Call) else root.func
            if isinstance(root, ast.Name) and (root.id in aliases or root.id == "os" and node.attr == "_exit"):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


#: private names reached through an object rather than a module, which the import walk cannot see:
#: an fsspec filesystem's coroutines (``fs._exists``, ``store.fs._cat_file``), its
#: ``_strip_protocol``, zarr's internal event loop (``zarr.core.sync``)
_PRIVATE_VIA_OBJECTS = re.compile(r"\bfs\._[a-z]\w*|\._(exists|info|ls|cat_file|get_file|pipe_file|rm_file|"
                                  r"strip_protocol)\b|\bcore\.sync\b")


def test_no_private_name_of_a_library_and_no_process_tricks():
    """No private name of numba, distributed, multiprocessing, atexit or any other library we use
    is imported or read (match a library's answers, not its internals), and no os._exit."""
    bad = []
    for path in sorted((REPO / "segscore").rglob("*.py")):
        bad += [f"{path.relative_to(REPO)}: {u}" for u in _private_uses(path)]
        text = path.read_text()
        if "os._exit" in text:
            bad.append(f"{path.relative_to(REPO)}: os._exit")
        bad += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in _PRIVATE_VIA_OBJECTS.finditer(text)]
    assert not bad, "\n".join(bad)
    assert _PRIVATE_VIA_OBJECTS.search("sync(store.fs._exists(store.path))") and \
        _PRIVATE_VIA_OBJECTS.search("from zarr.core.sync import sync") and \
        _PRIVATE_VIA_OBJECTS.search("fs._strip_protocol(url)") and not _PRIVATE_VIA_OBJECTS.search("fs.exists(url)")


def test_every_command_speaks_the_one_option_vocabulary():
    """Every command takes --json, --json-out, --csv, --plot, --threads and --tile-rows, or its
    registry entry says why not (shown in its --help); every --help ends with the exit codes."""
    import contextlib
    import io

    from segscore.cli.main import build_parser, main
    from segscore.families import REGISTRY, VOCABULARY

    for name, command in REGISTRY.items():
        parser = build_parser(name)
        sub = next(a for a in parser._actions if a.dest == "command").choices[name]
        options = {o for a in sub._actions for o in a.option_strings}
        without = dict(command.without)
        for option in VOCABULARY:
            assert (option in options) != (option in without), (name, option)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([name, "--help"]) == 0
        text = out.getvalue()
        assert "exit codes: 0 it ran and scored" in text.splitlines()[-1], name
        for option, why in command.without:
            assert f"  {option}: {why}" in text, (name, option)
