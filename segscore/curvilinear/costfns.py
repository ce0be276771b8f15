"""User cost functions of the audit: ``--cost-fn MODULE:FUNCTION`` or ``PATH.py:FUNCTION``, loaded
once, read on the reference and each damaged copy (:class:`UserCost`, :func:`load_cost_fn`)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import numbers
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from segscore.errors import ScoreError

SIDED = ("one", "two")


# ------------------------------------------------------------------------------------------
# user quantities
# ------------------------------------------------------------------------------------------

#: functions loaded from a spec, per process: (module, path, function) -> callable
_LOADED: dict = {}
_FIX_FN = "fix: give MODULE:FUNCTION with an importable module, a module in the current folder or a path to a .py file"


@dataclass(frozen=True)
class UserCost:
    """A quantity of the user's, a function of the binary mask. Pickles as its spec (a worker
    process loads the function itself) or, given as a callable, as that callable."""

    name: str  # "user:<function>"
    spec: str  # as given ("mymeasures:vessel_area"), or the callable's qualified name
    function: str
    module: str | None = None  # import name, when it was imported
    path: str | None = None  # absolute .py path it came from (a worker's fallback)
    sided: str = "two"
    fn: Callable | None = field(default=None, compare=False)  # a callable given directly

    @property
    def label(self) -> str:
        reading = {"one": "one-sided fraction q_pred/q_ref",
                   "two": "two-sided fraction min(c, 1/c), c = q_pred/q_ref"}[self.sided]
        return f"user-supplied {self.spec} ({reading})"

    def load(self) -> Callable:
        if self.fn is not None:
            return self.fn
        key = (self.module, self.path, self.function)
        fn = _LOADED.get(key)
        if fn is None:
            module = None
            try:  # again on a worker: the same one-line refusals as when the option was read
                if self.module is not None:
                    try:
                        module = _import(self.module)
                    except ImportError:
                        if self.path is None:
                            raise
                if module is None:
                    module = _exec_file(Path(self.path), self.spec)
                fn = _LOADED[key] = getattr(module, self.function)
            except ScoreError:
                raise
            except SystemExit as exc:  # the user's module called sys.exit: one line, not our exit
                raise ScoreError(f"--cost-fn {self.spec}: loading it where the cases run called "
                                 f"{_exit_text(exc)}; {_FIX_FN}") from None
            except Exception as exc:  # noqa: BLE001 - the user's module, loaded where the case runs
                raise ScoreError(f"--cost-fn {self.spec}: loading it where the cases run raised "
                                 f"{type(exc).__name__}; {_FIX_FN}") from None
        return fn

    def value(self, mask, where: str) -> float:
        """``fn(mask)`` as a float; a refusal naming ``where`` (the mask) if it raises or
        returns anything but a finite number."""
        fn = self.load()
        try:
            v = fn(np.array(mask, dtype=bool, copy=True))
        except SystemExit as exc:  # the user's function called sys.exit: a refusal, not our exit
            raise ScoreError(f"{where}: the cost function {self.spec} called {_exit_text(exc)}; fix: make it "
                             "return a finite number for every mask (the reference and each damaged copy)") from None
        except Exception as exc:  # noqa: BLE001 - the user's code: any failure is reported in one line
            msg = (str(exc).strip().splitlines() or [""])[0]
            raise ScoreError(f"{where}: the cost function {self.spec} raised {type(exc).__name__}"
                             + (f": {msg}" if msg else "") + "; fix: make it return a finite number for every "
                             "mask (the reference and each damaged copy)") from None
        if isinstance(v, (bool, np.bool_)) or not (isinstance(v, (numbers.Real, np.floating, np.integer))
                                                    or (isinstance(v, np.ndarray) and v.ndim == 0
                                                        and v.dtype.kind in "iuf")):
            raise ScoreError(f"{where}: the cost function {self.spec} returned a {type(v).__name__}, not a number; "
                             "fix: return one finite number per mask")
        v = float(v)
        if not math.isfinite(v):
            raise ScoreError(f"{where}: the cost function {self.spec} returned {v!r}; fix: return a finite number "
                             "for every mask (the reference and each damaged copy)")
        return v

    def read(self, q_ref: float, q: float):
        """The audited value, or None where the reference's value is 0."""
        if q_ref == 0:
            return None
        c = q / q_ref
        if self.sided == "one":
            return float(c)
        return float(min(c, 1.0 / c)) if c > 0 else 0.0


def _exit_text(exc: SystemExit) -> str:
    """``sys.exit(3)`` for a user's ``SystemExit``, its first line only."""
    code = exc.code
    shown = repr(code) if not isinstance(code, str) else repr((code.strip().splitlines() or [""])[0][:60])
    return f"sys.exit({'' if code is None else shown})"


def _import(name):
    cwd = os.getcwd()
    added = not any(p in ("", ".", cwd) for p in sys.path)
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    finally:
        if added:
            try:
                sys.path.remove(cwd)
            except ValueError:
                pass


def _exec_file(path: Path, spec: str):
    mname = "segscore_user_cost_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    mspec = importlib.util.spec_from_file_location(mname, path)
    if mspec is None or mspec.loader is None:
        raise ScoreError(f"--cost-fn {spec}: {path} cannot be loaded as a Python module; {_FIX_FN}")
    module = importlib.util.module_from_spec(mspec)
    sys.modules[mname] = module  # as an import would: dataclasses and pickling look the module up
    try:
        mspec.loader.exec_module(module)
    except SystemExit as exc:  # the module calls sys.exit when run: a refusal naming it, not our exit
        sys.modules.pop(mname, None)
        raise ScoreError(f"--cost-fn {spec}: running {path} called {_exit_text(exc)}; fix the module (guard its "
                         f"script part with `if __name__ == \"__main__\":`)") from None
    except Exception as exc:  # noqa: BLE001
        sys.modules.pop(mname, None)
        raise ScoreError(f"--cost-fn {spec}: running {path} raised {type(exc).__name__}: "
                         f"{(str(exc).strip().splitlines() or [''])[0]}; fix the module") from None
    return module


def load_cost_fn(spec, sided: str = "two") -> UserCost:
    """A :class:`UserCost` from ``"module:function"`` (or ``"path/to/file.py:function"``, or a
    callable), loaded now so a bad one is refused before any scoring (:class:`ScoreError`)."""
    if sided not in SIDED:
        raise ScoreError(f"cost_sided {sided!r}: use 'one' or 'two'")
    if callable(spec) and not isinstance(spec, str):
        fname = getattr(spec, "__name__", None) or type(spec).__name__
        return UserCost(f"user:{fname}", getattr(spec, "__qualname__", fname), fname, sided=sided, fn=spec)
    if not isinstance(spec, str):
        raise ScoreError(f"--cost-fn {spec!r}: expected MODULE:FUNCTION or a callable")
    mod_name, sep, fn_name = spec.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise ScoreError(f"--cost-fn {spec}: expected MODULE:FUNCTION; {_FIX_FN}")
    module_import = path = None
    if mod_name.endswith(".py"):
        p = Path(mod_name)
        if not p.is_file():
            raise ScoreError(f"--cost-fn {spec}: {mod_name}: " + ("is a folder" if p.is_dir() else "no such file")
                             + f"; {_FIX_FN}")
        path = str(p.resolve())
        module = _exec_file(Path(path), spec)
    else:
        try:
            module = _import(mod_name)
        except ImportError as exc:
            raise ScoreError(f"--cost-fn {spec}: cannot import {mod_name} ({exc}); {_FIX_FN}") from None
        except SystemExit as exc:  # the module calls sys.exit on import
            raise ScoreError(f"--cost-fn {spec}: importing {mod_name} called {_exit_text(exc)}; fix the module "
                             f"(guard its script part with `if __name__ == \"__main__\":`)") from None
        except Exception as exc:  # noqa: BLE001 - the module's own code failed
            raise ScoreError(f"--cost-fn {spec}: importing {mod_name} raised {type(exc).__name__}: "
                             f"{(str(exc).strip().splitlines() or [''])[0]}; fix the module") from None
        module_import = mod_name
        f = getattr(module, "__file__", None)
        path = str(Path(f).resolve()) if f else None
    fn = getattr(module, fn_name, None)
    if fn is None or not callable(fn):
        raise ScoreError(f"--cost-fn {spec}: {mod_name} has no " + ("callable " if fn is not None else "function ")
                         + f"{fn_name}; fix: name a function of the mask defined in it")
    uc = UserCost(f"user:{fn_name}", spec, fn_name, module=module_import, path=path, sided=sided)
    _LOADED[(uc.module, uc.path, uc.function)] = fn
    return uc


