"""A synthetic column target: columns with planted line periodicity, gutters, a valid mask."""

import json

import numpy as np

GRID = (260, 700)
PITCH = 20
COLUMNS = [  # col, gx0, gx1, text_band, status, cross_strip
    (1, 10, 90, (30, 230), "traces", False),
    (2, 120, 200, (25, 235), "text", False),
    (3, 230, 310, (20, 240), "text", False),
    (4, 340, 420, (30, 225), "text", True),
    (5, 450, 530, (30, 230), "text", False),
    (6, 560, 640, (35, 230), "text", False),
    (7, 650, 690, (40, 200), "traces", False),
]


def make_column_target(folder, seed=0, with_mask=True):
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    cols = [{"col": c, "gx0": x0, "gx1": x1, "text_band": list(band), "transcription": st, "cross_strip": cs}
            for c, x0, x1, band, st, cs in COLUMNS]
    (folder / "columns.json").write_text(json.dumps({"columns": cols}))
    meta = {"target_id": folder.name, "geometry": {"grid_shape": list(GRID)}, "line_pitch_range": [15, 30]}
    (folder / "meta.json").write_text(json.dumps(meta))
    rng = np.random.default_rng(seed)
    valid = rng.random(GRID) < 0.9
    valid[:, 95:115] = False  # a gap
    if with_mask:
        Image.fromarray(np.where(valid, 255, 0).astype(np.uint8)).save(folder / "valid_mask.png")
    return folder, valid


def reading_prediction(seed=1, strength=0.3):
    """Text columns brighter than gutters, with text lines every PITCH rows."""
    rng = np.random.default_rng(seed)
    p = rng.random(GRID) * 0.4
    rows = np.arange(GRID[0])
    lines = 0.5 + 0.5 * np.cos(2 * np.pi * rows / PITCH)
    for c, x0, x1, (y0, y1), st, _ in COLUMNS:
        boost = strength if st == "text" else strength / 3
        p[y0:y1, x0:x1] += boost * lines[y0:y1, None]
    return np.clip(p, 0, 1)
