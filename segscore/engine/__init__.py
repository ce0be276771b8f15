"""The engine: tile plans, executors and the one reduction driver every streamed pass uses.

It knows no family: what to compile before work fans out is registered by each family in
:mod:`segscore.families` (``segscore.warm()``).
"""

from __future__ import annotations

from segscore.engine.driver import Tile, check_options, plan_bands, reduce, resolve_aliases
from segscore.engine.executor import side_by_side

__all__ = ["reduce", "Tile", "check_options", "plan_bands", "resolve_aliases", "side_by_side"]
