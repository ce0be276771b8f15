"""One declaration per option: the command line, the Python API and batch jobs read the same one.

Each command module ``segscore.commands.X`` declares ``OPTIONS``, a tuple of :class:`Option`
(name, type, default, help, command-line spelling, nargs, choices), and a compute part
``compute(*, progress=None, recorded=None, **values)`` taking the options' plain values by name. From
the declarations:

- :func:`add_to_parser` adds the command's arguments to an argparse parser (``segscore X`` and
  a batch job's command line, :func:`parse_words`);
- :func:`signature` is the signature of ``segscore.api.X`` (the inputs, then every option
  keyword-only with its default) and :func:`bind` checks the values a Python caller gives,
  with the command line's one-line refusals (:class:`segscore.errors.ScoreError`), without
  building or parsing a parser.

A command gains an option by adding one :class:`Option` to its ``OPTIONS``; nothing else lists
options. Imports the standard library only.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from typing import Any, Callable

#: the order of inputs in the roles line (the first line of a command's text output)
_ROLE_ORDER = ("truth", "pred")


@dataclass(frozen=True)
class Option:
    """One argument of a command.

    ``name``: its keyword in ``segscore.api`` and in the compute part (and its argparse dest).
    ``flags``: its command-line spellings (``("--tile-rows",)``); empty for a positional argument
    (then ``metavar`` is its name in the usage line). ``type``: checks one value, a command-line
    word or a Python value, and returns it converted (raising ``argparse.ArgumentTypeError`` or
    ``ValueError`` with the reason); None: taken as given (a path, or text). ``kind``: ``value``,
    ``flag`` (``--no-floors``: True or False), ``bool`` (``--all-metrics/--no-all-metrics``) or
    ``append`` (repeatable). ``role``: the input's role, shown in the usage line and the first
    line of the text output (``truth``, ``pred``, ``mask`` ...). ``arrays``: the API takes an
    array here too (NumPy, zarr, dask). ``where``: ``cli`` (printing only: ``--json``,
    ``--quiet``), ``api`` (Python only: ``executor``) or ``both``. ``hidden``: hidden
    command-line aliases (``--workers`` for ``--threads``). ``group``: a mutually exclusive
    group's name. ``action``/``extra``: a custom argparse action and its keywords (CLI only)."""

    name: str
    flags: tuple = ()
    type: Callable | None = None
    default: Any = None
    help: str = ""
    nargs: Any = None
    choices: tuple | None = None
    metavar: Any = None
    required: bool = False
    kind: str = "value"
    role: str | None = None
    arrays: bool = False
    where: str = "both"
    hidden: tuple = ()
    group: str | None = None
    action: Any = None
    extra: dict = field(default_factory=dict)

    @property
    def shown(self) -> str:
        """How messages name it: its first flag, else its positional name."""
        return self.flags[0] if self.flags else (self.metavar if isinstance(self.metavar, str) else self.name)

    @property
    def positional(self) -> bool:
        return not self.flags and self.where != "api"

    @property
    def needed(self) -> bool:
        """Required: a required option, or a positional that takes one or more values."""
        if self.required:
            return True
        return self.positional and (self.nargs in (None, "+") or isinstance(self.nargs, int))


def api_options(options) -> list:
    return [o for o in options if o.where != "cli"]


def cli_options(options) -> list:
    return [o for o in options if o.where != "api"]


def by_name(options) -> dict:
    return {o.name: o for o in options}


def option_for_flag(options, flag: str):
    """The option spelt ``flag`` on the command line (or one of its hidden aliases); None."""
    for o in options:
        if flag in o.flags or flag in o.hidden:
            return o
    return None


# ------------------------------------------------------------------ the command line

def add_to_parser(parser, options) -> None:
    """Add ``options`` (those the command line takes) to an argparse ``parser``."""
    import argparse

    groups = {}
    for o in cli_options(options):
        kw: dict = {"help": o.help}
        if o.kind == "flag":
            kw["action"] = "store_true"
        elif o.kind == "bool":
            kw.update(action=argparse.BooleanOptionalAction, default=o.default)
        else:
            if o.kind == "append":
                kw["action"] = "append"
            elif o.action is not None:
                kw["action"] = o.action
            if o.type is not None:
                kw["type"] = o.type
            for key in ("nargs", "choices", "metavar"):
                if getattr(o, key) is not None:
                    kw[key] = getattr(o, key)
            if o.default is not None:
                kw["default"] = o.default
        kw.update(o.extra)
        if o.flags:
            if o.required:
                kw["required"] = True
            target = parser
            if o.group is not None:
                target = groups.get(o.group) or groups.setdefault(o.group, parser.add_mutually_exclusive_group())
            target.add_argument(*o.flags, dest=o.name, **kw)
        else:
            parser.add_argument(o.name, **kw)
        for alias in o.hidden:
            parser.add_argument(alias, dest=o.name, type=o.type, help=argparse.SUPPRESS)


def from_namespace(module, namespace) -> dict:
    """The values of a parsed command line: every option the compute part takes, by name (the
    words ``--json`` took that are inputs put in their place first); a module's ``from_words(values)``
    then maps what the command line spells differently (``fibers [PRED] TRUTH``; it gets the values
    and the namespace)."""
    from segscore.commands._options import settle_json

    settle_json(namespace)
    values = {o.name: getattr(namespace, o.name, o.default) for o in module.OPTIONS if o.where != "cli"}
    hook = getattr(module, "from_words", None)
    return hook(values, namespace) if hook is not None else values


def parse_words(module, words, parser) -> dict:
    """A command line's ``words`` (without the command's name) parsed by ``parser`` (a fresh
    argparse parser of the caller's class, raising its own errors) built from ``module.OPTIONS``."""
    add_to_parser(parser, module.OPTIONS)
    return from_namespace(module, parser.parse_args(list(words)))


def roles_line(module, values) -> str | None:
    """``truth: FILE  pred: FILE`` (the inputs given, each with its role), or None for a command
    without inputs: the first line of a command's text output, so a swap is visible."""
    given = [(o.role, values.get(o.name)) for o in module.OPTIONS
             if o.role and values.get(o.name) is not None and not (isinstance(values.get(o.name), (list, tuple))
                                                                 and not values.get(o.name))]
    if not given:
        return None
    given.sort(key=lambda rv: _ROLE_ORDER.index(rv[0]) if rv[0] in _ROLE_ORDER else len(_ROLE_ORDER))

    def shown(v):
        if isinstance(v, (list, tuple)):
            return " ".join(shown(x) for x in v)
        return os.fspath(v) if isinstance(v, (str, os.PathLike)) else f"<{type(v).__name__}>"

    return "  ".join(f"{role}: {shown(v)}" for role, v in given)


# ------------------------------------------------------------------ the Python API

def signature(options, inputs) -> inspect.Signature:
    """The signature of a command's API function: ``inputs`` (names, in order, by position or
    keyword), then every other option keyword-only with its declared default; a required one
    (``perturb``'s ``operator``) has none, so ``inspect.signature`` shows it required."""
    P = inspect.Parameter
    known = by_name(api_options(options))
    params = [P(n, P.POSITIONAL_OR_KEYWORD, default=None if not known[n].needed else P.empty) for n in inputs]
    seen_default = False
    fixed = []
    for p in params:  # a parameter without a default cannot follow one with a default
        if p.default is P.empty and seen_default:
            p = p.replace(default=None)
        seen_default = seen_default or p.default is not P.empty
        fixed.append(p)
    rest = [P(o.name, P.KEYWORD_ONLY, default=P.empty if o.needed else _api_default(o))
            for o in api_options(options) if o.name not in inputs]
    return inspect.Signature(fixed + rest)


def _api_default(o):
    if o.kind == "flag":
        return False
    if isinstance(o.default, list):
        return tuple(o.default)
    return o.default


def doc(options, inputs) -> str:
    """The parameters section of an API function's docstring, from the declarations."""
    lines = ["Parameters", "----------"]
    for o in api_options(options):
        head = o.name
        if o.name not in inputs:
            head += " : required" if o.needed else f" : default {_api_default(o)!r}"
        spelt = f" (``{' '.join(o.flags)}``)" if o.flags else ""
        lines.append(head)
        text = (o.help or "").replace("%%", "%")
        lines.append(f"    {text}{spelt}" if text or spelt else "    ")
    return "\n".join(lines)


def bind(command: str, options, values: dict) -> dict:
    """``values`` (a Python caller's, by name) checked and converted option by option as the
    command line would parse them, defaults filled in: every option of the compute part. A bad
    value is the command line's one-line :class:`~segscore.errors.ScoreError`; a value of the
    wrong kind (text for a flag) a ``TypeError``; a required option missing (or None) a
    :class:`~segscore.errors.MissingOptionError` naming it."""
    out = {}
    for o in options:
        if o.where == "cli":
            continue
        value = values.get(o.name)
        if value is None:
            if o.needed:
                raise missing(command, o)
            out[o.name] = False if o.kind == "flag" else list(o.default) if isinstance(o.default, list) else o.default
            continue
        out[o.name] = convert(command, o, value)
    return out


def _is_bool(v) -> bool:
    return type(v).__name__ in ("bool", "bool_")


def convert(command: str, o: Option, value):
    """One Python ``value`` of option ``o``, checked by its declaration."""
    from segscore.errors import ScoreError

    where = f"segscore {command}: argument {o.shown}"
    if o.kind in ("flag", "bool"):
        if not _is_bool(value):
            raise TypeError(f"{o.name}= is a flag ({o.shown}): give True or False, not {value!r}")
        return bool(value)
    if o.where == "api":
        return value
    many = o.nargs not in (None, "?") or o.kind == "append"
    if not many:
        if isinstance(value, (list, tuple)) and not o.arrays and not getattr(o.type, "takes_lists", False):
            raise ScoreError(f"{where}: takes one value, not a list ({','.join(map(str, value))})")
        return _one(where, o, value)
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if isinstance(o.nargs, int) and len(items) != o.nargs:
        raise ScoreError(f"{where}: expected {o.nargs} argument{'' if o.nargs == 1 else 's'}, got {len(items)}")
    if o.nargs == "+" and not items:
        raise ScoreError(f"{where}: expected at least one argument")
    return [_one(where, o, v) for v in items]


def _one(where: str, o: Option, v):
    import argparse

    from segscore.errors import ScoreError

    path = isinstance(v, (str, os.PathLike))
    if not path and o.arrays and hasattr(v, "shape"):
        return v
    if o.type is None:
        if not path:
            raise TypeError(f"{o.name}= takes {'a path or an array' if o.arrays else 'a path or text'}, not "
                            f"{type(v).__name__}")
        got = os.fspath(v)
    else:
        if _is_bool(v):
            raise ScoreError(f"{where}: {v!r} is not a {getattr(o.type, '__name__', 'value')}")
        try:
            got = o.type(os.fspath(v) if path else v)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise ScoreError(f"{where}: {exc}") from None
    if o.choices is not None and got not in o.choices:
        raise ScoreError(f"{where}: invalid choice: {got!r} (choose from {', '.join(map(repr, o.choices))})")
    return got


def missing(command: str, *options: Option):
    """The :class:`~segscore.errors.MissingOptionError` of the required ``options`` left out,
    naming each as the API spells it and as the command line does."""
    from segscore.errors import MissingOptionError

    named = ", ".join(f"{o.name}=" + (f" ({o.shown})" if o.shown != o.name else "") for o in options)
    many = len(options) > 1
    return MissingOptionError(f"segscore.api.{command.replace('-', '_')}(): the required option{'s' if many else ''} "
                              f"{named} {'are' if many else 'is'} missing; give "
                              f"{', '.join(o.name + '=...' for o in options)}", options[0].name)


def bind_call(command: str, options, sig: inspect.Signature, args, kwargs) -> dict:
    """The arguments of a call of ``segscore.api.COMMAND`` (``sig``), by name: an unknown keyword
    is a ``TypeError`` naming the nearest valid one (:func:`unknown_keywords`), a required option
    left out a :class:`~segscore.errors.MissingOptionError` naming it."""
    try:
        bound = sig.bind_partial(*args, **kwargs)
    except TypeError as exc:
        unknown_keywords(command, options, [k for k in kwargs if k not in sig.parameters])
        raise TypeError(f"segscore.api.{command.replace('-', '_')}(): {exc}") from None
    known = by_name(options)
    left = [known[name] for name, p in sig.parameters.items()
            if p.default is inspect.Parameter.empty and name not in bound.arguments]
    if left:
        raise missing(command, *left)
    return dict(bound.arguments)


def unknown_keywords(command: str, options, given) -> None:
    """A ``TypeError`` naming each keyword ``segscore.api.COMMAND`` does not take, the nearest
    valid one and every valid one."""
    import difflib

    valid = [o.name for o in api_options(options)]
    bad = [k for k in given if k not in valid]
    if not bad:
        return
    hints = []
    for k in bad:
        near = difflib.get_close_matches(k, valid, n=1)
        hints.append(f"{k}" + (f" (did you mean {near[0]}?)" if near else ""))
    cli = {o.name for o in options if o.where == "cli"}
    why = " (the API returns the result; printing is the command line's)" if set(bad) & cli else ""
    raise TypeError(f"segscore.api.{command.replace('-', '_')}() got unexpected option(s) {', '.join(hints)}{why}; "
                    f"valid options: {', '.join(sorted(valid))}")
