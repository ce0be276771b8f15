"""A small schema mechanism for the JSON files segscore reads (meta.json, cards, manifests).

A family declares its fields as :class:`Field` rows (dotted path, allowed types, range,
required) and :func:`validate` refuses the first field that does not fit, in one line naming
the file, the field's dotted path, what it holds and what it should hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from segscore.errors import ScoreError

_NAMES = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", dict: "an object",
          list: "a list"}


@dataclass(frozen=True)
class Field:
    """One field: ``path`` (dotted; ``a.b`` inside object ``a``), ``types`` (int accepts whole
    JSON numbers, float any finite number), inclusive ``lo``/``hi`` bounds for numbers, and
    whether it is ``required``. ``length``: a list's exact length; ``items``: its items' type."""

    path: str
    types: tuple
    lo: float | None = None
    hi: float | None = None
    required: bool = False
    length: int | None = None
    items: type | None = None


def _fits(value, types) -> bool:
    for t in types:
        if t is bool and isinstance(value, bool):
            return True
        if isinstance(value, bool):
            continue
        if t is int and (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            return True
        if t is float and isinstance(value, (int, float)) and math.isfinite(value):
            return True
        if t in (str, dict, list) and isinstance(value, t):
            return True
    return False


def _want(f: Field) -> str:
    what = " or ".join(_NAMES[t] for t in f.types)
    if f.length is not None or f.items is not None:  # a list: its length, then its items
        if f.length is not None:
            what += f" of {f.length} items"
        if f.items is not None:
            what += f" ({_NAMES[f.items]}s" + (f" of at least {f.lo:g})" if f.lo is not None else ")")
        return what
    if f.lo is not None and f.hi is not None:
        what += f" from {f.lo:g} to {f.hi:g}"
    elif f.lo is not None:
        what += f" of at least {f.lo:g}"
    return what


def validate(doc: dict, fields, where) -> dict:
    """Check ``doc`` against ``fields``; return it unchanged, or raise ScoreError naming
    ``where`` (the file) and the field's dotted path."""
    for f in fields:
        node, missing = doc, False
        for part in f.path.split("."):
            if not isinstance(node, dict) or part not in node:
                missing = True
                break
            node = node[part]
        if missing or node is None:
            if f.required:
                raise ScoreError(f"{where}: {f.path} is missing; it should be {_want(f)}")
            continue
        ok = _fits(node, f.types)
        if ok and isinstance(node, (int, float)) and not isinstance(node, bool):
            ok = (f.lo is None or node >= f.lo) and (f.hi is None or node <= f.hi)
        if ok and isinstance(node, list):
            ok = (f.length is None or len(node) == f.length) and (
                f.items is None or all(_fits(v, (f.items,)) and (f.lo is None or v >= f.lo) for v in node))
        if not ok:
            shown = repr(node) if len(repr(node)) <= 40 else repr(node)[:37] + "..."
            raise ScoreError(f"{where}: {f.path} is {shown}; it should be {_want(f)}")
    return doc
