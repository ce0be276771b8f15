"""The engine's one call shape (issue 28 item 4): reduce(read, fn, merge, windows=plan), read a
read(window) callable or sources of one shape; the plans of engine/plan.py; one options check."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.engine import check_options, reduce
from segscore.engine.plan import bands, plan_bands, plan_boxes, spread_rows
from segscore.errors import ScoreError
from segscore.io.sources import ArraySource

IMG = np.arange(23 * 5, dtype=np.int64).reshape(23, 5)


@pytest.mark.parametrize("executor", ["threads", "synchronous", "dask"])
def test_a_read_callable_and_sources_fold_the_same_windows_in_order(executor):
    windows = plan_bands(IMG.shape, tile_rows=4)
    seen = reduce(lambda w: (IMG[w], IMG[w] * 2), lambda tile, a, b: [(tile.index, int(a.sum()), int(b.sum()))],
                  lambda x, y: x + y, windows=windows, executor=executor, threads=3)
    assert [s[0] for s in seen] == list(range(6))  # window order, whatever ran it
    src = [ArraySource(IMG, "a"), ArraySource(IMG * 2, "b")]
    assert reduce(src, lambda tile, a, b: [(tile.index, int(a.sum()), int(b.sum()))], lambda x, y: x + y,
                  tile_rows=4, executor=executor) == seen
    assert sum(s[1] for s in seen) == IMG.sum()


def test_sources_are_read_with_a_clipped_halo_and_own_their_band():
    def fn(tile, a):
        assert a.shape[0] == tile.read_window[0].stop - tile.read_window[0].start
        assert np.array_equal(a[tile.own], IMG[tile.window])
        return [(tile.read_window[0].start, tile.read_window[0].stop)]

    got = reduce([ArraySource(IMG, "a")], fn, lambda x, y: x + y, tile_rows=10, halo=2)
    assert got == [(0, 12), (8, 22), (18, 23)]


def test_reduce_needs_sources_or_a_read_with_windows():
    with pytest.raises(ValueError, match="sources or a read"):
        reduce([], lambda tile: 0, lambda a, b: a + b, windows=[(slice(0, 1),)])
    with pytest.raises(ValueError, match="needs the windows"):
        reduce(lambda w: (IMG[w],), lambda tile, a: 0, lambda a, b: a + b)
    assert reduce(lambda w: (IMG[w],), lambda tile, a: 0, lambda a, b: a + b, windows=[]) is None


@pytest.mark.parametrize("executor", ["threads", "synchronous", "dask"])
def test_tiles_that_read_their_own_blocks_get_no_arrays_and_fold_in_order(executor):
    """read=None: fn(tile) alone (objects' out-of-core tiles read and free their own blocks)."""
    windows = plan_bands(IMG.shape, tile_rows=4)
    got = reduce(None, lambda tile: [(tile.index, int(IMG[tile.window].sum()))], lambda x, y: x + y,
                 windows=windows, executor=executor, threads=3)
    assert got == reduce(lambda w: (IMG[w],), lambda tile, a: [(tile.index, int(a.sum()))], lambda x, y: x + y,
                         windows=windows, executor=executor)
    with pytest.raises(ValueError, match="needs the windows"):
        reduce(None, lambda tile: 0, lambda a, b: a + b)


def test_one_options_check_resolves_the_old_names_and_refuses_like_the_cli():
    assert check_options(band_rows=7, workers=2) == {"tile_rows": 7, "executor": None, "threads": 2}
    assert check_options(threads=3, progress=print)["progress"] is print
    with pytest.raises(ScoreError, match="tile_rows 7 and its old name band_rows 8 disagree"):
        check_options(tile_rows=7, band_rows=8)
    with pytest.raises(ScoreError, match=r"threads 0: must be a whole number >= 1 \(--threads\)"):
        check_options(workers=0)
    with pytest.raises(ScoreError, match="halo -1"):
        check_options(halo=-1)
    with pytest.raises(ScoreError, match="executor 'processes'"):
        check_options(executor="processes")


def test_band_plans():
    region = (slice(3, 20), slice(0, 10))
    assert plan_bands(region, tile_rows=5) == bands(region, 5)
    assert plan_bands(region, target_px=60) == bands(region, 6)  # about 60 pixels of 10-pixel rows
    # chunk rows of the image, not of the region: bands end on multiples of 4
    assert [w[0].stop for w in plan_bands(region, chunk_rows=4, target_px=80)] == [8, 16, 20]
    assert plan_bands((0, 10)) == [] and plan_bands((slice(5, 5), slice(0, 3))) == []


@pytest.mark.parametrize("shape,box", [((7, 5, 9), (3, 5, 2)), ((4, 6), (1, 7)), ((3, 0, 2), (1, 1, 1)),
                                       ((11,), (4,)), ((2, 3, 5), (2, 3, 5))])
def test_box_plans_tile_the_shape_once_in_c_order_of_the_grid(shape, box):
    boxes = plan_boxes(shape, box)
    seen = np.zeros(shape, np.int64)
    for w in boxes:
        assert all(0 < s.stop - s.start <= b for s, b in zip(w, box))
        seen[w] += 1
    assert (seen == 1).all()
    assert boxes == sorted(boxes, key=lambda w: tuple(s.start for s in w))  # C order of the grid
    assert len(boxes) == int(np.prod([-(-n // b) for n, b in zip(shape, box)]))
    with pytest.raises(ValueError):
        plan_boxes(shape, (0,) * len(shape))


def test_spread_rows_gives_each_thread_a_band_only_where_bands_stay_deep():
    assert spread_rows(64, 24, 2) == 32
    assert spread_rows(64, 24, 4) is None  # bands of 16 rows, under 24 deep
    assert spread_rows(65, 8, 4) == 17
    assert spread_rows(64, 1, 1) is None


def test_one_function_connects_to_a_cluster_and_refuses_a_silent_address_in_one_line():
    """engine.executor.connect serves the batch runner and the audit alike (issue 35 item 6)."""
    pytest.importorskip("distributed")
    from segscore.engine.executor import connect

    assert connect() == (None, None)
    sentinel = object()
    client, close = connect(scheduler=sentinel)
    assert client is sentinel
    close()  # a client you gave keeps running
    with pytest.raises(ScoreError, match=r"^--scheduler tcp://127.0.0.1:9: cannot connect .*fix: ") as err:
        connect(scheduler="tcp://127.0.0.1:9")
    assert "\n" not in str(err.value)


def test_the_thread_pool_is_capped_by_the_thread_budget():
    from segscore.engine.executor import thread_budget, thread_pool

    with thread_pool(3) as (pool, n):
        assert n == 3 and pool.submit(lambda: 7).result() == 7
    with thread_budget(2), thread_pool(5) as (_, n):
        assert n == 2


def test_families_build_no_pool_and_connect_to_no_cluster():
    """A family's or a metric's work fans out through the engine (issue 35 item 6: the private pools
    of topology/score.py, metrics/betti.py and curvilinear/auditing.py went): no module there makes
    a thread or process pool or a dask client; engine/executor.py alone connects to a cluster."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "segscore"
    pools = re.compile(r"\b(ThreadPoolExecutor|ProcessPoolExecutor|LocalCluster|Client)\(|multiprocessing\.Pool")
    bad = [f"{p.relative_to(root)}:{m.group(0)}" for layer in ("ink", "columns", "curvilinear", "objects", "fibers",
                                                               "topology", "metrics")
           for p in sorted((root / layer).rglob("*.py")) for m in pools.finditer(p.read_text())]
    assert bad == []
    clients = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))
               if re.search(r"^\s+[\w.]+ = (Client|LocalCluster)\(", p.read_text(), re.MULTILINE)]
    assert clients == ["engine/executor.py"]
