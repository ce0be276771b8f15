"""What a refusal says: one line naming the file and the fix, for the CLI and the batch alike."""

from __future__ import annotations

from segscore.errors import ScoreError


def refusal(exc: BaseException) -> str | None:
    """The one-line message of ``exc`` when it is a refusal (bad input: exit 2, a ``refused``
    batch row), or None when it is a crash (a bug: exit 1, a ``crashed`` row)."""
    if isinstance(exc, ScoreError):  # one line: a newline inside it (a file name's) is shown escaped
        return str(exc).strip().replace("\r", "\\r").replace("\n", "\\n") or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        name = str(exc.filename or exc).replace("\r", "\\r").replace("\n", "\\n")
        return f"{name}: no such file or folder; check the path"
    if isinstance(exc, PermissionError):
        return f"{exc.filename}: permission denied; check the file's permissions"
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename}: is a folder, not a file"
    if isinstance(exc, NotADirectoryError):
        return f"{exc.filename}: a part of this path is a file, not a folder; choose another path"
    if isinstance(exc, FileExistsError):
        return f"{exc.filename}: already exists; remove it or choose another path"
    if isinstance(exc, OSError) and exc.filename is not None:
        why = (exc.strerror or type(exc).__name__).lower()
        return f"{exc.filename}: {why}; check the path, its permissions and the free space"
    return None
