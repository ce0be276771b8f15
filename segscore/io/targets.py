"""Target folders, read in one place: ink (``gt_ink.png``), column (``columns.json``) and fiber
(``skeleton.npz``, ``mask.npz``) targets, each with its ``meta.json``.

The families give these files their meaning; this module finds and decodes them, and refuses
a missing or unreadable one with a one-line message naming the file and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError
from segscore.io.paths import check_readable

#: each kind of target folder: (named with its article, defining file, scoring command)
TARGET_KINDS = {"ink": ("an ink", "gt_ink.png", "segscore target"),
                "column": ("a column", "columns.json", "segscore columns"),
                "fiber": ("a fiber", "skeleton.npz", "segscore fibers")}


def target_file(target_dir, kind: str) -> tuple[Path, Path]:
    """``(folder, its defining file)`` of a ``kind`` target (a key of :data:`TARGET_KINDS`);
    ``InputFileError`` naming the fix when either is missing, with a hint when the folder is a
    target of another kind."""
    what, name, _ = TARGET_KINDS[kind]
    folder = Path(target_dir)
    if not folder.is_dir():
        raise InputFileError(f"{folder}: no such target folder; give a folder holding {name} and meta.json")
    path = folder / name
    if not path.exists():
        hint = "".join(f" ({other} target: use `{cmd}`)" for k, (other, file, cmd) in TARGET_KINDS.items()
                       if k != kind and (folder / file).exists())
        raise InputFileError(f"{path}: no such file; {what} target folder holds {name}{hint}")
    return folder, path


def refuse_target_as_prediction(pred, usage: str, *, what: str = "the prediction") -> None:
    """Refuse ``pred`` (a path, or anything else, which passes) when it is a target folder of any
    kind (:data:`TARGET_KINDS`): a target is the truth, so the roles were swapped. ``usage`` is the
    command's positional order (``segscore target PRED TARGET``); the refusal names the roles, not
    only a missing file (a swapped pair would otherwise be refused as "no such target folder")."""
    if not isinstance(pred, (str, os.PathLike)):
        return
    folder = Path(pred)
    try:
        kinds = [k for k, (_, file, _) in TARGET_KINDS.items() if (folder / file).is_file()]
    except OSError:  # unreadable: the reader of the prediction says so
        return
    if kinds:
        raise ScoreError(f"{folder} is {TARGET_KINDS[kinds[0]][0]} target folder: it is the truth; `{usage}` takes "
                         f"{what} first (segscore.api: truth=TARGET, pred=PRED)")


def read_meta(folder, *, required: bool = False) -> dict:
    """A target's ``meta.json`` as a dict (``{}`` when absent and not ``required``)."""
    meta_path = Path(folder) / "meta.json"
    check_readable(meta_path, "target's meta.json")
    if not meta_path.exists():
        if required:
            raise InputFileError(f"{meta_path}: missing; restore the target's meta.json")
        return {}
    from segscore.io.results import read_json

    meta = read_json(meta_path, fix="restore the target's meta.json")
    if not isinstance(meta, dict):
        raise ScoreError(f"{meta_path}: expected a JSON object; restore the target's meta.json")
    return meta


def read_png(path) -> np.ndarray:
    """A PNG decoded whole, with imagecodecs (about twice Pillow's speed), else the reader."""
    from segscore.io.readers import check_png, read_image

    from segscore.io import budget
    from segscore.io.readers import PNG_FIX

    try:
        budget.check_bytes(path, os.path.getsize(path), fix=PNG_FIX)
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file or folder; check the path") from None
    info = check_png(data, path)  # damaged files refused here, before a decoder prints warnings
    if info["color_type"] in (3, 4, 6) or info["bit_depth"] < 8:  # palette, alpha, 1-4 bit: one reading
        return read_image(path)  # of those (Pillow's, as every other reader's): grey levels, alpha dropped
    try:
        import imagecodecs

        return imagecodecs.png_decode(data)
    except MemoryError:
        raise budget.out_of_memory(path, fix=PNG_FIX) from None
    except Exception:  # noqa: BLE001 - no imagecodecs, or a PNG it cannot read: Pillow decides
        return read_image(path)


def read_gray(path, what: str) -> np.ndarray:
    """A target's 2D image (a PNG mask or label): colour reduced to its brightest channel."""
    arr = read_png(path) if str(path).lower().endswith(".png") else None
    if arr is None:
        from segscore.io.readers import read_image

        arr = read_image(path, what=what)
    if arr.ndim == 3 and arr.shape[2] in (1, 2, 3, 4):
        arr = arr[..., 0] if arr.shape[2] <= 2 else arr[..., :3].max(axis=2)
    if arr.ndim != 2:
        raise ScoreError(f"{path}: expected a 2D {what}, got shape {arr.shape}")
    return arr


class _Npz:
    """An open ``.npz`` whose members are read with the same refusal as the archive itself."""

    def __init__(self, path, npz):
        self.path, self._npz = path, npz
        self.files = list(npz.files)

    def __getitem__(self, key):
        from segscore.io import budget

        try:  # what the member declares it decompresses to, checked before it is
            declared = self._npz.zip.getinfo(f"{key}.npy").file_size
        except (KeyError, AttributeError):
            declared = 0
        budget.check_bytes(f"{self.path} (array {key!r})", declared)
        try:
            return self._npz[key]
        except MemoryError:
            raise budget.out_of_memory(f"{self.path} (array {key!r})") from None
        except Exception as exc:  # noqa: BLE001 - a corrupt member is the same refusal
            raise ScoreError(f"{self.path}: its array {key!r} cannot be read; the archive is "
                             f"truncated or corrupt: restore the target's file") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._npz.close()


def read_npz(path):
    """An ``.npz`` archive of a target (no pickles); a corrupt archive, or a corrupt member when
    it is read, is one refusal naming the file."""
    try:
        return _Npz(path, np.load(path, allow_pickle=False))
    except Exception as exc:  # noqa: BLE001 - a corrupt archive is one refusal
        raise ScoreError(f"{path}: not a readable .npz archive; restore the target's "
                         f"file") from None
