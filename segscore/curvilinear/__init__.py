"""Curvilinear masks (curvicost parity): overlap/topology metrics beside functional costs.

    from segscore.curvilinear import score, prepare_reference, perturb
    row = score(gt, pred, prune_px=17)
    ref = prepare_reference(gt, prune_px=17); rows = [score(None, p, reference=ref) for p in preds]
    broken, info = perturb(gt, "break", 0.10, seed=0)
"""

from __future__ import annotations

__all__ = ["score", "prepare_reference", "perturb", "OPERATORS", "load_mask", "save_mask"]


def __getattr__(name):
    if name in ("score", "prepare_reference", "scale_warnings", "ROW_KEYS"):
        from segscore.curvilinear import score as _s

        return getattr(_s, name)
    if name in ("perturb", "OPERATORS"):
        from segscore.curvilinear import perturb as _p

        return getattr(_p, name)
    if name in ("load_mask", "save_mask", "as_binary"):
        from segscore.curvilinear import masks as _m

        return getattr(_m, name)
    raise AttributeError(name)
