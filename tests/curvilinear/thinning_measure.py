"""Measuring scikit-image's 2D removal table from its answers (the test that pins
``segscore.curvilinear.thinning.ZHANG_TABLE``, and tests of the measurement itself).

It runs ``skeletonize`` on every image that fits a 3x3 and a 3x4 window and on random 6x6 images
around each code still undecided, and keeps, for each code, only the values under which the
thinning reproduces every observed output. A value no observation could decide made no
difference to any of them; the lowest is taken.
"""

import numpy as np

_W = 10  # width of the padded grid the measurements are simulated on
_OFFSETS = (-_W - 1, -_W, -_W + 1, 1, _W + 1, _W, _W - 1, -1)  # NW N NE E SE S SW W: bits 0..7


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
