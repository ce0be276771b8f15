"""Skeletons identical to ``skimage.morphology.skeletonize``, from numba kernels.

3D (Lee's method): :func:`skeletonize` runs :func:`segscore.kernels.lee.thin_lee`, whose
simple-point and Euler tests are written from their definitions and whose order is the
installed scikit-image's. That is checked on random volumes once per scikit-image version
(the verdict is cached beside the 2D table); a release that thins otherwise gets
scikit-image's own ``skeletonize``.

2D: scikit-image's 2D skeletonize (Zhang and Suen's method) is a parallel thinning: each
iteration runs two sub-passes, and each sub-pass removes, all at once, the foreground pixels
whose 3x3 neighbourhood a 256-entry table marks removable in that sub-pass; it stops when an
iteration removes nothing. The table cannot be rebuilt from the paper (scikit-image issue
#6175: it carries hand corrections), and segscore does not carry a copy of it. Instead it
*measures* the table of the installed scikit-image: it runs ``skeletonize`` on every image that
fits a 3x3 and a 3x4 window and on random 6x6 images around each code still undecided, and
keeps, for each code, only the values under which the thinning reproduces every observed
output. A value no observation could decide made no difference to any of them; the lowest is
taken. The measured table is then checked on random images against ``skeletonize`` itself
and cached on disk per scikit-image version (:mod:`segscore.cachedir`: ``$SEGSCORE_CACHE_DIR``,
else ``~/.cache/segscore``), so scikit-image is imported once per version and machine, not on
every run. Should a future scikit-image thin differently (no
table reproduces it, or the check fails), :func:`skeletonize` calls scikit-image instead.

The kernel (:func:`segscore.kernels.thin.thin_table`) revisits only pixels whose neighbourhood
changed, so a mask whose thinning needs hundreds of iterations (a long tail of single-pixel
removals) costs about as much as one scan.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np

TABLE_FORMAT = 1  # bump when the measurement changes
_W = 10  # width of the padded grid the measurements are simulated on
_OFFSETS = (-_W - 1, -_W, -_W + 1, 1, _W + 1, _W, _W - 1, -1)  # NW N NE E SE S SW W: bits 0..7

_memo: dict = {}
_lock = threading.Lock()


class _Undecided(Exception):
    pass


class _TooMany(Exception):
    pass


def _code(pix, p):
    c = 0
    for b in range(8):
        if p + _OFFSETS[b] in pix:
            c |= 1 << b
    return c


def _removes(v, want):
    return v == 3 or v == want


def _thin_small(pix, domain, choice):
    """Thin a small image (a set of flat pixels on the ``_W``-wide grid) with a partly known
    table. ``choice`` maps (code, sub-pass) to a chosen removal bit; raises
    _Undecided((code, sub-pass)) at the first bit neither the domain nor a choice fixes."""
    pix = set(pix)
    while True:
        removed = False
        for want in (1, 2):
            gone = []
            for p in pix:
                c = _code(pix, p)
                key = (c, want)
                if key in choice:
                    r = choice[key]
                else:
                    other = choice.get((c, 3 - want))
                    bits = {_removes(v, want) for v in domain[c] if other is None or _removes(v, 3 - want) == other}
                    if len(bits) != 1:
                        raise _Undecided(key)
                    r = bits.pop()
                if r:
                    gone.append(p)
            if gone:
                removed = True
                pix.difference_update(gone)
        if not removed:
            return frozenset(pix)


def _consistent(pix, out, domain, limit=400):
    """For every code whose removal bits this image's thinning reads while undecided: the
    values that, with some choice of the other bits, reproduce ``out``. None when no choice
    does; _TooMany when more than ``limit`` runs would be needed (try again once other images
    have decided more of the table)."""
    runs = []
    count = [0]

    def explore(choice):
        count[0] += 1
        if count[0] > limit:
            raise _TooMany
        try:
            res = _thin_small(pix, domain, choice)
        except _Undecided as e:
            key = e.args[0]
            for bit in (False, True):
                choice[key] = bit
                explore(choice)
                del choice[key]
            return
        if res == out:
            runs.append(dict(choice))

    explore({})
    if not runs:
        return None
    allowed = {}
    for c in {key[0] for r in runs for key in r}:
        vals = set()
        for r in runs:
            vals.update(v for v in domain[c] if all(_removes(v, w) == r[(c, w)] for w in (1, 2) if (c, w) in r))
        allowed[c] = vals
    return allowed


def _observe(images, skeletonize):
    """``skeletonize`` of many small images, run once on a canvas where a blank row and column
    separate them (8-connected components never see each other, so each thins alone)."""
    n, h, w = images.shape
    cols = int(np.ceil(np.sqrt(n)))
    rows = -(-n // cols)
    canvas = np.zeros((rows * (h + 1) + 1, cols * (w + 1) + 1), bool)
    r, c = np.divmod(np.arange(n), cols)
    for i in range(n):
        canvas[1 + r[i] * (h + 1):1 + r[i] * (h + 1) + h, 1 + c[i] * (w + 1):1 + c[i] * (w + 1) + w] = images[i]
    sk = np.asarray(skeletonize(canvas), dtype=bool)
    return np.stack([sk[1 + r[i] * (h + 1):1 + r[i] * (h + 1) + h, 1 + c[i] * (w + 1):1 + c[i] * (w + 1) + w]
                     for i in range(n)])


def _flat(img):
    rr, cc = np.nonzero(img)
    return frozenset(((rr + 1) * _W + cc + 1).tolist())


def _narrow(domain, images, skeletonize):
    outs = _observe(images, skeletonize)
    obs = sorted(((_flat(a), _flat(o)) for a, o in zip(images, outs)), key=lambda t: len(t[0]))
    changed = True
    while changed:
        changed = False
        for pix, out in obs:
            try:
                allowed = _consistent(pix, out, domain)
            except _TooMany:
                continue
            if allowed is None:
                raise ValueError("no removal table reproduces skeletonize on a small image")
            for c, vals in allowed.items():
                new = [v for v in domain[c] if v in vals]
                if new != domain[c]:
                    domain[c] = new
                    changed = True


def _all_images(h, w):
    k = np.arange(1, 2 ** (h * w), dtype=np.int64)
    return ((k[:, None] >> np.arange(h * w)) & 1).astype(bool).reshape(-1, h, w)


def measure_table(skeletonize, *, seed=0, rounds=6, per_code=40) -> tuple[np.ndarray, int]:
    """The removal table that makes :func:`segscore.kernels.thin.thin_table` reproduce
    ``skeletonize`` (a callable on 2D bool arrays), and how many codes no observation decided.

    Raises ValueError when no table reproduces it.
    """
    domain = {c: [0, 1, 2, 3] for c in range(256)}
    _narrow(domain, _all_images(3, 3), skeletonize)
    _narrow(domain, _all_images(3, 4), skeletonize)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        open_codes = [c for c in range(256) if len(domain[c]) > 1]
        if not open_codes:
            break
        imgs = rng.random((len(open_codes) * per_code, 6, 6)) < rng.uniform(0.3, 0.9, (len(open_codes) * per_code, 1, 1))
        bits = (np.repeat(np.array(open_codes), per_code)[:, None] >> np.arange(8)) & 1
        for b, (dr, dc) in enumerate(((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))):
            imgs[:, 2 + dr, 2 + dc] = bits[:, b].astype(bool)
        imgs[:, 2, 2] = True
        before = sum(len(d) for d in domain.values())
        _narrow(domain, imgs, skeletonize)
        if sum(len(d) for d in domain.values()) == before:
            break
    table = np.array([domain[c][0] for c in range(256)], dtype=np.uint8)
    return table, sum(len(domain[c]) > 1 for c in range(256))


def thin_with_table(mask: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Thin a 2D mask with a removal table (the numba kernel), as a bool array."""
    from segscore.kernels.thin import thin_table

    m = np.asarray(mask, dtype=bool)
    img = np.zeros((m.shape[0] + 2, m.shape[1] + 2), np.uint8)
    img[1:-1, 1:-1] = m
    flat = img.ravel()
    thin_table(flat, img.shape[1], table)
    return img[1:-1, 1:-1].astype(bool)


def _thins_alike(ours, skeletonize, shapes, per_shape, seed) -> bool:
    """Whether ``ours`` and ``skeletonize`` give the same skeleton on random masks of each
    shape, at densities from sparse to nearly full (borders included)."""
    rng = np.random.default_rng(seed)
    for shape in shapes:
        for _ in range(per_shape):
            m = rng.random(shape) < rng.uniform(0.15, 0.95)
            if not np.array_equal(ours(m), np.asarray(skeletonize(m), dtype=bool)):
                return False
    return True


def _check(table, skeletonize) -> bool:
    """The table thins like ``skeletonize`` on random images."""
    return _thins_alike(lambda m: thin_with_table(m, table), skeletonize,
                        ((8, 8), (17, 13), (40, 40), (64, 48)), 25, seed=1)


@functools.lru_cache(maxsize=None)
def _skimage_version() -> str:
    """The installed scikit-image's version, read once per process (reading a package's
    metadata parses its METADATA file: 2 ms, which every skeleton of an audit paid)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scikit-image")
    except PackageNotFoundError:  # pragma: no cover - scikit-image is a dependency
        return "unknown"


def _once_per_version(kind: str, compute) -> np.ndarray:
    """``compute()`` (an array) for the installed scikit-image, kept in memory and on disk."""
    key = (kind, _skimage_version())
    if key not in _memo:
        with _lock:  # two threads scoring a pair compute it once
            if key not in _memo:
                _memo[key] = _load_or_compute(f"{kind}-skimage-{key[1]}-v{TABLE_FORMAT}.npy", compute)
    return _memo[key]


def _load_or_compute(name: str, compute) -> np.ndarray:
    from segscore.cachedir import cache_dirs, writable_cache_dir

    for d in cache_dirs():
        try:
            return np.load(d / name)
        except (OSError, ValueError):
            continue
    value = compute()
    d = writable_cache_dir()
    if d is not None:
        tmp = d / f"{name}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                np.save(f, value)
            os.replace(tmp, d / name)
        except OSError:
            pass  # computed again next time
    return value


def _measure_skimage_table() -> np.ndarray:
    from skimage.morphology import skeletonize

    try:
        table, _ = measure_table(skeletonize)
    except ValueError:
        return np.zeros(0, np.uint8)
    return table if _check(table, skeletonize) else np.zeros(0, np.uint8)


def skimage_table() -> np.ndarray | None:
    """The installed scikit-image's 2D removal table, measured once and cached; None when its
    skeletonize is not a table-driven thinning this kernel reproduces."""
    t = _once_per_version("zhang-table", _measure_skimage_table)
    if t.shape == (256,) and t.dtype == np.uint8 and int(t.max(initial=0)) <= 3:
        return t
    return None


def thin_lee(mask: np.ndarray) -> np.ndarray:
    """Lee's thinning of a 3D mask by :func:`segscore.kernels.lee.thin_lee`, as a bool array."""
    from segscore.kernels import lee

    m = np.asarray(mask, dtype=bool)
    img = np.zeros(tuple(s + 2 for s in m.shape), np.uint8)
    img[1:-1, 1:-1, 1:-1] = m
    lee.thin_lee(img.ravel(), img.shape[0], img.shape[1], img.shape[2], lee.ADJ, lee.NADJ, lee.CELL_SIGN,
                 lee.CELL_SHARE)
    return img[1:-1, 1:-1, 1:-1].astype(bool)


def _check_lee() -> np.ndarray:
    """[1] when the kernel thins like the installed scikit-image on random volumes, else [0]."""
    from skimage.morphology import skeletonize

    same = _thins_alike(thin_lee, skeletonize, ((1, 9, 9), (6, 7, 8), (12, 12, 12), (20, 16, 12)), 6, seed=2)
    return np.ones(1, np.uint8) if same else np.zeros(1, np.uint8)


def lee_matches_skimage() -> bool:
    """Whether the kernel's Lee thinning is the installed scikit-image's (checked once per
    version: a release that changes its order or its re-check gets scikit-image itself)."""
    return bool(_once_per_version("lee-check", _check_lee)[0])


def skeletonize(mask: np.ndarray) -> np.ndarray:
    """``skimage.morphology.skeletonize(mask)`` for a 2D or 3D mask, voxel for voxel, as a bool
    array: segscore's kernel where it reproduces the installed scikit-image (the measured 2D
    table, the checked 3D procedure), else scikit-image itself.

    Global by nature (a voxel's fate depends on the whole mask), so it is built whole, not by
    tiles: it holds the mask, a padded uint8 working copy and the bool result, about 3 bytes
    per voxel (0.15 GB for a 5,980 x 8,240 mask, 0.4 GB for a 512^3 cube)."""
    m = np.asarray(mask, dtype=bool)
    if m.ndim == 2:
        table = skimage_table()
        if table is not None:
            return thin_with_table(m, table)
    elif lee_matches_skimage():
        return thin_lee(m)
    from skimage.morphology import skeletonize as skimage_skeletonize

    return np.asarray(skimage_skeletonize(m), dtype=bool)
