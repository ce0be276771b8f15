"""Reading a local zarr array in row bands: segscore's reader (zarr-python through the capped store
wrapper, ``segscore.io.readers.open_zarr``) beside zarr-python alone, and optionally beside another
reader module given by path (the removed ``segscore/io/zarr_local.py``:
``git show 19eee8e:segscore/io/zarr_local.py > /tmp/zarr_local.py``).

The array (made once under benchmarks/_cache, outside git): 8192 x 8192 uint8, 512 x 512 chunks,
zstd level 3; ``--content map`` a smooth field plus noise (62 MB stored), ``labels`` blocks of ids
(4 MB). Each reader reads the whole array in bands of 512 and of 64 rows (the 64-row bands decode
each chunk 8 times); best of ``--repeat`` runs, in one process.

    PYTHONPATH=. nice python benchmarks/bench_zarr_read.py [--content map|labels] [--old /tmp/zarr_local.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import CACHE  # noqa: E402

N, CHUNK = 8192, 512


def make(path: Path, content: str) -> None:
    import zarr

    rng = np.random.default_rng(0)
    if content == "labels":
        small = (rng.random((N // 32, N // 32)) < 0.3).astype(np.uint8)
        data = np.repeat(np.repeat(small, 32, 0), 32, 1) * rng.integers(1, 200, (N, 1), dtype=np.uint8)
        data[rng.random((N, N)) < 0.01] = 7
    else:
        field = np.repeat(np.repeat(rng.random((N // 64, N // 64)), 64, 0), 64, 1)
        data = np.clip(field * 200 + rng.normal(0, 12, (N, N)), 0, 255).astype(np.uint8)
    zarr.create_array(str(path), shape=data.shape, dtype=np.uint8, chunks=(CHUNK, CHUNK),
                      compressors=zarr.codecs.ZstdCodec(level=3))[...] = data


def bands(read, rows: int) -> tuple[float, int]:
    start = time.perf_counter()
    total = 0
    for r in range(0, N, rows):
        total += int(read(r, min(N, r + rows)).sum(dtype=np.int64))
    return time.perf_counter() - start, total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", choices=("map", "labels"), default="map")
    parser.add_argument("--old", type=Path, help="a reader module with open_node(path)[rows, cols] (zarr_local.py)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import zarr

    from segscore.io.readers import open_zarr

    path = CACHE / f"zarr_read_{args.content}_{N}.zarr"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        make(path, args.content)
    readers = {}
    if args.old:
        spec = importlib.util.spec_from_file_location("old_reader", args.old)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        readers[f"{args.old.name}"] = lambda: (lambda a: lambda r0, r1: a[r0:r1, 0:N])(old.open_node(path))
    readers["zarr-python alone"] = lambda: (lambda a: lambda r0, r1: a[r0:r1, :])(zarr.open_array(str(path), mode="r"))
    readers["segscore open_zarr (capped store)"] = lambda: (
        lambda s: lambda r0, r1: s.read((slice(r0, r1), slice(0, N))))(open_zarr(path))
    print(f"{N} x {N} uint8, {CHUNK}^2 chunks, zstd, content {args.content}; best of {args.repeat}")
    sums = set()
    for rows in (512, 64):
        for name, make_reader in readers.items():
            times = []
            for _ in range(args.repeat):
                dt, total = bands(make_reader(), rows)
                times.append(dt)
                sums.add(total)
            print(f"{rows:4d}-row bands  {name:36s} {min(times):6.2f} s   (runs {', '.join(f'{t:.2f}' for t in times)})",
                  flush=True)
    if len(sums) != 1:
        print("the readers disagree:", sums)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
