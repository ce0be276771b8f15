"""The experiment ledger: ``ROOT/SLUG/run.json`` with a list of checks.

``init_run`` starts ``{"slug", "created", "checks": []}``; ``add_check`` appends
``{"name", "time", "argv", "result"}``. Every write holds an exclusive lock on
``ROOT/SLUG/run.json.lock`` and replaces the file atomically (temporary file, fsync,
rename), so concurrent writers never lose each other's checks and a killed process never
leaves a torn file. Temporary files are made only under the lock, so any one found by the
holder of the lock is a killed writer's: it is removed. A ``run.json`` that is not a ledger
(not JSON, not an object, ``checks`` not a list) is refused and left as it is.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from segscore.errors import ScoreError
from segscore.io.results import atomic_write, dumps
from segscore.io.schema import Field, validate

DEFAULT_ROOT = "experiments"


def run_path(slug: str, root=DEFAULT_ROOT) -> Path:
    if not slug or "/" in slug or slug in (".", ".."):
        raise ScoreError(f"experiment slug {slug!r} must be a plain name without '/'")
    return Path(root) / slug / "run.json"


@contextmanager
def _locked(path: Path):
    import fcntl

    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _remove_stale_temporaries(path: Path) -> None:
    """Delete the temporary files killed writers left beside ``path`` (call under the lock)."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            tmp.unlink()
        except OSError:  # already gone, or not ours to remove: leave it
            pass


#: what a run.json holds (written by :func:`init_run`, extended by :func:`add_check`)
LEDGER_FIELDS = (Field("slug", (str,), required=True), Field("created", (str,)),
                 Field("checks", (list,), required=True))


def _read_ledger(path: Path) -> dict:
    """The ledger at ``path``, or a ScoreError naming it (the file is not changed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = None
    except OSError as exc:
        raise ScoreError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__}); check its "
                         f"permissions") from None
    try:
        if text is None:
            raise ValueError("not UTF-8")
        run = json.loads(text)
    except (ValueError, RecursionError):
        raise ScoreError(f"{path}: not a ledger (not valid JSON); restore it from a copy, or start a new "
                         f"experiment with `segscore run init`") from None
    if not isinstance(run, dict):
        raise ScoreError(f"{path}: not a ledger (expected an object whose \"checks\" is a list); restore it "
                         f"from a copy, or start a new experiment with `segscore run init`")
    try:
        validate(run, LEDGER_FIELDS, f"{path}: not a ledger:")
    except ScoreError as exc:
        raise ScoreError(f"{exc}; restore the ledger from a copy, or start a new experiment with "
                         f"`segscore run init`") from None
    return run


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def init_run(slug: str, root=DEFAULT_ROOT) -> Path:
    """Start the experiment ``slug``; refuses one that exists."""
    path = run_path(slug, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        _remove_stale_temporaries(path)
        if path.exists():
            raise ScoreError(f"experiment {path} exists already; pick another slug or --root")
        atomic_write(path, dumps({"slug": slug, "created": _now(), "checks": []}) + "\n")
    return path


def require_run(slug: str, root=DEFAULT_ROOT) -> Path:
    """The ledger file of ``slug``; refuses an experiment that was never started."""
    path = run_path(slug, root)
    if not path.exists():
        raise ScoreError(f"no experiment at {path}; start it with `segscore run init {slug}"
                         f"{'' if str(root) == DEFAULT_ROOT else f' --root {root}'}`, or fix --slug and --root")
    return path


def add_check(slug: str, name: str, argv, result, root=DEFAULT_ROOT) -> Path:
    """Append one check to the experiment ``slug``; refuses one never started."""
    path = require_run(slug, root)
    with _locked(path):
        _remove_stale_temporaries(path)
        run = _read_ledger(path)
        run.setdefault("checks", []).append({"name": name, "time": _now(), "argv": list(argv), "result": result})
        atomic_write(path, dumps(run) + "\n")
    return path


def read_run(slug: str, root=DEFAULT_ROOT) -> dict:
    path = require_run(slug, root)
    return _read_ledger(path)
