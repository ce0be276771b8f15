"""The surface-detection score computed with the peers' own code, for parity fixtures and the
benchmark: Betti-Matching-3D's ``betti_matching.compute_matching``, DeepMind's
``surface_distance``, ``cc3d`` and scikit-image's ``variation_of_information``, composed as
the topometrics toolkit's ``compute_leaderboard_score`` does (ignore -> binarize -> TopoScore
on 2 x 2 x 2 tiles -> surface Dice -> VOI on the union of foregrounds -> weighted sum).

Runs in a scratch venv holding those packages (segscore is not imported here):

    python benchmarks/surfaces_peer.py record tests/data/surfaces/cases.json   # parity fixtures
    python benchmarks/surfaces_peer.py score PRED.npy GT.npy                    # one pair, JSON out
    python benchmarks/surfaces_peer.py stages PRED.npy GT.npy 3                 # seconds per stage

``cases()`` (numpy only) is shared with the tests, which regenerate the volumes from it.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

SEED = 20261203


# ---- generated cases (numpy only)


def sheet_volume(rng, shape, n_sheets=3, thick=2.0, holes=0, wobble=3.0):
    """Wavy sheets across the first axis, like papyrus surfaces; ``holes`` punched through."""
    nz, ny, nx = shape
    z = np.arange(nz)[:, None, None]
    y = np.arange(ny)[None, :, None]
    x = np.arange(nx)[None, None, :]
    out = np.zeros(shape, bool)
    for i in range(n_sheets):
        c = (i + 0.5) * nz / n_sheets
        fy, fx = rng.uniform(0.5, 2.0, 2) * 2 * np.pi
        py, px = rng.uniform(0, 2 * np.pi, 2)
        surf = c + wobble * np.sin(y / ny * fy + py) * np.cos(x / nx * fx + px)
        out |= np.abs(z - surf) <= thick / 2
    for _ in range(holes):
        cy, cx = rng.integers(0, ny), rng.integers(0, nx)
        r = rng.uniform(1.5, 4)
        out &= ~((y - cy) ** 2 + (x - cx) ** 2 <= r * r)
    return out


def cases():
    """``[(name, pred, gt, options)]``: merges, splits, holes, cavities, specks, empty volumes,
    the ignore label, anisotropic spacing and a thresholded probability map."""
    rng = np.random.default_rng(SEED)
    out = []
    shape = (24, 28, 30)
    g = sheet_volume(rng, shape, 3, 2.0)
    out.append(("identical", g.copy(), g.copy(), {}))
    p = g.copy()
    p[:, 10:12, :] = False  # splits every sheet
    out.append(("split", p, g.copy(), {}))
    p = g.copy()
    p[:, 5:7, 5:25] = True  # a wall merging the sheets
    out.append(("merge", p, g.copy(), {}))
    p = sheet_volume(np.random.default_rng(1), shape, 3, 2.0, holes=4)
    out.append(("holes", p, g.copy(), {}))
    h = np.zeros(shape, bool)
    h[4:14, 5:15, 6:18] = True
    h[6:12, 7:13, 8:16] = False  # a cavity
    h2 = h.copy()
    h2[8:10, 9:11, 10:12] = True  # a speck inside the cavity
    out.append(("cavity", h2, h.copy(), {}))
    out.append(("cavity_whole", h2, h.copy(), {"topo_tiles": [1, 1, 1]}))
    h3 = np.zeros(shape, bool)
    h3[2:20, 3:25, 2:28] = True
    h3[4:10, 5:12, 4:12] = False
    h3[12:18, 14:22, 15:25] = False
    h4 = h3.copy()
    h4[12:18, 14:22, 15:25] = True  # one cavity filled
    h4[3, 3:25, 2:28] = False  # and a slit
    out.append(("cavities_whole", h4, h3, {"topo_tiles": [1, 1, 1]}))
    p = g.copy()
    specks = rng.random(shape) < 0.01
    p |= specks
    p &= ~(rng.random(shape) < 0.01)
    out.append(("specks", p, g.copy(), {}))
    out.append(("empty_both", np.zeros(shape, bool), np.zeros(shape, bool), {}))
    out.append(("empty_pred", np.zeros(shape, bool), g.copy(), {}))
    out.append(("empty_gt", g.copy(), np.zeros(shape, bool), {}))
    lab = g.astype(np.uint8)
    lab[:, :, 20:] = np.where(lab[:, :, 20:] == 1, 2, lab[:, :, 20:])  # unlabelled band: ignore
    lab[0:3] = 2
    p = sheet_volume(np.random.default_rng(2), shape, 3, 2.0, holes=2)
    out.append(("ignore_label", p, lab, {}))
    out.append(("anisotropic", p, g.copy(), {"spacing": [2.0, 0.7, 0.7], "tolerance": 1.5}))
    prob = np.clip(g * 0.8 + rng.normal(0, 0.25, shape), 0, 1).astype(np.float32)
    out.append(("probability", prob, g.copy(), {"fg_threshold": 0.5}))
    out.append(("voi_6_exp", p, g.copy(), {"voi_connectivity": 6, "voi_transform": "exp", "voi_alpha": 0.5}))
    out.append(("odd_shape", p[:23, :27, :29], g[:23, :27, :29].copy(), {"voi_connectivity": 18}))
    rnd = rng.random(shape) < 0.35
    out.append(("random", rnd, rng.random(shape) < 0.35, {}))
    out.append(("whole_volume", p, g.copy(), {"topo_tiles": [1, 1, 1]}))
    out.append(("slice_2d", p[5], g[5].copy(), {}))
    return out


# ---- the peers' pipeline


def _binarize(x, threshold):
    a = np.nan_to_num(np.asarray(x), nan=0.0)
    return a != 0 if threshold is None else a > float(threshold)


def _cuts(n, parts):
    parts = max(1, min(parts, n if n > 0 else 1))
    base, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def peer_score(pred, gt, *, ignore_label=2, ignore_mask=None, fg_threshold=None, tolerance=2.0,
               spacing=(1.0, 1.0, 1.0), voi_connectivity=26, voi_alpha=0.3,
               voi_transform="one_over_one_plus", weights=(0.3, 0.35, 0.35),
               topo_weights=(0.34, 0.33, 0.33), topo_tiles=(2, 2, 2)):
    import betti_matching as bm
    import cc3d
    import surface_distance as sd
    from skimage.metrics import variation_of_information

    pr = np.asarray(pred)
    gt = np.asarray(gt)
    if pr.ndim == 2:
        pr, gt = pr[None], gt[None]
        spacing = (1.0,) + tuple(spacing)[-2:] if len(spacing) == 2 else tuple(spacing)
    ign = np.asarray(ignore_mask, bool) if ignore_mask is not None else (
        gt == ignore_label if ignore_label is not None else np.zeros(gt.shape, bool))
    pb = _binarize(np.where(ign, 0, pr), fg_threshold)
    gb = _binarize(np.where(ign, 0, gt), fg_threshold)

    counts = {k: [0, 0, 0] for k in range(3)}
    zc, yc, xc = (_cuts(n, t) for n, t in zip(pb.shape, topo_tiles))
    for z0, z1 in zc:
        for y0, y1 in yc:
            for x0, x1 in xc:
                tp = (~pb[z0:z1, y0:y1, x0:x1]).astype(np.uint8)
                tg = (~gb[z0:z1, y0:y1, x0:x1]).astype(np.uint8)
                r = bm.compute_matching(tp, tg)
                for k in range(3):
                    def n(name):
                        seq = getattr(r, name)
                        return len(seq[k]) if k < len(seq) else 0
                    m = n("input1_matched_birth_coordinates")
                    counts[k][0] += m
                    counts[k][1] += m + n("input1_unmatched_birth_coordinates")
                    counts[k][2] += m + n("input2_unmatched_birth_coordinates")
    f1 = {}
    active = []
    for k in range(3):
        m, p, g = counts[k]
        if p + g > 0:
            f1[k] = 2.0 * m / (p + g) if g != 0 else 0.5 / (p + g + 0.5)
            active.append(k)
        else:
            f1[k] = None
    if not active:
        topo = 1.0
    else:
        w = np.array([topo_weights[k] for k in active], float)
        if not np.isfinite(w).all() or w.sum() <= 0:
            w = np.ones(len(active))
        w = w / w.sum()
        topo = float((w * np.array([f1[k] for k in active])).sum())

    if not gb.any() and not pb.any():
        sdice = 1.0
    elif gb.any() ^ pb.any():
        sdice = 0.0
    else:
        sdice = float(sd.compute_surface_dice_at_tolerance(
            sd.compute_surface_distances(gb, pb, tuple(float(s) for s in spacing)), tolerance))

    union = gb | pb
    if not union.any():
        split = merge = 0.0
    else:
        gl = cc3d.connected_components(gb.astype(np.uint8), connectivity=voi_connectivity)
        pl = cc3d.connected_components(pb.astype(np.uint8), connectivity=voi_connectivity)
        m = (gl > 0) | (pl > 0)
        split, merge = (float(v) for v in variation_of_information(gl[m], pl[m]))
    total = split + merge
    vscore = math.exp(-voi_alpha * total) if voi_transform == "exp" else 1.0 / (1.0 + voi_alpha * total)
    ww = [0.0 if (not math.isfinite(x) or x < 0) else float(x) for x in weights]
    s = sum(ww)
    ww = [x / s for x in ww] if s > 0 else [1 / 3] * 3
    board = ww[0] * topo + ww[1] * sdice + ww[2] * vscore
    return {"leaderboard": board, "toposcore": topo, "topoF1_0": f1[0], "topoF1_1": f1[1], "topoF1_2": f1[2],
            "surface_dice": sdice, "voi_score": vscore, "voi_total": total, "voi_split": split,
            "voi_merge": merge,
            "topology": {f"dim{k}": {"matched": counts[k][0], "pred": counts[k][1], "gt": counts[k][2]}
                         for k in range(3)}}


def stages(pred, gt, calls=3):
    """Seconds per stage of the peers' pipeline on one pair (default options), and of whole
    ``peer_score`` calls (the median of ``calls``): the benchmark's per-stage table."""
    import time

    import betti_matching as bm
    import cc3d
    import surface_distance as sd
    from skimage.metrics import variation_of_information

    out, cpu = {}, {}
    t, c = time.perf_counter(), time.process_time()
    pr, g = np.asarray(pred), np.asarray(gt)
    ign = g == 2
    pb = _binarize(np.where(ign, 0, pr), None)
    gb = _binarize(np.where(ign, 0, g), None)
    out["ignore+binarize"] = time.perf_counter() - t
    cpu["ignore+binarize"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    for z0, z1 in _cuts(pb.shape[0], 2):
        for y0, y1 in _cuts(pb.shape[1], 2):
            for x0, x1 in _cuts(pb.shape[2], 2):
                bm.compute_matching((~pb[z0:z1, y0:y1, x0:x1]).astype(np.uint8),
                                    (~gb[z0:z1, y0:y1, x0:x1]).astype(np.uint8))
    out["betti matching"] = time.perf_counter() - t
    cpu["betti matching"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    d = sd.compute_surface_distances(gb, pb, (1.0, 1.0, 1.0))
    sd.compute_surface_dice_at_tolerance(d, 2.0)
    out["surface dice"] = time.perf_counter() - t
    cpu["surface dice"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    gl = cc3d.connected_components(gb.astype(np.uint8), connectivity=26)
    pl = cc3d.connected_components(pb.astype(np.uint8), connectivity=26)
    out["components"] = time.perf_counter() - t
    cpu["components"] = time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    m = (gl > 0) | (pl > 0)
    variation_of_information(gl[m], pl[m])
    out["voi"] = time.perf_counter() - t
    cpu["voi"] = time.process_time() - c
    per_call = []
    c = time.process_time()
    for _ in range(calls):
        t = time.perf_counter()
        peer_score(pr, g)
        per_call.append(time.perf_counter() - t)
    out["call"] = sorted(per_call)[len(per_call) // 2]
    cpu["call"] = (time.process_time() - c) / calls  # the mean
    out["cpu"] = cpu  # process CPU seconds of each stage (all threads)
    return out


def record(path):
    out = {}
    for name, p, g, opts in cases():
        out[name] = {"options": opts, "result": peer_score(p, g, **opts)}
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2])
    elif sys.argv[1] == "score":
        r = peer_score(np.load(sys.argv[2], mmap_mode="r"), np.load(sys.argv[3], mmap_mode="r"))
        print(json.dumps(r))
    elif sys.argv[1] == "stages":
        print(json.dumps(stages(np.load(sys.argv[2]), np.load(sys.argv[3]), int(sys.argv[4]))))
