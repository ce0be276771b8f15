"""Small synthetic ScrollGT-style targets for the target tests."""

import json

import numpy as np


def write_png(path, array):
    from PIL import Image

    Image.fromarray(np.asarray(array)).save(path)
    return path


def make_target(folder, shape=(48, 64), seed=0, ink_rate=0.25, mask=True, meta=None, region=None):
    """A target folder (gt_ink.png, optional mask.png, meta.json); returns (folder, ink, mask)."""
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
