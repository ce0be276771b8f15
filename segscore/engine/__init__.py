"""The engine: tile plans, executors and the one reduction driver every streamed pass uses.

It knows no family: what to compile before work fans out is registered by each family in
:mod:`segscore.families` (``segscore.warm()``).

Its names are imported on first use: ``import segscore.engine`` costs nothing until one is used.
"""

from __future__ import annotations

import importlib

__all__ = ["reduce", "Tile", "check_options", "plan_bands", "side_by_side"]

#: each public name and the module it lives in
_WHERE = {"reduce": "driver", "Tile": "driver", "check_options": "driver", "plan_bands": "plan",
          "side_by_side": "executor"}


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"segscore.engine.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'segscore.engine' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
