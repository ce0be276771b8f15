"""A refusal is one line: nothing after it, whatever failed.

- A zarr store (the map, or a level of the labels) with several chunks damaged at once, each
  class of damage (a codec that fails on a corrupt body, a chunk cut short, an empty chunk, a FIFO
  where a chunk belongs): the command, run in a fresh process (asyncio's complaints are printed as
  the interpreter exits), exits 2 with exactly one line on stderr, compared line for line. Before
  the window was read chunk by chunk (:func:`segscore.io.zarr_store.read_window`), zarr-python
  raised the first failure with the window's other chunk tasks still pending, and the exiting
  process printed "Task was destroyed but it is pending!" for each of them, with "Event loop is
  closed" tracebacks (hundreds of lines on this store, every run).
- An output that cannot be written is refused naming the path as the user typed it, never the
  hidden temporary file beside it; a pipe where an output belongs is not replaced.
- Four inputs refused naming their file: a columns map with one -inf pixel outside the scored
  rows, a fiber target whose mask is not the flat packbits of the cube its shape declares, a
  compared map that is 0 at every supervised pixel, a baseline prediction holding fractional ids.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fresh(args, cwd) -> tuple[int, str, str]:
    """``python -m segscore ARGS`` in a new process run from ``cwd``: (code, stdout, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([REPO, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, "-m", "segscore", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=180)
    return done.returncode, done.stdout, done.stderr


# ---------------------------------------------------------------------------------------------
# zarr stores with several chunks failing at once

SHAPE, CHUNK = (64, 96), (8, 8)
#: chunks damaged at once: three in the first chunk row (one window whatever the plan) and more
#: further down; the refusal names the first of them in reading order: for the map, C order,
#: c/0/3 (rows 0:8, columns 24:32); for the labels, read in strips of chunk columns to make their
#: codes (segscore.io.grid.IndexedView.read with combine), the first strip's, c/3/2 (rows 24:32,
#: columns 16:24)
DAMAGED = ("0/3", "0/5", "0/9", "3/2", "5/7", "7/11")


def _inputs(folder):
    from tests.ink.helpers import segment

    pred, ink, mask = segment(SHAPE, seed=3)
    pred[pred == 0] = 1  # no chunk equal to the fill value: every chunk is a file
    for name, data in (("map.zarr", pred), ("labels.zarr/2", ink.astype(np.uint8) + 0),
                       ("mask.zarr/2", mask.astype(np.uint8))):
        if "/" in name:
            zarr.open_group(str(folder / name.split("/")[0]), mode="w", zarr_format=3)
        arr = zarr.create_array(str(folder / name), shape=SHAPE, dtype=np.uint8, chunks=CHUNK, zarr_format=3,
                                compressors=zarr.codecs.ZstdCodec(level=3, checksum=True), fill_value=0)
        arr[...] = data
    np.save(folder / "map.npy", pred)


def _damage(chunk, how):
    data = chunk.read_bytes()
    if how == "corrupt":  # the frame parses (its decoded size is bounded); its checksum fails in zstd itself
        chunk.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    elif how == "truncated":
        chunk.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        chunk.write_bytes(b"")
    else:
        chunk.unlink()
        os.mkfifo(chunk)


EXPECTED = {
    "corrupt": "{store}: the chunk holding [{piece}] cannot be read; the store or file is truncated or "
               "corrupt: restore it",
    "truncated": "{store}: chunk {key} does not decode (zstd data cut short); restore or re-write the store",
    "empty": "{store}: chunk {key} does not decode (zstd data empty); restore or re-write the store",
    "fifo": "{store}: chunk {key} is not a regular file (a FIFO, socket or device); give a store of regular files",
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("how", sorted(EXPECTED))
@pytest.mark.parametrize("damaged", ["map", "labels"])
def test_several_chunks_failing_at_once_print_one_line(tmp_path, how, damaged):
    _inputs(tmp_path)
    store = "map.zarr" if damaged == "map" else "labels.zarr"
    array = tmp_path / store / ("" if damaged == "map" else "2")
    for key in DAMAGED:
        _damage(array / "c" / key, how)
    key, piece = ("c/0/3", "0:8, 24:32") if damaged == "map" else ("2/c/3/2", "24:32, 16:24")
    if how == "corrupt" and damaged == "labels":
        shown = "labels.zarr/2"
    else:
        shown = store
    expected = EXPECTED[how].format(store=shown, key=key, piece=piece)
    pred = "map.zarr" if damaged == "map" else "map.npy"
    for _ in range(2):  # it used to vary from run to run: twice, each in its own process
        code, out, err = fresh(["auc", pred, "--labels", "labels.zarr", "--mask", "mask.zarr"], tmp_path)
        assert (code, out) == (2, ""), (code, out, err[-2000:])
        assert err.splitlines() == [f"segscore auc: {expected}"], err[-3000:]


# ---------------------------------------------------------------------------------------------
# outputs that cannot be written


@pytest.fixture(scope="module")
def objects_inputs(tmp_path_factory):
    import tifffile

    from tests.objects.helpers import synthetic_pair

    folder = tmp_path_factory.mktemp("objects")
    t, p = synthetic_pair(shape=(32, 32), n=5, seed=4)
    tifffile.imwrite(folder / "truth.tif", t.astype(np.uint16))
    np.save(folder / "pred.npy", p.astype(np.int32))
    return folder


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, a folder no file can be made in")
@pytest.mark.parametrize("option, name", [("--json-out", "x.json"), ("--csv", "board.csv"), ("--plot", "x.png")])
def test_an_output_in_a_folder_that_takes_no_file_names_the_path_given(cli, objects_inputs, option, name):
    if option == "--plot":
        pytest.importorskip("matplotlib")
    f = objects_inputs
    code, out, err = cli("objects", f / "truth.tif", f / "pred.npy", option, f"/proc/{name}")
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == (f"segscore objects: /proc/{name}: cannot create a file in /proc (no such file or "
                                    f"directory); choose a path in a folder you can write to")
    assert ".tmp" not in err


def test_an_output_under_a_file_or_onto_a_folder_or_a_pipe(cli, objects_inputs, tmp_path, monkeypatch):
    f = objects_inputs
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    os.mkfifo(tmp_path / "pipe")
    for given, said in (("./afile/x.json", "./afile/x.json: a part of ./afile is a file, not a folder; choose another "
                                           "path"),
                        ("adir", "adir: is a folder; give a file name for the output"),
                        ("pipe", "pipe: is a FIFO (named pipe); segscore writes its outputs to regular files only: "
                                 "choose another path")):
        code, out, err = cli("objects", f / "truth.tif", f / "pred.npy", "--json-out", given)
        assert code == 2 and err.splitlines() == [f"segscore objects: {said}"], err
    assert (tmp_path / "pipe").is_fifo() and sorted(os.listdir(tmp_path)) == ["adir", "afile", "pipe"]


def test_report_csv_names_the_path_given(cli, objects_inputs, tmp_path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    f = objects_inputs
    manifest = tmp_path / "jobs.csv"
    manifest.write_text(f"job\nobjects {f / 'truth.tif'} {f / 'pred.npy'}\n")
    code, _, err = cli("batch", manifest, "--out", tmp_path / "runs", "--quiet", "--threads", "1")
    assert code == 0, err
    code, out, err = cli("report", tmp_path / "runs", "--csv", "/proc/board.csv")
    assert code == 2 and err.splitlines() == ["segscore report: /proc/board.csv: cannot create a file in /proc (no "
                                              "such file or directory); choose a path in a folder you can write to"]


def test_fibers_target_names_its_out_not_its_temporary_folder(cli, inputs, tmp_path):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "target"
    code, _, err = cli("fibers-target", inputs["nml"], inputs["fiber_mask"], "--out", out)
    assert code == 2 and err.splitlines() == [f"segscore fibers-target: {out}: a part of {tmp_path / 'afile'} is a "
                                              f"file, not a folder; choose another path"], err


# ---------------------------------------------------------------------------------------------
# four inputs, refused naming their file


def test_a_columns_map_with_one_minus_inf_outside_the_scored_rows(cli, inputs, tmp_path):
    import tifffile

    from segscore.columns.score import load_column_target

    tgt = load_column_target(inputs["col_target"])
    pred = np.load(inputs["col_pred"])
    first = min(c["text_band"][0] for c in tgt.columns)
    assert first > 0  # the pixel below lies in a row no column or gutter covers
    pred[0, 3] = -np.inf
    path = tmp_path / "map.tif"
    tifffile.imwrite(path, pred)
    code, out, err = cli("columns", path, inputs["col_target"], "--no-floors")
    assert code == 2 and err.splitlines() == [f"segscore columns: {path}: the map holds 1 NaN or infinite values; "
                                              f"replace them (0 for no ink) before scoring"]


def _fiber_copy(inputs, tmp_path, **arrays):
    import shutil

    folder = tmp_path / "target"
    shutil.copytree(inputs["fiber_target"], folder)
    with np.load(folder / "mask.npz") as z:
        mask = {k: z[k] for k in z.files}
    mask.update(arrays)
    np.savez_compressed(folder / "mask.npz", **mask)
    return folder, mask


@pytest.mark.parametrize("change, said", [
    ("packed-slices", "'packed' is a 2D array of shape (16, 32), not the flat numpy.packbits of the whole "
                      "(16, 16, 16) cube"),
    ("shape-2d", "'shape' is [256, 16] (int64); a fiber target's shape is three positive whole numbers"),
    ("shape-nested", "'shape' is [[16, 16, 16]] (int64)"),
    ("shape-fractional", "'shape' is [16.5, 16.0, 16.0] (float64)"),
    ("larger-cube", "'packed' holds 1024 bytes; the (16, 16, 16) cube of its 'shape' packs into 512"),
])
def test_a_fiber_mask_that_is_not_the_declared_cube(cli, inputs, tmp_path, change, said):
    folder, mask = _fiber_copy(inputs, tmp_path)
    shape, packed = mask["shape"], mask["packed"]
    bits = np.unpackbits(packed, bitorder="big").reshape(tuple(shape))
    new = {"packed-slices": {"packed": np.packbits(bits.reshape(shape[0], -1), axis=1, bitorder="big")},
           "shape-2d": {"shape": np.array([shape[0] * shape[1], shape[2]])},
           "shape-nested": {"shape": shape[None, :]},
           "shape-fractional": {"shape": np.array([16.5, 16.0, 16.0])},
           "larger-cube": {"packed": np.concatenate([packed, packed])}}[change]
    _fiber_copy(inputs, tmp_path / "x", **new)
    folder = tmp_path / "x" / "target"
    code, out, err = cli("fibers", inputs["fiber_labels"], folder)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"segscore fibers: {folder / 'mask.npz'}: {said}"), lines[0]


def test_a_compared_map_that_is_zero_everywhere_is_named_constant(cli, inputs, tmp_path):
    from segscore.io.readers import read_image

    pred = read_image(inputs["map"])
    zero = tmp_path / "zero.zarr"
    zarr.create_array(str(zero), shape=pred.shape, dtype=pred.dtype, chunks=(16, 16), zarr_format=3)[...] = 0
    code, out, err = cli("auc", inputs["map"], "--labels", inputs["labels"], "--mask", inputs["mask"],
                         "--compare", zero)
    assert code == 2 and err.splitlines() == [
        f"segscore auc: {zero}: the compared map is constant, 0 at every supervised pixel, and a map's zeros are "
        f"left out as unscored, so no pixel is left to resample; give a map with scores (or --keep-zero to rank "
        f"its zeros)"]


def test_a_baseline_holding_fractional_ids_is_named(cli, inputs, tmp_path):
    import shutil

    import tifffile

    base = tmp_path / "baseline"
    shutil.copytree(inputs["preds"], base)
    (name,) = [p.name for p in base.iterdir()]
    tifffile.imwrite(base / name, tifffile.imread(base / name).astype(np.float32) + 0.25)
    code, out, err = cli("holdout", inputs["manifest"], "--predictions", inputs["preds"], "--baseline", base)
    assert code == 2 and err.splitlines() == [
        f"segscore holdout: {base / name}: holds fractional or negative values; a label image holds non-negative "
        f"integer ids (is this a probability map?)"]
