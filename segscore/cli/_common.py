"""What every subcommand shares: output options, error handling, progress."""

from __future__ import annotations

import sys
import traceback

from segscore.errors import CheckViolation


def show(args, result, text: str | None = None, *, module=None) -> None:
    """Write ``--json FILE.json``'s file (the compute part wrote the others), print the result's
    ``warnings`` on stderr, then ``text`` (its first line the roles of the inputs, ``truth: FILE
    pred: FILE``, when ``module`` declares inputs with roles), or the JSON with ``--json``."""
    from segscore.io.results import dumps, write_json

    if getattr(args, "json_path", None):
        write_json(args.json_path, result)
    if isinstance(result, dict):
        warn(args, result.get("warnings") or ())
    if getattr(args, "json", False):
        sys.stdout.write(dumps(result) + "\n")
    elif text is not None:
        roles = None
        if module is not None and hasattr(module, "OPTIONS"):
            from segscore.commands._declare import from_namespace, roles_line

            roles = roles_line(module, from_namespace(module, args))
        sys.stdout.write((roles + "\n" if roles else "") + text.rstrip("\n") + "\n")
    sys.stdout.flush()


def progress_printer(args, label: str):
    """A ``(done, total)`` callback drawing progress on stderr, or None when stderr is not a
    terminal (progress never mixes with ``--json`` output: it goes to stderr only)."""
    if not sys.stderr.isatty():
        return None

    def show(done, total):
        sys.stderr.write(f"\r{label}: {done}/{total} tiles")
        if done == total:
            sys.stderr.write("\r" + " " * (len(label) + 24) + "\r")
        sys.stderr.flush()

    return show


def _say(args, message: str) -> None:
    """One line on stderr: a newline inside ``message`` (a file name holding one) is shown as ``\\n``."""
    message = message.rstrip("\n").replace("\r", "\\r").replace("\n", "\\n")
    sys.stderr.write(f"segscore {getattr(args, 'command', '')}: {message}\n".replace("segscore : ", "segscore: "))


def fail(args, message: str, code: int = 2) -> int:
    _say(args, message)
    return code


def warn(args, messages) -> None:
    """Each message as one ``segscore CMD: warning: ...`` line on stderr (the score stands)."""
    for m in messages:
        _say(args, f"warning: {m}")


def run_plain(module, args) -> int:
    """``segscore NAME`` of a command whose compute module ``module`` says all: its result, with
    progress on a terminal, printed as ``module.text(result)`` (or the JSON with ``--json``). A
    check (a module with ``problems(result, args)``) then prints each problem it found on stderr and
    exits 3."""
    from segscore.commands._declare import from_namespace

    values = from_namespace(module, args)
    result = module.compute(progress=progress_printer(args, module.__name__.rsplit(".", 1)[-1].replace("_", "-")),
                            figure=False, **values)
    show(args, result, module.text(result), module=module)
    found = module.problems(result, values) if hasattr(module, "problems") else []
    for problem in found:
        fail(args, problem, 3)
    return 3 if found else 0


def run_command(func, args) -> int:
    """Run a subcommand, turning refusals into exit 2 and violations into exit 3."""
    from segscore.commands._errors import refusal

    try:
        code = func(args)
        return 0 if code is None else int(code)
    except CheckViolation as exc:
        return fail(args, str(exc), 3)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say (an OSError: first)
        return 0
    except Exception as exc:  # noqa: BLE001 - a refusal is one line; anything else is a bug: show it
        message = refusal(exc)
        if message is None:
            traceback.print_exc()
            return 1
        return fail(args, message)
