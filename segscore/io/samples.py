"""Small deterministic sample inputs of every kind the README and docs use, and their generators.

``segscore demo --keep DIR`` writes the demo's segment into ``DIR/seg`` and :func:`write_data`
writes ``DIR/data``, so every example of the README and docs runs as written from ``DIR``
(tests/test_docs.py runs them that way). The tests build their own cases with the same
generators. Everything here is synthetic, seeded and small (``write_data`` takes well under a
second and about 1 MB)::

    data/ink_target/            an ink target folder (gt_ink.png, mask.png, meta.json)
    data/ink_pred.png           a map that reads its ink; ink_pred2.png another one
    data/col_target/            a column target folder (columns.json, valid_mask.png, meta.json)
    data/col_pred.npy           a float32 map on its grid
    data/gt.png, gt2.png        vessel-tree masks; pred.png: gt.png shifted by a pixel
    data/truth.tif, pred.tif    instance label images (uint16) with misses, splits, merges
    data/fiber_target/          a fiber target folder (skeleton.npz, mask.npz, meta.json)
    data/fiber_labels.npy       instance labels on its cube; fiber_labels2.npy another
    data/nml/, fiber_mask.npy   an .nml tracing and its cube's mask (``fibers-target``'s inputs)
    data/heldout/, data/preds/  a held-out set (manifest.json, masks/) and predictions of its fields
    data/surf_gt.tif, surf_pred.tif, data/surf_gt/, data/surf_pred/   surface-detection volumes
    data/regions.json           train and predict regions (``check``)

Only numpy, Pillow and tifffile are used; nothing here imports a family.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

# ------------------------------------------------------------------------------------------
# images


def write_png(path, array):
    """``array`` (uint8 or bool-as-uint8) as a PNG at ``path``; returns ``path``."""
    from PIL import Image

    Image.fromarray(np.asarray(array)).save(path)
    return path


def _ball(image, center, radius, value, half=None):
    """Set the ball to ``value`` (only its part with first coordinate below the centre when
    ``half == "low"``, the rest when ``"high"``), touching only its bounding box."""
    box = tuple(slice(max(0, c - radius), min(s, c + radius + 1)) for c, s in zip(center, image.shape))
    if any(b.start >= b.stop for b in box):
        return
    grids = np.ogrid[box]
    m = sum((g - c) ** 2 for g, c in zip(grids, center)) <= radius ** 2
    if half is not None:
        m = m & ((grids[0] < center[0]) if half == "low" else (grids[0] >= center[0]))
    image[box][m] = value


def synthetic_pair(shape=(256, 256), n=60, seed=0, r=(4, 10), p_miss=0.1, p_split=0.1, p_merge=0.1,
                   n_fp=5, jitter=2, dtype=np.int32):
    """``(truth, pred)`` label images of ~``n`` balls with misses, splits, merges and false positives.

    Objects are painted in turn (later ones over earlier), ids shuffled and non-consecutive.
    """
    rng = np.random.default_rng(seed)
    truth = np.zeros(shape, dtype)
    pred = np.zeros(shape, dtype)
    t_ids = rng.choice(np.arange(1, 50 * n), size=n, replace=False)
    p_next = iter(rng.choice(np.arange(1, 100 * n), size=4 * n + n_fp, replace=False))
    centers = [rng.integers(0, s, n) for s in shape]
    radii = rng.integers(r[0], r[1] + 1, n)
    prev = None
    for k in range(n):
        c = tuple(int(cc[k]) for cc in centers)
        rad = int(radii[k])
        _ball(truth, c, rad, t_ids[k])
        u = rng.random()
        if u < p_miss:
            continue
        c2 = tuple(int(x + rng.integers(-jitter, jitter + 1)) for x in c)
        r2 = max(1, rad + int(rng.integers(-1, 2)))
        if u < p_miss + p_split:  # split along the first axis through the centre
            _ball(pred, c2, r2, next(p_next), half="low")
            _ball(pred, c2, r2, next(p_next), half="high")
        elif u < p_miss + p_split + p_merge and prev is not None:  # merged with the previous prediction
            _ball(pred, c2, r2, prev)
        else:
            prev = next(p_next)
            _ball(pred, c2, r2, prev)
    for _ in range(n_fp):
        c = tuple(int(rng.integers(0, s)) for s in shape)
        _ball(pred, c, int(rng.integers(r[0], r[1] + 1)), next(p_next))
    return truth, pred


def disk_line(mask, a, b, r):
    """Stamp balls of radius r along a -> b (2D or 3D) into the bool ``mask``; returns it."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    n = max(int(np.ceil(np.linalg.norm(b - a) * 2)), 1)
    for t in np.linspace(0, 1, n + 1):
        c = a + (b - a) * t
        lo = [max(int(np.floor(x - r)), 0) for x in c]
        hi = [min(int(np.ceil(x + r)) + 1, s) for x, s in zip(c, mask.shape)]
        sl = tuple(slice(p, q) for p, q in zip(lo, hi))
        sub = sum((g - x) ** 2 for g, x in zip(np.ogrid[sl], c)) <= r * r
        mask[sl] |= sub
    return mask


def vessel_tree(shape=(128, 128), seed=0, depth=4, r0=4.0, reach=0.35):
    """A random branching tree of tubes (2D or 3D), radii shrinking by 0.75 per level; the first
    branch is ``reach`` of the shortest side long, each level 0.8 times shorter."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(shape, dtype=bool)
    nd = len(shape)
    start = np.array([s * 0.5 for s in shape])
    start[0] = 2
    direction = np.zeros(nd)
    direction[0] = 1.0

    def grow(p, d, r, level):
        length = min(shape) * reach * (0.8**level)
        q = p + d * length
        q = np.clip(q, 1, np.array(shape) - 2)
        disk_line(mask, p, q, max(r, 1.0))
        if level >= depth:
            return
        for sgn in (-1, 1):
            v = rng.normal(size=nd)
            v -= v.dot(d) * d
            v /= np.linalg.norm(v) + 1e-12
            nd_ = d * 0.7 + sgn * v * 0.7
            nd_ /= np.linalg.norm(nd_)
            grow(q, nd_, r * 0.75, level + 1)

    grow(start, direction, r0, 0)
    return mask


# ------------------------------------------------------------------------------------------
# ink and column targets (ScrollGT's layout)


def ink_target(folder, shape=(48, 64), seed=0, ink_rate=0.25, mask=True, meta=None, region=None):
    """An ink target folder (gt_ink.png, optional mask.png, meta.json); returns (folder, ink, mask)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ink = rng.random(shape) < ink_rate
    gt = np.where(ink, rng.integers(128, 256, shape), rng.integers(0, 128, shape)).astype(np.uint8)
    write_png(folder / "gt_ink.png", gt)
    m = np.ones(shape, bool)
    if mask:
        m = rng.random(shape) < 0.8
        write_png(folder / "mask.png", np.where(m, 255, 0).astype(np.uint8))
    info = {"target_id": folder.name,
            "region": region or {"y0": 100, "x0": 200, "size": shape[0]},
            "registration": {"median_residual": 7.5,
                             "placement": {"offset_level2_px": 10.0, "offset_mm": 0.1, "passed": True,
                                           "gate_threshold_level2_px": 48.0}}}
    if meta:
        for k, v in meta.items():
            info[k] = v
    (folder / "meta.json").write_text(json.dumps(info))
    return folder, ink, m


def reading_map(ink, seed=1, dtype=np.uint8, signal=0.35):
    """A prediction that reads the ink, with many ties for uint8."""
    rng = np.random.default_rng(seed)
    p = np.clip(rng.random(ink.shape) * (1 - signal) + signal * ink, 0, 1)
    if dtype == np.uint8:
        return np.rint(p * 255).astype(np.uint8)
    if dtype == np.uint16:
        return np.rint(p * 65535).astype(np.uint16)
    return p.astype(dtype)


#: the column target's grid, line pitch and columns (col, gx0, gx1, text_band, status, cross_strip)
COLUMN_GRID = (260, 700)
COLUMN_PITCH = 20
COLUMNS = [
    (1, 10, 90, (30, 230), "traces", False),
    (2, 120, 200, (25, 235), "text", False),
    (3, 230, 310, (20, 240), "text", False),
    (4, 340, 420, (30, 225), "text", True),
    (5, 450, 530, (30, 230), "text", False),
    (6, 560, 640, (35, 230), "text", False),
    (7, 650, 690, (40, 200), "traces", False),
]


def column_target(folder, seed=0, with_mask=True):
    """A column target folder (columns.json, meta.json, valid_mask.png) with planted columns and a
    gap in its valid mask; returns (folder, valid mask)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cols = [{"col": c, "gx0": x0, "gx1": x1, "text_band": list(band), "transcription": st, "cross_strip": cs}
            for c, x0, x1, band, st, cs in COLUMNS]
    (folder / "columns.json").write_text(json.dumps({"columns": cols}))
    meta = {"target_id": folder.name, "geometry": {"grid_shape": list(COLUMN_GRID)}, "line_pitch_range": [15, 30]}
    (folder / "meta.json").write_text(json.dumps(meta))
    rng = np.random.default_rng(seed)
    valid = rng.random(COLUMN_GRID) < 0.9
    valid[:, 95:115] = False  # a gap
    if with_mask:
        write_png(folder / "valid_mask.png", np.where(valid, 255, 0).astype(np.uint8))
    return folder, valid


def column_reading(seed=1, strength=0.3):
    """A map whose text columns are brighter than the gutters, with text lines every
    :data:`COLUMN_PITCH` rows."""
    rng = np.random.default_rng(seed)
    p = rng.random(COLUMN_GRID) * 0.4
    rows = np.arange(COLUMN_GRID[0])
    lines = 0.5 + 0.5 * np.cos(2 * np.pi * rows / COLUMN_PITCH)
    for _, x0, x1, (y0, y1), st, _ in COLUMNS:
        boost = strength if st == "text" else strength / 3
        p[y0:y1, x0:x1] += boost * lines[y0:y1, None]
    return np.clip(p, 0, 1)


# ------------------------------------------------------------------------------------------
# fiber targets and tracings


def fiber_target(folder, fibers, mask, *, tolerance=2.0, size_class=None, floors=None, extra_meta=None,
                 names=True):
    """Write a fiber target directory from ``[(coords, local edges)]`` and a bool mask."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    coords = np.concatenate([np.asarray(c, np.float32).reshape(-1, 3) for c, _ in fibers])
    f_off = np.concatenate([[0], np.cumsum([len(c) for c, _ in fibers])]).astype(np.int64)
    e_off = np.concatenate([[0], np.cumsum([len(e) for _, e in fibers])]).astype(np.int64)
    edges = np.concatenate([np.asarray(e, np.int64).reshape(-1, 2) + f_off[i]
                            for i, (_, e) in enumerate(fibers)]).astype(np.int32)
    arrays = dict(coords=coords, edges=edges, fiber_offsets=f_off, edge_offsets=e_off,
                  fiber_ids=np.arange(len(fibers), dtype=np.int64) + 100,
                  scale_um=np.array([7.91] * 3), origin_zyx=np.zeros(3, np.int64),
                  shape=np.asarray(mask.shape, np.int64))
    if names:
        arrays["fiber_names"] = np.array([f"fiber {i}" for i in range(len(fibers))], dtype=object)
    np.savez(folder / "skeleton.npz", **arrays)
    np.savez(folder / "mask.npz", packed=np.packbits(mask.ravel()), shape=np.asarray(mask.shape, np.int64))
    meta = {"target_id": folder.name, "split": "primary", "size_class": size_class or mask.shape[0],
            "shape": list(mask.shape), "tolerance": tolerance, "floors": floors or {}}
    meta.update(extra_meta or {})
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def random_fibers(rng, shape, n_fibers, *, branch=True, outside=True):
    """Random polyline fibers (integer nodes), some branching, some leaving the cube."""
    fibers = []
    lo = -3 if outside else 0
    for _ in range(n_fibers):
        n = int(rng.integers(2, 8))
        start = rng.integers(lo, np.asarray(shape) - lo)
        steps = rng.integers(-3, 4, size=(n - 1, 3))
        c = np.concatenate([[start], start + np.cumsum(steps, axis=0)]).astype(np.float64)
        e = [(i, i + 1) for i in range(n - 1)]
        if branch and n > 3 and rng.random() < 0.5:
            j = int(rng.integers(1, n - 1))
            c = np.concatenate([c, [c[j] + rng.integers(-3, 4, 3)]])
            e.append((j, n))
        if rng.random() < 0.3:
            rng.shuffle(e)
        fibers.append((c, np.asarray(e, np.int64)))
    return fibers


#: the sample tracing's cube: its origin (z, y, x scroll voxels), shape and name
NML_ORIGIN = (500, 600, 700)
NML_SHAPE = (16, 16, 16)
NML_CUBE = "s1_00500_00600_00700_16"
#: its fibers: (tree id, name, nodes z, y, x in cube voxels, edges as local indices)
NML_FIBERS = [
    (11, "fiber a", [[4, 4, 2], [4, 4, 8], [4, 4, 14]], [[0, 1], [1, 2]]),
    (12, "fiber b", [[9, 10, 3], [9, 10, 12], [5, 10, 13]], [[1, 0], [1, 2]]),
    (13, "mostly outside", [[-5, -5, -5], [1, 1, 1], [-6, -6, -6]], [[0, 1], [1, 2]]),
]


def nml_text(fibers, origin, *, scale=True, first_node=1):
    """An NML document of ``fibers`` (coordinates in cube voxels), nodes in absolute scroll
    voxels (x, y, z attributes), node ids counted from ``first_node``."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<things>"]
    if scale:
        out.append('  <parameters><scale x="7.91" y="7.91" z="7.91" unit="micrometer"/></parameters>')
    nid = first_node
    for tid, name, nodes, edges in fibers:
        out.append(f'  <thing id="{tid}" name="{name}"><nodes>')
        ids = []
        for z, y, x in np.asarray(nodes, np.float64) + np.asarray(origin, np.float64):
            out.append(f'    <node id="{nid}" radius="1.0" x="{x:g}" y="{y:g}" z="{z:g}"/>')
            ids.append(nid)
            nid += 1
        out.append("  </nodes><edges>")
        out.extend(f'    <edge source="{ids[s]}" target="{ids[t]}"/>' for s, t in edges)
        out.append("  </edges></thing>")
    out.append("</things>")
    return "\n".join(out) + "\n"


def nml_mask():
    """The sample tracing's cube mask (bool, :data:`NML_SHAPE`): the fibers' voxels, roughly."""
    mask = np.zeros(NML_SHAPE, bool)
    mask[4, 3:6, :] = True
    mask[9, 10, 3:] = True
    mask[5:10, 10, 12:14] = True
    return mask


# ------------------------------------------------------------------------------------------
# the docs' data folder


def write_data(folder) -> Path:
    """Write every input the README and docs name into ``folder`` (created; files there are
    overwritten, others left alone); returns it. Deterministic: the same bytes on every run."""
    import tifffile

    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    _, tink, _ = ink_target(d / "ink_target")
    write_png(d / "ink_pred.png", reading_map(tink))
    write_png(d / "ink_pred2.png", reading_map(tink, seed=2))
    column_target(d / "col_target")
    np.save(d / "col_pred.npy", np.random.default_rng(2).random(COLUMN_GRID).astype(np.float32))
    gt = vessel_tree((96, 96), seed=3)
    write_png(d / "gt.png", gt.astype(np.uint8) * 255)
    write_png(d / "gt2.png", vessel_tree((96, 96), seed=4).astype(np.uint8) * 255)
    write_png(d / "pred.png", np.roll(gt, 1, axis=1).astype(np.uint8) * 255)
    t, p = synthetic_pair(shape=(96, 96), n=12, seed=4)
    tifffile.imwrite(d / "truth.tif", t.astype(np.uint16))
    tifffile.imwrite(d / "pred.tif", p.astype(np.uint16))
    rng = np.random.default_rng(5)
    shape = (16, 16, 16)
    fiber_target(d / "fiber_target", random_fibers(rng, shape, 3), np.ones(shape, bool))
    np.save(d / "fiber_labels.npy", (rng.random(shape) < 0.2).astype(np.int32))
    np.save(d / "fiber_labels2.npy", (rng.random(shape) < 0.1).astype(np.int32))
    (d / "nml").mkdir(exist_ok=True)
    (d / "nml" / f"{NML_CUBE}.nml").write_text(nml_text(NML_FIBERS, NML_ORIGIN))
    np.save(d / "fiber_mask.npy", nml_mask())
    hold = d / "heldout"
    (hold / "masks").mkdir(parents=True, exist_ok=True)
    (d / "preds").mkdir(exist_ok=True)
    fields = []
    for k in range(2):
        t, p = synthetic_pair(shape=(64, 64), n=6, seed=10 + k)
        tifffile.imwrite(hold / "masks" / f"f{k}.tif", t.astype(np.uint16))
        tifffile.imwrite(hold / f"f{k}_image.tif", (t > 0).astype(np.uint8) * 200)
        tifffile.imwrite(d / "preds" / f"f{k}.tif", p.astype(np.uint16))
        digest = hashlib.sha256((hold / "masks" / f"f{k}.tif").read_bytes()).hexdigest()
        fields.append({"image": f"f{k}_image.tif", "truth": f"masks/f{k}.tif", "sha256": digest})
    (hold / "manifest.json").write_text(json.dumps({"name": "nuclei-heldout", "version": "1", "fields": fields},
                                                   indent=1))
    surf = np.zeros((20, 24, 24), np.uint8)  # two sheets, the second broken by a hole
    surf[3, 2:22, 2:22] = 1
    surf[7, 2:22, 2:22] = 1
    pred = surf.copy()
    pred[7, 4:7, 4:7] = 0
    pred[4, 2:22, 2:22] = 1  # a thicker first sheet
    tifffile.imwrite(d / "surf_gt.tif", surf)
    tifffile.imwrite(d / "surf_pred.tif", pred)
    for sub, vol in (("surf_gt", surf), ("surf_pred", pred)):
        (d / sub).mkdir(exist_ok=True)
        tifffile.imwrite(d / sub / "case1.tif", vol)
    (d / "regions.json").write_text(json.dumps({
        "train_regions": [{"y0": 0, "x0": 0, "h": 100, "w": 120, "volume": "v"}],
        "predict_region": {"y0": 200, "x0": 200, "h": 60, "w": 80, "volume": "v"}}))
    return d
