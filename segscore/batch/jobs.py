"""A job: one scoring call, its command line parsed by its command's own option declarations."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
from dataclasses import dataclass, field

from segscore.errors import ScoreError

#: an id is a folder name under DIR/outputs/: no separators, not "." or ".."
_ID = re.compile(r"^[^/\\\x00-\x1f]{1,200}$")


class JobError(ScoreError):
    """A job that cannot be parsed: the message says what and the fix (the manifest adds
    ``MANIFEST:LINE:`` in front)."""


class _JobParser(argparse.ArgumentParser):
    """argparse that raises :class:`JobError` instead of printing and exiting."""

    def exit(self, status=0, message=None):
        raise JobError((message or "").strip() or f"{self.prog}: cannot be parsed")

    def error(self, message):
        raise JobError(f"{self.prog}: {message}; see `segscore {self.prog} --help`")


def output_names(name: str, options) -> dict[str, str]:
    """``{option spelling: option name}`` of the output ``options`` (``"-o"``, ``"--json-out"``) of
    the batch command ``name``, read from its declarations."""
    from segscore.commands._declare import option_for_flag
    from segscore.families import command

    declared = command(name).module.OPTIONS
    found = {}
    for flag in options:
        o = option_for_flag(declared, flag)
        if o is not None:
            found[flag] = o.name
    return found


@dataclass
class Job:
    """One job. ``job`` is its text as written (the resume key, with ``id`` and the input
    fingerprints); ``values`` its options' values by name (what :func:`segscore.api.run_command`
    takes) with the inputs resolved; ``inputs`` the files and folders it reads; ``call``
    ``(family, args, kwargs)`` for a job given as arrays."""

    id: str
    job: str
    family: str
    command: str | None = None
    tags: dict = field(default_factory=dict)
    values: dict | None = None
    argv: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    call: tuple | None = None
    where: str = ""  # MANIFEST:LINE, for messages

    @property
    def outputs(self) -> dict[str, str]:
        """``{option: name}`` of the output options this job sets."""
        from segscore.families import command

        if self.command is None:
            return {}
        names = output_names(self.command, command(self.command).outputs)
        return {o: n for o, n in names.items() if (self.values or {}).get(n) not in (None, False)}


def is_remote(path: str) -> bool:
    """A URL (``https://``, ``s3://``): read through its store, never joined to a folder."""
    return "://" in path


def resolve(value, base):
    """``value`` (a path, a list of paths or None) with relative paths joined to ``base``."""
    if value is None or base is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v, base) for v in value)
    text = os.fspath(value)
    if is_remote(text) or os.path.isabs(text):
        return text
    return os.path.normpath(os.path.join(os.fspath(base), os.path.expanduser(text)))


def _paths(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [os.fspath(v) for v in value]
    return [os.fspath(value)]


def default_id(text: str) -> str:
    command = text.split(None, 1)[0] if text.strip() else "job"
    return f"{command}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def check_id(job_id) -> str:
    if not isinstance(job_id, str):
        job_id = str(job_id)
    if job_id != job_id.strip() or not _ID.match(job_id) or job_id in (".", ".."):
        raise JobError(f"id {job_id!r} cannot name a folder; use letters, digits and . _ - (no '/', not empty)")
    return job_id


def check_tags(tags) -> dict:
    """Tags as a dict of JSON values: text, numbers (finite), true/false, null, or lists and
    objects of them; anything else is a :class:`JobError` (a row must stay valid JSON)."""
    import math

    def ok(v):
        if isinstance(v, float):
            return math.isfinite(v)
        if isinstance(v, (str, int, bool, type(None))):
            return True
        if isinstance(v, (list, tuple)):
            return all(ok(x) for x in v)
        if isinstance(v, dict):
            return all(isinstance(k, str) and ok(x) for k, x in v.items())
        return False

    tags = dict(tags or {})
    for k, v in tags.items():
        if not ok(v):
            raise JobError(f"tag {k!r} is {v!r}; give text, a finite number, true/false or null")
    return tags


def parse_job(text: str, *, id=None, tags=None, base=None) -> Job:  # noqa: A002 - the manifest's own word
    """Parse the job ``text`` (a command line without ``segscore``) by its command's option
    declarations (:func:`segscore.commands._declare.parse_words`); relative input paths resolve
    against ``base`` (the manifest's folder; None: as given). Raises :class:`JobError` saying
    what is wrong and the fix."""
    from segscore.families import COMMANDS, command

    if not isinstance(text, str) or not text.strip():
        raise JobError("no job; write the command line without `segscore`, e.g. `curve P.png --gt G.png`")
    if "\0" in text:
        raise JobError("the job holds a NUL character (\\0), which no file name or option can; remove it")
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise JobError(f"the job cannot be split into words ({exc}); close its quotes") from None
    try:
        spec = command(argv[0])
    except KeyError:
        raise JobError(f"{argv[0]!r} is not a batch command; start the job with one of: "
                       f"{', '.join(COMMANDS)}") from None
    from segscore.commands._declare import parse_words

    values = parse_words(spec.module, argv[1:], _JobParser(prog=spec.name, add_help=False))
    for name in spec.inputs:
        values[name] = resolve(values.get(name), base)
    for name in output_names(spec.name, spec.outputs).values():  # outside a batch folder: beside the manifest
        name = "root" if name == "slug" else name
        if isinstance(values.get(name), str):
            values[name] = resolve(values[name], base)
    inputs = [p for name in spec.inputs for p in _paths(values.get(name))]
    job_id = check_id(default_id(text) if id in (None, "") else id)
    return Job(id=job_id, job=text, family=spec.family, command=spec.name, tags=check_tags(tags), values=values,
               argv=argv, inputs=inputs)


def describe(value) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"<{type(value).__name__} {tuple(shape)} {getattr(value, 'dtype', '')}>"
    return repr(value) if isinstance(value, (str, int, float, bool, type(None))) else f"<{type(value).__name__}>"


def array_job(item: dict, index: int) -> Job:
    """A job given in Python as ``{"family": NAME, "args": [...], "kwargs": {...}, "id", "tags"}``:
    the family's :mod:`segscore.api` function (``segscore.families``: ``truth, pred`` first, then
    keyword options) called with arrays (a dask array too)."""
    from segscore.families import FAMILIES

    name = item.get("family")
    if name not in FAMILIES:
        raise JobError(f"family {name!r} is not registered; families: {', '.join(FAMILIES)}")
    args = list(item.get("args") or [])
    kwargs = dict(item.get("kwargs") or {})
    text = f"{name}(" + ", ".join([describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()]) + ")"
    job_id = check_id(item.get("id") or f"{name}-{index}")
    return Job(id=job_id, job=text, family=name, tags=check_tags(item.get("tags")), call=(name, args, kwargs))


def in_job_folder(job: Job, folder) -> dict:
    """``job``'s values with every output option pointed into ``folder`` (its name kept), and
    a ``--slug`` ledger rooted there."""
    values = dict(job.values)
    for option, name in job.outputs.items():
        if name == "slug":
            values["root"] = os.fspath(folder)
            continue
        value = os.fspath(values[name])
        base = os.path.basename(value.rstrip("/")) or name
        values[name] = os.path.join(os.fspath(folder), base)
    return values
