"""Small synthetic segments for the ink tests."""

import numpy as np


def write_levels(path, planes: dict, zarr_format=3, chunks=None):
    """A zarr group whose keys are levels (``{"2": array, ...}``)."""
    import zarr

    group = zarr.open_group(str(path), mode="w", zarr_format=zarr_format)
    for key, data in planes.items():
        arr = group.create_array(key, shape=data.shape, dtype=data.dtype, chunks=chunks or data.shape)
        arr[...] = data
    return str(path)


def segment(shape=(60, 80), seed=0, ink_rate=0.2, mask_rate=0.85, dtype=np.uint8, levels=40):
    """A map, ink and mask on one grid; the map reads the ink, with many ties."""
    rng = np.random.default_rng(seed)
    ink = rng.random(shape) < ink_rate
    mask = rng.random(shape) < mask_rate
    raw = rng.integers(0, levels, shape) + ink * rng.integers(0, levels // 2, shape)
    if np.dtype(dtype).kind == "f":
        pred = (raw / raw.max()).astype(dtype)
    else:
        pred = raw.astype(dtype)
    pred[rng.random(shape) < 0.05] = 0
    return pred, ink, mask
