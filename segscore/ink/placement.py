"""Placement probe: does the label agree with the prediction best at zero shift?

A tight registration residual is not a placement check (ScrollGT shipped an ~8-voxel
residual beside a ~1766-voxel displacement). This probe measures placement directly:

- ``a`` (the prediction as probabilities) and ``b`` (the label, 0/1) are made zero-mean inside
  the mask and zero outside it, in float32;
- for every shift ``s = (dy, dx)`` with ``|dy|, |dx| <= radius``,
  ``ncc(s) = sum(a * numpy.roll(b, s)) / (|a| |b|)``, computed at once by FFT (circular
  correlation is exactly ``numpy.roll``'s shift);
- the peak ``(peak_dy, peak_dx)`` is the shift that, applied to the label with ``numpy.roll``,
  best matches the prediction; ``offset_px`` is its length, and ``passed`` is
  ``offset_px <= gate_px``;
- per ``tile_px`` tile (a grid from pixel (0, 0), edge tiles included) whose in-mask ink
  fraction is at least ``min_ink``: the same peak for that tile's prediction pixels against
  the (rolled) label around it, over shifts up to ``tile_radius``, normalised by the label's
  energy under the tile at each shift; ``tile_sd_dy``/``tile_sd_dx`` are the population
  standard deviations of the tile peaks and ``worst_tile_px`` the longest one.

No registration residual is read or reported here.
"""

from __future__ import annotations

import os

import numpy as np

from segscore.errors import ScoreError, moved
from segscore.io.results import as_result

__all__ = ["probe", "probe_target", "evidence_image", "write_evidence", "format_probe", "DEFAULT_GATE_PX"]

DEFAULT_GATE_PX = 48.0
DEFAULT_RADIUS = 512
TILE_PX = 768
TILE_RADIUS = 192
MIN_INK = 0.01


def _as_prob(arr, name: str = "the prediction") -> np.ndarray:
    a = np.asarray(arr)
    if a.dtype == np.uint8:
        return a.astype(np.float32) / np.float32(255)
    if a.dtype == np.uint16:
        return a.astype(np.float32) / np.float32(65535)
    a = a.astype(np.float32)
    if not np.all(np.isfinite(a)):
        raise ScoreError(f"{name}: holds NaN or infinite values; replace them (0 for no ink) first")
    return a


def _centred(x: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    if mask is None:
        return x - np.float32(x.mean(dtype=np.float64))
    n = int(mask.sum())
    mean = np.float32(x[mask].mean(dtype=np.float64)) if n else np.float32(0)
    out = x - mean
    out[~mask] = 0
    return out


def _shift_index(n: int, r: int) -> np.ndarray:
    """Indices of shifts -r..r (as 0..r, then n-r..n-1) in a circular correlation of length n."""
    return np.r_[0:r + 1, n - r:n] if r else np.array([0])


def _signed(i: int, n: int) -> int:
    return i - n if i > n // 2 else i


def _peak(score: np.ndarray, r_y: int, r_x: int):
    """Best (dy, dx) with |dy| <= r_y, |dx| <= r_x of a circular correlation ``score``."""
    h, w = score.shape
    ys, xs = _shift_index(h, r_y), _shift_index(w, r_x)
    sub = score[np.ix_(ys, xs)]
    i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
    return _signed(int(ys[i]), h), _signed(int(xs[j]), w), float(sub[i, j])


def _xcorr(a: np.ndarray, b: np.ndarray, workers: int) -> np.ndarray:
    """``c[s] = sum_x a[x] b[x - s]`` (circular), float32."""
    from scipy import fft

    fa = fft.rfft2(a, workers=workers)
    fb = fft.rfft2(b, workers=workers)
    np.conjugate(fb, out=fb)
    fa *= fb
    del fb
    return fft.irfft2(fa, s=a.shape, workers=workers)


@as_result
def probe(prediction, label, mask=None, *, radius: int = DEFAULT_RADIUS, gate_px: float = DEFAULT_GATE_PX,
          tile_px: int = TILE_PX, tile_radius: int = TILE_RADIUS, min_ink: float = MIN_INK, tiles: bool = True,
          threads: int | None = None, workers: int | None = None) -> dict:
    """Placement of ``label`` against ``prediction`` (same-shape 2D arrays; ``mask`` optional).

    The cross-correlation is global by nature (FFTs of the whole map, about 40 bytes a pixel):
    it is not tiled. ``threads`` (older name ``workers``) sets the FFT threads."""
    from segscore.engine import check_options
    from segscore.engine.executor import default_workers

    workers = check_options(threads=threads, workers=workers)["threads"] or default_workers()
    a = _as_prob(prediction)
    lab = np.asarray(label)
    if a.ndim != 2 or a.shape != lab.shape:
        raise ScoreError(f"prediction shape {a.shape} and label shape {lab.shape} must be the same 2D shape")
    m = None if mask is None else np.asarray(mask).astype(bool)
    if m is not None and m.shape != a.shape:
        raise ScoreError(f"mask shape {m.shape} differs from the prediction's {a.shape}")
    if int(radius) < 0:
        raise ScoreError(f"radius must be 0 or more pixels, got {radius}")
    ink = lab > 0.5 if lab.dtype != bool else lab
    h, w = a.shape
    r_y, r_x = min(int(radius), (h - 1) // 2), min(int(radius), (w - 1) // 2)
    am = _centred(a, m)
    bm = _centred(ink.astype(np.float32), m)
    na = float(np.sqrt(np.sum(am.astype(np.float64) ** 2)))
    nb = float(np.sqrt(np.sum(bm.astype(np.float64) ** 2)))
    out = {"shape": [h, w], "radius": [r_y, r_x], "gate_px": float(gate_px)}
    notes = {}
    if na == 0 or nb == 0:
        keys = ("peak_dy", "peak_dx", "offset_px", "peak_ncc", "ncc_at_zero", "passed")
        out.update(dict.fromkeys(keys))
        notes.update(dict.fromkeys(keys, "the prediction or the label is constant inside the mask: no peak"))
    else:
        c = _xcorr(am, bm, workers)
        dy, dx, best = _peak(c, r_y, r_x)
        off = float(np.hypot(dy, dx))
        out.update({"peak_dy": dy, "peak_dx": dx, "offset_px": off, "peak_ncc": best / (na * nb),
                    "ncc_at_zero": float(c[0, 0]) / (na * nb), "passed": bool(off <= gate_px)})
        del c
    if tiles:
        t = _tiles(am, bm, ink, m, tile_px, min(int(tile_radius), int(radius)), min_ink, workers)
        why = t.pop("why", None)
        if why:
            notes.update(dict.fromkeys(("tile_sd_dy", "tile_sd_dx", "worst_tile_px"), why))
        out.update(t)
    out["notes"] = notes
    return out


def _wrapped(a, y0, y1, x0, x1):
    """``a[y0:y1, x0:x1]`` with indices taken modulo ``a``'s shape (numpy.roll's wrap-around):
    the label around a tile, without padding a copy of the whole image."""
    return a[np.ix_(np.arange(y0, y1) % a.shape[0], np.arange(x0, x1) % a.shape[1])]


def _tiles(am, bm, ink, m, tile_px, r, min_ink, workers):
    h, w = am.shape
    rows = []
    if tile_px < 1:
        raise ScoreError(f"tile size must be at least 1 px, got {tile_px}")
    for y0 in range(0, h, tile_px):
        y1 = min(y0 + tile_px, h)
        th = y1 - y0
        band_sat = None  # summed-area table of the label's energy over this row of tiles
        for x0 in range(0, w, tile_px):
            x1 = min(x0 + tile_px, w)
            tw = x1 - x0
            sel = m[y0:y1, x0:x1] if m is not None else None
            n = int(sel.sum()) if sel is not None else th * tw
            if n == 0:
                continue
            frac = float((ink[y0:y1, x0:x1] & sel).sum() / n) if sel is not None else \
                float(ink[y0:y1, x0:x1].mean())
            if frac < min_ink:
                continue
            bw = _wrapped(bm, y0 - r, y1 + r, x0 - r, x1 + r)
            at = np.zeros_like(bw)
            at[r:r + th, r:r + tw] = am[y0:y1, x0:x1]
            na = float(np.sqrt(np.sum(at.astype(np.float64) ** 2)))
            if na == 0:
                continue
            c = _xcorr(at, bw, workers)
            wy, wx = c.shape
            iy, ix = _shift_index(wy, r), _shift_index(wx, r)
            c = c[np.ix_(iy, ix)].astype(np.float64)
            dys = np.array([_signed(int(i), wy) for i in iy])
            dxs = np.array([_signed(int(i), wx) for i in ix])
            # the label's energy under the tile at each shift
            if sel is None or bool(sel.all()):  # a full rectangle: box sums of a summed-area table
                if band_sat is None:
                    band = _wrapped(bm, y0 - r, y1 + r, -r, w + r).astype(np.float64)
                    band_sat = np.zeros((band.shape[0] + 1, band.shape[1] + 1))
                    np.cumsum(np.cumsum(band * band, axis=0), axis=1, out=band_sat[1:, 1:])
                    del band
                r0 = (r - dys)[:, None]
                c0 = (x0 + r - dxs)[None, :]
                e = (band_sat[r0 + th, c0 + tw] - band_sat[r0, c0 + tw] - band_sat[r0 + th, c0]
                     + band_sat[r0, c0])
            else:
                ind = np.zeros_like(bw)
                ind[r:r + th, r:r + tw] = sel
                e = _xcorr(ind, bw * bw, workers)[np.ix_(iy, ix)].astype(np.float64)
            floor = 1e-6 * max(float(e.max()), 1e-30)
            with np.errstate(invalid="ignore", divide="ignore"):
                score = np.where(e > floor, c / np.sqrt(np.maximum(e, floor)), -np.inf)
            i, j = np.unravel_index(int(np.argmax(score)), score.shape)
            dy, dx, best = int(dys[i]), int(dxs[j]), float(score[i, j])
            if not np.isfinite(best):  # the label has no energy under the tile at any shift (an all-ink
                # label, centred, is 0 everywhere): the NCC is 0/0, undefined, and so is the peak
                rows.append({"y0": y0, "x0": x0, "h": th, "w": tw, "ink_fraction": frac, "dy": None, "dx": None,
                             "offset_px": None, "ncc": None,
                             "reason": "the label is constant around this tile (inside the mask): the normalized "
                                       "cross-correlation is undefined"})
                continue
            rows.append({"y0": y0, "x0": x0, "h": th, "w": tw, "ink_fraction": frac, "dy": dy, "dx": dx,
                         "offset_px": float(np.hypot(dy, dx)), "ncc": best / na})
    if not rows:
        return {"n_tiles": 0, "tile_sd_dy": None, "tile_sd_dx": None, "worst_tile_px": None, "tile_px": tile_px,
                "tile_radius": r, "tiles": [], "why": f"no {tile_px} px tile holds {100 * min_ink:g} % ink"}
    defined = [t for t in rows if t["ncc"] is not None]
    if not defined:
        return {"n_tiles": len(rows), "tile_sd_dy": None, "tile_sd_dx": None, "worst_tile_px": None,
                "tile_px": tile_px, "tile_radius": r, "tiles": rows,
                "why": "the label is constant around every tile: no tile has a defined normalized cross-correlation"}
    dys = np.array([t["dy"] for t in defined], np.float64)
    dxs = np.array([t["dx"] for t in defined], np.float64)
    return {"n_tiles": len(rows), "tile_sd_dy": float(dys.std()), "tile_sd_dx": float(dxs.std()),
            "worst_tile_px": float(max(t["offset_px"] for t in defined)), "tile_px": tile_px, "tile_radius": r,
            "tiles": rows}


def _target_gate(meta: dict):
    from segscore.ink.targets import placement_record

    g = placement_record(meta).get("gate_threshold_level2_px")
    return float(g) if isinstance(g, (int, float)) and not isinstance(g, bool) else None


@as_result
def _probe_target(prediction, target, *, origin=None, radius: int = DEFAULT_RADIUS, gate_px=None,
                 tile_radius: int = TILE_RADIUS, evidence=None, evidence_threshold: float = 0.5,
                 threads=None, workers=None) -> dict:
    """Probe a prediction (path or array) against an ink target folder; ``gate_px`` defaults to the
    target's gate in meta.json, else 48. With ``evidence`` (a path) also writes the evidence PNG."""
    from segscore.ink import targets as T
    from segscore.io.readers import open_map
    from segscore.io.targets import refuse_target_as_prediction

    refuse_target_as_prediction(prediction, "segscore placement PRED TARGET")
    tgt = target if isinstance(target, T.Target) else T.load_target(target)
    h, w = tgt.shape
    with open_map(T.png_or_path(prediction), what="prediction", name="the prediction") as src:
        cy, cx = T._crop(src.shape, tgt, origin, src.name)
        arr = src.read((slice(cy, cy + h), slice(cx, cx + w)))
        arr = _as_prob(arr, src.name)  # NaN and infinities refused naming the file
    recorded_gate = _target_gate(tgt.meta)
    gate_from = "--gate" if gate_px is not None else ("meta.json" if recorded_gate is not None else "default")
    gate = float(gate_px) if gate_px is not None else (recorded_gate or DEFAULT_GATE_PX)
    ink = (tgt.codes & 1).astype(bool)
    mask = (tgt.codes & 2).astype(bool) if tgt.has_mask else None
    res = probe(arr, ink, mask, radius=radius, gate_px=gate, tile_radius=tile_radius, threads=threads,
                workers=workers)
    out = {"target": tgt.target_id,
           "prediction": T.prediction_name(prediction), "gate_from": gate_from, **res}
    recorded = T.placement_record(tgt.meta)
    if recorded.get("offset_level2_px") is not None:
        out["recorded_placement"] = {"peak_shift_level2_px": recorded.get("peak_shift_level2_px"),
                                     "offset_level2_px": recorded.get("offset_level2_px"),
                                     "passed": recorded.get("passed")}
    if evidence:
        write_evidence(evidence, arr, ink, threshold=evidence_threshold)
        out["evidence"] = os.fspath(evidence)
    return out


probe_target = moved(_probe_target, "segscore.ink.placement.probe_target",
                     "segscore.api.placement(truth=target, pred=prediction, ...)")


def _downsample(x: np.ndarray, f: int, how: str) -> np.ndarray:
    if f <= 1:
        return x
    h, w = (x.shape[0] // f) * f, (x.shape[1] // f) * f
    v = x[:h, :w].reshape(h // f, f, w // f, f)
    return v.max(axis=(1, 3)) if how == "max" else v.mean(axis=(1, 3))


def evidence_image(prediction, label, *, threshold: float = 0.5, max_side: int = 1024) -> np.ndarray:
    """(H, 3W + gaps, 3) uint8: the prediction alone, the label outlined over it, and the agreement
    map (green both, red label only, blue prediction only), downsampled to ``max_side``."""
    p = _as_prob(prediction)
    lab = np.asarray(label).astype(bool)
    f = max(1, int(np.ceil(max(p.shape) / max_side)))
    edge = lab & ~(np.roll(lab, 1, 0) & np.roll(lab, -1, 0) & np.roll(lab, 1, 1) & np.roll(lab, -1, 1))
    pb = p >= threshold
    gray = (np.clip(_downsample(p, f, "mean"), 0, 1) * 255).astype(np.uint8)
    panel1 = np.repeat(gray[..., None], 3, axis=2)
    panel2 = panel1.copy()
    outline = _downsample(edge, f, "max")
    panel2[outline] = (255, 200, 0)
    both = _downsample((pb & lab).astype(np.float32), f, "mean")
    lab_only = _downsample((lab & ~pb).astype(np.float32), f, "mean")
    pred_only = _downsample((pb & ~lab).astype(np.float32), f, "mean")
    panel3 = np.stack([lab_only, both, pred_only], axis=2)
    panel3 = (np.clip(panel3 / max(float(panel3.max()), 1e-9), 0, 1) * 255).astype(np.uint8)
    gap = np.full((gray.shape[0], 8, 3), 255, np.uint8)
    return np.concatenate([panel1, gap, panel2, gap, panel3], axis=1)


def write_evidence(path, prediction, label, *, threshold: float = 0.5) -> None:
    """Write the alignment evidence picture as a PNG (Pillow), atomically."""
    import tempfile

    from PIL import Image, ImageDraw

    img = evidence_image(prediction, label, threshold=threshold)
    head = 18
    canvas = np.full((img.shape[0] + head, img.shape[1], 3), 255, np.uint8)
    canvas[head:] = img
    pil = Image.fromarray(canvas)
    draw = ImageDraw.Draw(pil)
    third = (img.shape[1] - 16) // 3
    for k, text in enumerate(("prediction", "label outline over prediction",
                              f"agreement at p >= {threshold:g}: green both, red label only, blue prediction only")):
        draw.text((k * (third + 8) + 4, 3), text, fill=(0, 0, 0))
    folder = os.path.dirname(os.fspath(path)) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".evidence.", suffix=".png", dir=folder)
    os.close(fd)
    try:
        pil.save(tmp, format="PNG")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _tiles_said(r: dict) -> str:
    n = r["n_tiles"]
    return f"{n} tile{'' if n == 1 else 's'} of {r['tile_px']} px"


def format_probe(r: dict) -> str:
    if r.get("offset_px") is None:
        lines = [f"placement: no peak ({(r.get('notes') or {}).get('offset_px', 'undefined')})"]
    else:
        lines = [f"placement: agreement peaks at shift (dy {r['peak_dy']:+d}, dx {r['peak_dx']:+d}) = "
                 f"{r['offset_px']:.1f} px (NCC {r['peak_ncc']:.4f}; at zero shift {r['ncc_at_zero']:.4f}); "
                 f"gate {r['gate_px']:g} px ({r.get('gate_from', 'given')}): "
                 f"{'PASSED' if r['passed'] else 'FAILED'}"]
    if r.get("n_tiles") and r.get("tile_sd_dy") is None:  # tiles, none with a defined NCC
        lines.append(f"tiles: {_tiles_said(r)} with >= 1 % ink; "
                     f"{(r.get('notes') or {}).get('tile_sd_dy', 'no tile has a defined peak')}")
    elif r.get("n_tiles"):
        lines.append(f"tiles: {_tiles_said(r)} with >= 1 % ink; sd dy {r['tile_sd_dy']:.1f}, "
                     f"sd dx {r['tile_sd_dx']:.1f}, worst tile {r['worst_tile_px']:.1f} px "
                     f"(search +/-{r['tile_radius']} px)")
    elif "tile_sd_dy" in (r.get("notes") or {}):
        lines.append(f"tiles: {r['notes']['tile_sd_dy']}")
    rec = r.get("recorded_placement")
    if rec:  # a field meta.json does not state is left out, not printed as None
        offset = rec.get("offset_level2_px")
        shift = rec.get("peak_shift_level2_px")
        said = " ".join(part for part in (f"{offset} px" if offset is not None else "",
                                          f"at {shift}" if shift is not None else "") if part)
        lines.append(f"recorded in meta.json: {said or 'a placement without offset or shift'} "
                     f"(measured against the canon prediction, not this one)")
    if r.get("evidence"):
        lines.append(f"evidence: {r['evidence']}")
    return "\n".join(lines)
