"""What each command's ``headline(result) -> [Cell]`` builds on (the leaderboard cells
``segscore report`` shows of a result), and the default headline of a command whose module
defines none: the result's top-level numbers. Imports the standard library only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    """One number of a leaderboard row.

    ``name``: the column; ``value``: a number, a bool or None; ``role``: one of
    ``segscore.batch.report.ROLES``; ``of``: the headline column this floor, control, oracle, interval or derived number is read
    beside; ``ref``: its short name in a chart (``all_positive``, ``control``, ``oracle``);
    ``path``: its dotted path in the result (the key of its reason in the result's ``notes``);
    ``note``: why it is null when the result's notes do not say (an input not given)."""

    name: str
    value: object
    role: str = "headline"
    of: str | None = None
    ref: str | None = None
    path: str | None = None
    note: str | None = None


def value_at(result, path: str):
    """``(value, present)`` at the dotted ``path`` of ``result`` (list items by index; a key
    holding a dot, ``ap_0.5``, is matched whole, the longest first)."""
    obj, parts = result, path.split(".")
    while parts:
        if isinstance(obj, dict):
            for n in range(len(parts), 0, -1):
                key = ".".join(parts[:n])
                if key in obj:
                    obj, parts = obj[key], parts[n:]
                    break
            else:
                return None, False
        elif isinstance(obj, (list, tuple)) and parts[0].isdigit() and int(parts[0]) < len(obj):
            obj, parts = obj[int(parts[0])], parts[1:]
        else:
            return None, False
    return obj, True


def cell(result, name, path, role="headline", of=None, ref=None, missing=None) -> Cell:
    """The cell ``name`` holding the number at ``path`` (null with a reason when absent or not a number)."""
    value, present = value_at(result, path)
    if present and isinstance(value, (dict, list, tuple, str)):
        return Cell(name, None, role, of, ref, path, f"{path} is a {type(value).__name__}, not a number")
    return Cell(name, value, role, of, ref, path, None if present else (missing or f"{path} is not in the result"))


def with_floors(result, name, key, floors, *, missing_floors, prefix="metrics") -> list:
    """The headline ``prefix.key`` and, beside it, ``floors.FLOOR.key`` for each of ``floors``."""
    cells = [cell(result, name, f"{prefix}.{key}")]
    for fl in floors:
        cells.append(cell(result, f"{name} [{fl}]", f"floors.{fl}.{key}", "floor", name, fl,
                          missing=missing_floors if not isinstance(result.get("floors"), dict)
                          else f"the result has no {fl} floor"))
    return cells


def count(result: dict, key: str) -> Cell:
    """The number of items of the list ``key``."""
    items = result.get(key)
    if isinstance(items, list):
        return Cell(key, len(items), path=key)
    return Cell(key, None, path=key, note=f"{key} is not a list in the result")


def scalars_headline(result: dict, limit: int = 8) -> list:
    """The default headline: the result's top-level numbers and booleans, then those of its
    ``metrics``, at most ``limit`` (a command whose module defines no ``headline`` of its own)."""
    cells = []
    for prefix, part in (("", result), ("metrics.", result.get("metrics"))):
        if not isinstance(part, dict):
            continue
        for k, v in part.items():
            if len(cells) < limit and k != "notes" and (v is None or isinstance(v, (bool, int, float))):
                if not any(c.name == k for c in cells):
                    cells.append(cell(result, k, prefix + k))
    return cells
