"""Generated volumes for the Betti-matching fixtures (seeded) and their recording with
Betti-Matching-3D: `PYTHONPATH=<its build dir> python record.py cases.npz`."""
import numpy as np

def sheets(rng, shape, n=2, thick=1, holes=3):
    nx, ny, nz = shape
    out = np.zeros(shape, bool)
    X, Y, Z = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    for _ in range(n):
        c = rng.uniform(0.2, 0.8) * nx
        a, b = rng.uniform(0.5, 2.0, 2)
        ph = rng.uniform(0, 6.3, 2)
        surf = c + a * np.sin(Y / ny * 6.3 + ph[0]) + b * np.cos(Z / nz * 6.3 + ph[1])
        out |= np.abs(X - surf) <= thick / 2 + 0.01
    for _ in range(holes):
        cy, cz = rng.integers(0, ny), rng.integers(0, nz)
        rad = rng.uniform(1, 2.5)
        out &= ~(((Y - cy) ** 2 + (Z - cz) ** 2) <= rad ** 2)
    return out

def tunnelled(rng, shape, n=3):
    out = np.zeros(shape, bool)
    nx, ny, nz = shape
    out[1:-1, 1:-1, 1:-1] = True
    for _ in range(n):
        ax = rng.integers(0, 3)
        i, j = rng.integers(2, min(shape) - 2, 2)
        sl = [slice(None)] * 3
        others = [d for d in range(3) if d != ax]
        sl[others[0]] = slice(i, i + 1)
        sl[others[1]] = slice(j, j + 1)
        out[tuple(sl)] = False
    return out

def hollow(rng, shape, n=2):
    out = np.zeros(shape, bool)
    for _ in range(n):
        lo = rng.integers(0, min(shape) // 2, 3)
        size = rng.integers(3, 6, 3)
        hi = np.minimum(lo + size, np.array(shape))
        out[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]] = True
        if (hi - lo).min() >= 3:
            out[lo[0] + 1:hi[0] - 1, lo[1] + 1:hi[1] - 1, lo[2] + 1:hi[2] - 1] = False
    return out

def perturb(rng, m, p=0.03):
    flip = rng.random(m.shape) < p
    return m ^ flip

def make_cases(seed=20261203):
    rng = np.random.default_rng(seed)
    cases = []
    def add(name, a, b):
        cases.append((name, np.ascontiguousarray(a), np.ascontiguousarray(b)))
    for i, (shape, p) in enumerate([((6, 7, 8), 0.5), ((10, 9, 11), 0.3), ((12, 12, 12), 0.6), ((9, 13, 7), 0.45), ((16, 15, 14), 0.5)]):
        add(f"random3d_{i}", rng.random(shape) < p, rng.random(shape) < p)
    for i in range(4):
        shape = (14, 16, 18) if i % 2 else (20, 17, 15)
        g = sheets(rng, shape, n=2 + i % 2, thick=1 + i % 2)
        add(f"sheets_{i}", perturb(rng, sheets(rng, shape, n=2, thick=1 + i % 2), 0.02), g)
    for i in range(3):
        shape = (12, 13, 14)
        g = tunnelled(rng, shape, 2 + i)
        add(f"tunnelled_{i}", perturb(rng, g, 0.03), g)
    for i in range(3):
        shape = (13, 12, 11)
        g = hollow(rng, shape, 2 + i)
        add(f"hollow_{i}", perturb(rng, g, 0.02), g)
    add("empty_both", np.zeros((7, 8, 9), bool), np.zeros((7, 8, 9), bool))
    add("empty_pred", np.zeros((7, 8, 9), bool), rng.random((7, 8, 9)) < 0.4)
    add("full_both", np.ones((5, 6, 7), bool), np.ones((5, 6, 7), bool))
    for i, (shape, p) in enumerate([((1, 20, 23), 0.5), ((1, 31, 29), 0.4), ((1, 16, 16), 0.6)]):
        add(f"random2d_{i}", rng.random(shape) < p, rng.random(shape) < p)
    add("thin_x2", rng.random((2, 9, 10)) < 0.5, rng.random((2, 9, 10)) < 0.5)
    add("line", rng.random((1, 1, 30)) < 0.5, rng.random((1, 1, 30)) < 0.5)
    # real-valued (the API): integers with many ties, and floats
    add("levels3d", rng.integers(0, 4, (8, 9, 10)).astype(float), rng.integers(0, 4, (8, 9, 10)).astype(float))
    add("float3d", rng.random((9, 8, 7)), rng.random((9, 8, 7)))
    add("levels2d", rng.integers(0, 3, (1, 17, 19)).astype(float), rng.integers(0, 3, (1, 17, 19)).astype(float))
    return cases


# ---- recording (run with Betti-Matching-3D's compiled module importable)

def _table(r, nd):
    out = {}
    for d in range(len(r.input1_matched_birth_coordinates)):
        def get(name):
            return np.asarray(getattr(r, name)[d]).reshape(-1, nd)
        matched = np.hstack([get("input1_matched_birth_coordinates"), get("input1_matched_death_coordinates"),
                             get("input2_matched_birth_coordinates"), get("input2_matched_death_coordinates")])
        un1 = np.hstack([get("input1_unmatched_birth_coordinates"), get("input1_unmatched_death_coordinates")])
        un2 = np.hstack([get("input2_unmatched_birth_coordinates"), get("input2_unmatched_death_coordinates")])
        out[d] = (matched, un1, un2)
    return out


def main(path):
    import betti_matching as bm  # Betti-Matching-3D, built from its public source

    store = {}
    for name, a, b in make_cases():
        if a.dtype == bool:  # binary cases enter as the topology score passes them: 1 - mask
            x, y = (~a).astype(np.float64), (~b).astype(np.float64)
        else:
            x, y = a.astype(np.float64), b.astype(np.float64)
        store[f"{name}/input0"] = a
        store[f"{name}/input1"] = b
        runs = [("3d", x, y)]
        if a.shape[0] == 1:
            runs.append(("2d", x[0], y[0]))
        for tag, xx, yy in runs:
            for d, (m, u1, u2) in _table(bm.compute_matching(xx, yy), xx.ndim).items():
                store[f"{name}/{tag}/dim{d}/matched"] = m.astype(np.int32)
                store[f"{name}/{tag}/dim{d}/unmatched0"] = u1.astype(np.int32)
                store[f"{name}/{tag}/dim{d}/unmatched1"] = u2.astype(np.int32)
    np.savez_compressed(path, **store)


if __name__ == "__main__":
    import sys

    main(sys.argv[1] if len(sys.argv) > 1 else "cases.npz")
