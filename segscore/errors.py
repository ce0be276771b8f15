"""The exceptions segscore raises for bad input.

Every refusal is a :class:`ScoreError` (a ``ValueError``), whose message is one line naming
the file or argument and the fix. The command line prints it on stderr and exits 2.
"""

from __future__ import annotations


class ScoreError(ValueError):
    """Bad input: a file, an option or a value segscore refuses, with the reason and the fix."""


#: kit's name for the same exception, kept so code written against kit's API still catches it.
VerifyError = ScoreError


def whole_number(value, name: str, lo: int) -> int:
    """``value`` as an int when it is a whole number (an int or a NumPy integer, not a bool) of at
    least ``lo``; else a :class:`ScoreError` naming the argument ``name``."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ScoreError(f"{name} {value!r}: must be a whole number >= {lo}")
    return int(value)


class InputFileError(ScoreError, FileNotFoundError):
    """A named input file or store does not exist or cannot be opened.

    It is both a :class:`ScoreError` (bad input, exit 2) and a ``FileNotFoundError`` (what kit
    raised for a missing ``.npy``), so either ``except`` clause catches it.
    """


class MissingOptionError(ScoreError, TypeError):
    """A ``segscore.api`` call without a required option (``api.perturb(mask)`` without
    ``operator=``): the message names the option (and its command-line spelling).

    Both a :class:`ScoreError` (a refusal: the command line's one line, exit 2) and a
    ``TypeError`` (what Python raises for a missing keyword-only argument), so either ``except``
    clause catches it. The option is ``.option``."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


class CheckViolation(Exception):
    """A check ran and found violations (exit code 3 on the command line).

    Not a ``ScoreError``: the input was fine; what it describes is not.
    """

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result


def moved(impl, old: str, new: str):
    """The public, older name ``old`` of the function ``impl`` (its body, kept under a private
    name that segscore's own code calls): calling it warns ``FutureWarning`` naming ``new``, the
    :mod:`segscore.api` call to use instead (docs/migration.md), then runs ``impl``."""
    import functools
    import warnings

    @functools.wraps(impl)
    def public(*args, **kwargs):
        warnings.warn(f"{old} is an older entry point; use {new} (docs/migration.md)", FutureWarning, stacklevel=2)
        return impl(*args, **kwargs)

    public.__name__ = public.__qualname__ = old.rsplit(".", 1)[-1]
    public.__doc__ = f"Older entry point: use ``{new}`` (it warns ``FutureWarning``).\n\n" + (impl.__doc__ or "")
    return public
