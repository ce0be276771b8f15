"""Betti matching: pair for pair against Betti-Matching-3D's recorded answers, and the
counts against a brute-force oracle (Betti numbers from scipy labelling and the Euler
characteristic)."""

from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from segscore.metrics.betti import BettiInputError, betti_matching

DATA = Path(__file__).resolve().parents[1] / "data" / "betti_matching" / "cases.npz"


def _rows(a):
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros((0,), np.int64)
    return a[np.lexsort(a.T[::-1])]


def _ours(a, b, nd, threads=1):
    if a.dtype == bool:
        x, y = (~a).astype(np.uint8), (~b).astype(np.uint8)
    else:
        x, y = a, b
    if nd == 2:
        x, y = x[0], y[0]
    m = betti_matching(x, y, threads=threads)
    sl = slice(None) if nd == 3 else slice(1, 3)
    out = {}
    for d, D in enumerate(m.dims):
        u0, u1 = D.unmatched0(), D.unmatched1()
        out[d] = (
            np.hstack([D.birth0[D.matched0][:, sl], D.death0[D.matched0][:, sl],
                       D.birth1[D.matched1][:, sl], D.death1[D.matched1][:, sl]]),
            np.hstack([D.birth0[u0][:, sl], D.death0[u0][:, sl]]),
            np.hstack([D.birth1[u1][:, sl], D.death1[u1][:, sl]]),
        )
    return out


def _cases():
    f = np.load(DATA)
    names = sorted({k.split("/")[0] for k in f.files})
    out = []
    for name in names:
        for tag in ("3d", "2d"):
            if f"{name}/{tag}/dim0/matched" in f.files:
                out.append((name, tag))
    return out


CASES = _cases()


def test_fixture_covers_the_kinds():
    kinds = {n.split("_")[0] for n, _ in CASES}
    assert {"random3d", "sheets", "tunnelled", "hollow", "empty", "random2d", "float3d"} <= kinds
    assert sum(tag == "2d" for _, tag in CASES) >= 4


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name,tag", CASES)
def test_pairs_equal_betti_matching_3d(name, tag, threads):
    """With two threads the steps run two at a time (the inputs' pairs, then the comparison's
    squares beside the dimension-0 matching, then the image pairs): the same pairs."""
    f = np.load(DATA)
    a, b = f[f"{name}/input0"], f[f"{name}/input1"]
    nd = 3 if tag == "3d" else 2
    ours = _ours(a, b, nd, threads)
    for d in range(nd):
        for j, what in enumerate(("matched", "unmatched0", "unmatched1")):
            ref = _rows(f[f"{name}/{tag}/dim{d}/{what}"])
            got = _rows(ours[d][j])
            assert ref.shape == got.shape, (d, what, ref.shape, got.shape)
            assert (ref == got).all(), (d, what)
    if nd == 2:  # a slice has no cavities
        assert all(len(x) == 0 for x in ours[2])


def test_fixture_is_not_trivial():
    f = np.load(DATA)
    total = {d: sum(len(f[f"{n}/{t}/dim{d}/{w}"]) for n, t in CASES
                    for w in ("matched", "unmatched0", "unmatched1") if t == "3d") for d in range(3)}
    assert min(total.values()) > 20, total


# ---- brute-force oracle: Betti numbers of the foreground complex


def _betti_numbers(fg):
    """(b0, b1, b2) of the V-construction complex on the foreground voxels of a 3D volume with
    every side >= 2: components (6-connected), cavities (26-connected background components
    off the border), b1 from the Euler characteristic V - E + F - C."""
    fg = fg.astype(bool)
    b0 = ndimage.label(fg, structure=ndimage.generate_binary_structure(3, 1))[1]
    bg_lab, nb = ndimage.label(~fg, structure=np.ones((3, 3, 3)))
    border = set(np.unique(np.concatenate([
        bg_lab[0].ravel(), bg_lab[-1].ravel(), bg_lab[:, 0].ravel(), bg_lab[:, -1].ravel(),
        bg_lab[:, :, 0].ravel(), bg_lab[:, :, -1].ravel()]))) - {0}
    b2 = nb - len(border)
    v = fg.sum()
    e = sum((fg[sl1] & fg[sl2]).sum() for sl1, sl2 in _pairs_along())
    f = 0
    for ax in range(3):
        a, b = [d for d in range(3) if d != ax]
        s = fg
        s = _and_shift(s, a)
        s = _and_shift(s, b)
        f += s.sum()
    c = _and_shift(_and_shift(_and_shift(fg, 0), 1), 2).sum()
    chi = int(v) - int(e) + int(f) - int(c)
    b1 = b0 + b2 - chi
    return b0, b1, b2


def _and_shift(s, ax):
    lo = [slice(None)] * 3
    hi = [slice(None)] * 3
    lo[ax] = slice(0, -1)
    hi[ax] = slice(1, None)
    return s[tuple(lo)] & s[tuple(hi)]


def _pairs_along():
    for ax in range(3):
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[ax] = slice(0, -1)
        hi[ax] = slice(1, None)
        yield tuple(lo), tuple(hi)


@pytest.mark.parametrize("seed", range(12))
def test_pair_counts_are_betti_numbers(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(2, 14, 3))
    p = rng.uniform(0.2, 0.8)
    fg0 = rng.random(shape) < p
    fg1 = rng.random(shape) < p
    m = betti_matching((~fg0).astype(np.uint8), (~fg1).astype(np.uint8))
    for fg, which in ((fg0, 0), (fg1, 1)):
        b0, b1, b2 = _betti_numbers(fg)
        counts = [m.dims[d].n_pairs0 if which == 0 else m.dims[d].n_pairs1 for d in range(3)]
        # every class of the foreground dies when the background enters, but one component
        assert counts == [max(b0 - 1, 0), b1, b2]


def test_identical_inputs_match_everything():
    rng = np.random.default_rng(3)
    x = (rng.random((9, 10, 11)) < 0.5).astype(np.uint8)
    m = betti_matching(x, x)
    for D in m.dims:
        assert D.n_matched == D.n_pairs0 == D.n_pairs1
    assert m.dims[0].n_pairs0 > 0 and m.dims[1].n_pairs0 > 0


def test_elder_rule_lowest_index_component_is_essential():
    # two single-voxel components born together: the one at the lowest C-order index
    # survives, so the pair (finite class) is born at the other
    x = np.ones((1, 1, 5), np.uint8)
    x[0, 0, 1] = 0
    x[0, 0, 3] = 0
    m = betti_matching(x, x)
    assert m.dims[0].birth0.tolist() == [[0, 0, 3]]


def test_refusals():
    with pytest.raises(BettiInputError):
        betti_matching(np.zeros((3, 3)), np.zeros((3, 4)))
    with pytest.raises(BettiInputError):
        betti_matching(np.zeros(5), np.zeros(5))
    with pytest.raises(BettiInputError):
        betti_matching(np.full((3, 3), np.nan), np.zeros((3, 3)))


def test_empty_volume():
    m = betti_matching(np.zeros((0, 3, 3)), np.zeros((0, 3, 3)))
    assert [D.n_pairs0 for D in m.dims] == [0, 0, 0]


# ---- curvicost's betti_matching column (the unmatched pairs of both masks, all dimensions)


@pytest.mark.parametrize("name", ["random2d_0", "random2d_1", "random3d_1", "sheets_0", "tunnelled_0"])
def test_curvicost_column_counts_betti_matching_3d_unmatched(name):
    from segscore.curvilinear.scoring import betti_matching_error

    f = np.load(DATA)
    a, b = f[f"{name}/input0"], f[f"{name}/input1"]
    want = sum(len(f[f"{name}/3d/dim{d}/unmatched0"]) + len(f[f"{name}/3d/dim{d}/unmatched1"]) for d in range(3))
    squeeze = a.shape[0] == 1
    assert betti_matching_error(b[0] if squeeze else b, a[0] if squeeze else a) == want
    assert want > 0


def test_curve_all_metrics_fills_betti_matching_in_3d_with_a_warning():
    from segscore.curvilinear.scoring import BETTI_MATCHING_3D_WARNING, scale_warnings, score

    g = np.zeros((12, 24, 24), bool)
    g[6, 4:20, 12] = True
    g[6, 12, 4:20] = True
    p = g.copy()
    p[6, 12, 14] = False
    r = score(g, p, prune_px=0, all_metrics=True)
    assert isinstance(r["betti_matching"], int) and r["betti_matching"] >= 1
    assert BETTI_MATCHING_3D_WARNING in scale_warnings(r)
    r2 = score(g[6], p[6], prune_px=0, all_metrics=True)
    assert BETTI_MATCHING_3D_WARNING not in scale_warnings(r2)


# ---- kernels against NumPy


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 4, 5), (3, 4, 5), (2, 1, 6)])
@pytest.mark.parametrize("dim", [1, 2])
def test_sorted_cells_is_a_stable_sort_by_value(shape, dim):
    from segscore.kernels import betti as K

    rng = np.random.default_rng(sum(shape) + dim)
    r = rng.integers(0, 4, shape).astype(np.int32)
    nx, ny, nz = shape
    flat = r.ravel()
    vals = np.empty(3 * flat.size, np.int64)  # brute force: every cell's value from its voxels (-1: outside)
    for c in range(vals.size):
        x, y, z = np.unravel_index(c // 3, shape)
        t = c % 3
        if dim == 1:
            ends = [(x, y, z), (x + (t == 0), y + (t == 1), z + (t == 2))]
        else:
            a, b = [ax for ax in range(3) if ax != t]
            ends = [tuple(np.add((x, y, z), np.eye(3, dtype=int)[a] * i + np.eye(3, dtype=int)[b] * j))
                    for i in (0, 1) for j in (0, 1)]
        inside = all(e[k] < shape[k] for e in ends for k in range(3))
        vals[c] = max(r[e] for e in ends) if inside else -1
    present = np.flatnonzero(vals >= 0)
    want = present[np.lexsort((present, vals[present]))]
    assert K.sorted_cells(flat, nx, ny, nz, dim, 4).tolist() == want.tolist()


def _cell_values_brute(r):
    """Every cell's value (3 per voxel) from its voxels, -1 outside the complex, per dim."""
    shape = r.shape
    out = {}
    for dim in (1, 2):
        vals = np.empty(3 * r.size, np.int64)
        for c in range(vals.size):
            x, y, z = np.unravel_index(c // 3, shape)
            t = c % 3
            if dim == 1:
                ends = [(x, y, z), (x + (t == 0), y + (t == 1), z + (t == 2))]
            else:
                a, b = [ax for ax in range(3) if ax != t]
                ends = [tuple(np.add((x, y, z), np.eye(3, dtype=int)[a] * i + np.eye(3, dtype=int)[b] * j))
                        for i in (0, 1) for j in (0, 1)]
            inside = all(e[k] < shape[k] for e in ends for k in range(3))
            vals[c] = max(r[e] for e in ends) if inside else -1
        out[dim] = vals
    return out


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 4, 5), (3, 4, 5), (2, 1, 6), (4, 3, 7), (5, 5, 1)])
@pytest.mark.parametrize("fill", ["random", "zeros", "ones"])
def test_sorted_cells_of_two_levels_one_pass_is_the_stable_sort(shape, fill):
    """The binary one-pass path of sorted_cells (nvals == 2) against a NumPy lexsort, ties by index."""
    from segscore.kernels import betti as K

    rng = np.random.default_rng(sum(shape) + len(fill))
    r = {"random": rng.integers(0, 2, shape), "zeros": np.zeros(shape), "ones": np.ones(shape)}[fill]
    r = r.astype(np.int32)
    vals = _cell_values_brute(r)
    for dim in (1, 2):
        present = np.flatnonzero(vals[dim] >= 0)
        want = present[np.lexsort((present, vals[dim][present]))]
        got = K.sorted_cells(r.ravel(), *shape, dim, 2)
        assert got.dtype == np.int32
        assert got.tolist() == want.tolist()
        x, y, z = shape  # every cell of a binary image's complex is present: the counts by formula
        n_cells = ((x - 1) * y * z + x * (y - 1) * z + x * y * (z - 1) if dim == 1
                   else x * (y - 1) * (z - 1) + (x - 1) * y * (z - 1) + (x - 1) * (y - 1) * z)
        assert got.shape[0] == n_cells


@pytest.mark.parametrize("shape", [(1, 4, 5), (3, 4, 5), (2, 1, 6), (4, 3, 7), (3, 6, 2)])
def test_dual_sides_are_the_top_cells_beside_each_cell(shape):
    """_dual_sides (no division) names the same two top cells as face_cubes / edge_squares_2d once a
    voxel that starts no top cell is read as the outside (as dual_pairs links it)."""
    from segscore.kernels import betti as K

    nx, ny, nz = shape
    flat = nx == 1
    r = np.zeros(shape, np.int32).ravel()
    val = K.square_values_2d(r, ny, nz) if flat else K._cube_values(r, nx, ny, nz)
    out = val.shape[0] - 1
    vals = _cell_values_brute(r.reshape(shape))[1 if flat else 2]
    cells = np.flatnonzero(vals >= 0)
    assert cells.size > 0 or nx * ny * nz == 1

    def outside(q):
        return out if val[q] == K._OUT else q

    for c in cells:
        a, b = K._dual_sides(int(c), ny, nz, flat, out)
        want = K.edge_squares_2d(int(c), ny, nz) if flat else K.face_cubes(int(c), nx, ny, nz)
        assert sorted((outside(a), outside(b))) == sorted(want)


@pytest.mark.parametrize("n", [0, 1, 7, 4097])
def test_nodes32_is_arange_in_int32(n):
    from segscore.kernels import betti as K

    got = K._nodes32(n)
    assert got.dtype == np.int32 and got.flags.c_contiguous and got.flags.writeable
    assert np.array_equal(got, np.arange(n, dtype=np.int64))


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 4, 5), (3, 1, 4), (2, 3, 4), (4, 4, 1)])
@pytest.mark.parametrize("dim", [1, 2])
def test_the_cells_count_is_every_cell_of_the_complex(shape, dim):
    """``_n_cells`` (the binary sort's output, made before the kernel fills it) against a count of
    the cells the counting sort finds (three levels, so it takes the counting kernel)."""
    from segscore.kernels import betti as K

    r = np.random.default_rng(0).integers(0, 3, int(np.prod(shape))).astype(np.int32)
    assert K._n_cells(*shape, dim) == K.sorted_cells(r, *shape, dim, 3).shape[0]
    binary = np.minimum(r, 1)
    assert sorted(K.sorted_cells(binary, *shape, dim, 2)) == sorted(K.sorted_cells(binary, *shape, dim, 3))
