"""Which error types does a method make? (curvicost 0.3.1's ``profile``.)

    from segscore.curvilinear.profiling import profile, format_profile
    result = profile(gt, [pred1, pred2], prune_px=5)      # arrays or paths; gt is the reference
    print(format_profile(result))

(``segscore.curvilinear.profile`` is this module's :func:`profile`.)

Each (reference, prediction) pair is reduced to a **signature** of seven quantities
(:data:`SIGNATURE_FIELDS`), curvicost 0.3.1's definitions and normalisations, ``n_gt`` the
reference's foreground voxel count (at least 1):

* ``removed``: reference voxels the prediction misses, over ``n_gt``;
* ``added``: prediction voxels outside the reference, over ``n_gt``;
* ``component_change``: (components of the prediction - components of the reference) over the
  reference's count (at least 1); 8-connected in 2D, 26 in 3D;
* ``merged``: the ERL merged fraction, reference-skeleton length in reference skeleton
  components that share a prediction component with another (``score``'s ``merged_frac``);
* ``reach_loss``: 1 - reachable length (``score``'s ``traceable_length`` over the reference's);
* ``radius_ratio``: median distance-transform value on the prediction's skeleton over the
  reference's, minus 1 (an empty prediction skeleton counts as median 1.0, as in curvicost);
* ``terminal_loss``: 1 - degree-1 nodes of the prediction's spur-pruned graph over the
  reference's (at least 1).

The **basis**: each of the five operators (:mod:`segscore.curvilinear.operators`) is applied to the
reference at every severity of :data:`CALIBRATION`, ``seeds`` times (seeds ``seed ..
seed+seeds-1``; a realisation that leaves the reference unchanged is dropped), and the mean
signature at each severity is kept. For each prediction, each operator contributes its mean
signature at the severity whose total disagreement (``removed + added``) is nearest the
prediction's (the first such severity on a tie). Signatures are divided by :data:`SCALE` and the
prediction's is fitted as a non-negative combination of the operators' (``scipy.optimize.nnls``):
``shares`` are the weights over their sum, ``residual`` (the **unexplained** share) is
``|y - B w| / |y|``, capped at 1, and ``nearest`` the operator with the largest share.

The calibration table depends on the reference alone, so it is built once
(:func:`prepare_profile`) for all predictions; curvicost rebuilds it for each, with the same
result. Realisations run on a thread pool (``threads``; the kernels release the GIL). The operators
draw curvicost's copies (the same seed damages the same voxels), so ``basis``, ``severities``,
``shares``, ``residual`` and ``nearest`` are curvicost's on the same masks (to 1e-9).

Differences from curvicost 0.3.1 (tests/curvilinear/test_profile.py pins each):

* an operator that changed the reference at no calibration severity (``bridge`` on thick vessels)
  is ``null`` in ``shares``, ``basis`` and ``severities`` with a note (curvicost leaves it out);
* a prediction identical to the reference has ``shares``, ``nearest``, ``residual`` and
  ``flagged`` null with a note (curvicost: shares 0, nearest ``break``, residual 0); a fit whose
  weights are all 0 has ``shares`` and ``nearest`` null with a note (curvicost: 0 and ``break``);
* a prediction whose shape differs from the reference's, an unreadable file and an empty reference
  are refused (curvicost skips a mismatched prediction with a warning);
* the result is one dict: ``predictions`` (curvicost's rows, plus ``flagged``), their ``mean``
  (curvicost prints it), ``reading`` (the report's reading notes) and ``notes``.
"""

from __future__ import annotations

import math

import os
from dataclasses import dataclass, field

import numpy as np

from segscore.errors import ScoreError, whole_number
from segscore.io.results import as_result

__all__ = ["profile", "prepare_profile", "prepare_signature", "signature", "format_profile", "ProfileReference", "SIGNATURE_FIELDS",
           "SCALE", "CALIBRATION", "OPERATORS", "UNEXPLAINED_FLAG"]

OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
#: the signature's quantities, in curvicost's order
SIGNATURE_FIELDS = ("removed", "added", "component_change", "merged", "reach_loss", "radius_ratio", "terminal_loss")
#: curvicost's fixed scales, putting the seven quantities on comparable footing before the fit
SCALE = np.array([0.20, 0.20, 1.00, 0.10, 0.20, 0.20, 0.30])
#: curvicost 0.3.1's calibration severities per operator
CALIBRATION = {
    "break": (0.02, 0.05, 0.10, 0.20, 0.35, 0.50),
    "bridge": (0.02, 0.05, 0.10, 0.20, 0.50),
    "truncate": (0.02, 0.05, 0.10, 0.20, 0.35, 0.50),
    "radius": (0.70, 0.85, 1.15, 1.30),
    "boundary": (0.005, 0.02, 0.05, 0.10, 0.20),
}
#: a residual above this is flagged (curvicost's ``+``): the operator set does not span the error
UNEXPLAINED_FLAG = 0.30
#: operators whose result does not depend on the seed: drawn once, counted ``seeds`` times
_SEEDLESS = frozenset({"radius"})

_NO_BASIS = ("changed the reference at none of its calibration severities ({sev}), so it has no basis signature "
             "and no share")
_IDENTICAL = ("the prediction equals the reference (every signature quantity is 0): there is no disagreement "
              "to share out")
_ALL_ZERO = ("no non-negative combination of the operators' signatures fits any of the prediction's: every "
             "weight is 0, so the whole disagreement is unexplained")


@dataclass
class ProfileReference:
    """The reference's work, done once (:func:`prepare_profile`): its scoring reference, its own
    signature terms and the calibration table ``{(operator, severity): mean signature or None}``."""

    name: str
    shape: tuple
    prune_px: float
    seed: int
    seeds: int
    calibration: dict
    scoring: object  # segscore.curvilinear.scoring.Reference
    n_gt: int
    b0: int
    terminals: int
    radius: float
    table: dict = field(default_factory=dict)
    realisations: dict = field(default_factory=dict)  # (operator, severity) -> realisations kept


# ------------------------------------------------------------------------------------------
# the signature
# ------------------------------------------------------------------------------------------

def _mask_stats(mask: np.ndarray, prune_px: float):
    """(label image, components, degree-1 nodes of the pruned graph, median skeleton radius)."""
    from segscore.curvilinear.graph import build_graph, label, radius_on_skeleton, skeletonize

    lab, n = label(mask)
    if n == 0:
        return lab, 0, 0, 1.0
    skel = skeletonize(mask)
    if not skel.any():  # pragma: no cover - a non-empty mask keeps a skeleton voxel
        return lab, n, 0, 1.0
    edt = radius_on_skeleton(mask, skel)
    g = build_graph(skel, edt, prune_px)
    terminals = int(np.count_nonzero(g.degree() == 1)) if len(g.edge_u) else 0
    return lab, n, terminals, float(np.median(edt.val))


def _signature(pr: ProfileReference, pred: np.ndarray) -> np.ndarray:
    from segscore.curvilinear import costs as C
    from segscore.curvilinear import metrics as M

    ref = pr.scoring
    gt = ref.gt
    inter = int(np.count_nonzero(gt & pred))
    n_ref = pr.n_gt  # the reference is not empty
    n_pred = int(np.count_nonzero(pred))
    lab, n, term, rad = _mask_stats(pred, pr.prune_px)
    pl = lab.ravel()[ref.skel_idx].astype(np.int64)
    _, merged = M.erl(ref.obj, pl)
    reach = C.reach_multi(ref.rl, ref.skel_coords, ref.root_k, pl) if n else 0
    return np.array([
        (n_ref - inter) / pr.n_gt,
        (n_pred - inter) / pr.n_gt,
        (n - pr.b0) / max(pr.b0, 1),
        float(merged),
        1.0 - reach / max(ref.base_multi, 1),
        rad / max(pr.radius, 1e-9) - 1.0,
        1.0 - term / max(pr.terminals, 1),
    ], dtype=float)


def signature(gt, pred, *, prune_px: float = 5, reference: ProfileReference | None = None) -> dict:
    """The seven signature quantities of ``pred`` against the reference ``gt`` (module docstring),
    as ``{field: value}``. ``reference`` (from :func:`prepare_profile` or
    :func:`prepare_signature`) may replace ``gt``."""
    pr = reference if reference is not None else prepare_signature(gt, prune_px=prune_px)
    p = _binary(pred, "prediction")
    _check_shape(p, pr, "prediction")
    return dict(zip(SIGNATURE_FIELDS, _signature(pr, p).tolist()))


# ------------------------------------------------------------------------------------------
# the reference and its calibration table
# ------------------------------------------------------------------------------------------

def _name_of(x, default: str) -> str:
    return os.fspath(x) if isinstance(x, (str, os.PathLike)) else default


def _binary(x, name: str) -> np.ndarray:
    if isinstance(x, (str, os.PathLike)):
        from segscore.curvilinear.masks import load_mask

        return load_mask(x, what=name)[0]
    from segscore.curvilinear.masks import as_binary

    return as_binary(x, name)


def _check_shape(pred, pr: ProfileReference, name: str) -> None:
    if pred.shape != tuple(pr.shape):
        whose = "the reference's" if pr.name == "reference" else f"the reference {pr.name}'s"
        raise ScoreError(f"{name}: shape {pred.shape} differs from {whose} {tuple(pr.shape)}; "
                         "resample one onto the other's grid")



def prepare_signature(gt, *, prune_px: float = 5, name: str | None = None) -> ProfileReference:
    """The reference's own signature terms (no calibration table): enough for :func:`signature`.
    ``gt`` is the reference (an array or a path); refuses an empty one, naming it."""
    from segscore.curvilinear.scoring import prepare_reference

    name = name or _name_of(gt, "reference")
    try:
        pf = float(prune_px)
    except (TypeError, ValueError):
        raise ScoreError(f"prune_px: must be a length >= 0 voxels, got {prune_px!r}") from None
    if not (0 <= pf < float("inf")):
        raise ScoreError(f"prune_px: must be a length >= 0 voxels, got {prune_px!r}")
    g = _binary(gt, name)
    if not g.any():
        raise ScoreError(f"{name}: the reference mask is empty; a profile needs a reference with foreground "
                         "(the operators act on it)")
    ref = prepare_reference(g, prune_px=prune_px)
    gr = ref.a.graph
    terminals = int(np.count_nonzero(gr.degree() == 1)) if gr is not None and len(gr.edge_u) else 0
    radius = ref.median_radius if np.isfinite(ref.median_radius) else 1.0
    return ProfileReference(name=name, shape=tuple(g.shape), prune_px=prune_px, seed=0, seeds=0, calibration={},
                            scoring=ref, n_gt=max(int(np.count_nonzero(g)), 1), b0=int(ref.a.n_comp),
                            terminals=terminals, radius=float(radius))


def _check_calibration(calibration) -> dict:
    if calibration is None:
        return {op: tuple(v) for op, v in CALIBRATION.items()}
    if not isinstance(calibration, dict):
        raise ScoreError(f"calibration: must be a dict {{operator: severities}}, got {type(calibration).__name__}")
    out = {}
    for op, sevs in calibration.items():
        if op not in OPERATORS:
            raise ScoreError(f"calibration: {op!r} is not one of {', '.join(OPERATORS)}")
        try:
            vals = tuple(float(s) for s in sevs)
        except (TypeError, ValueError):
            raise ScoreError(f"calibration[{op!r}]: must be a list of numbers, got {sevs!r}") from None
        if not all(math.isfinite(v) for v in vals):
            raise ScoreError(f"calibration[{op!r}]: must be finite numbers, got {sevs!r}")
        out[op] = vals
    return out


def prepare_profile(gt, *, prune_px: float = 5, seed: int = 0, seeds: int = 3, calibration=None,
                    threads: int | None = None, name: str | None = None) -> ProfileReference:
    """Do the reference's work once: its signature terms and the calibration table (every operator
    at every severity of ``calibration``, default :data:`CALIBRATION`, averaged over ``seeds``
    realisations from ``seed``). ``gt`` is the reference; pass the result to :func:`profile` as
    ``reference=`` to profile further predictions against it.

    ``threads`` (default 1) runs the realisations on that many threads. The operators spend most
    of their time in SciPy's feature transform and NumPy, which hold the GIL, so more threads
    gain little (benchmarks/README.md)."""
    seed = whole_number(seed, "seed", 0)
    seeds = whole_number(seeds, "seeds", 1)
    threads = 1 if threads is None else whole_number(threads, "threads", 1)
    cal = _check_calibration(calibration)
    pr = prepare_signature(gt, prune_px=prune_px, name=name)
    _calibrate(pr, seed, seeds, cal, threads)
    return pr


def _calibrate(pr: ProfileReference, seed: int, seeds: int, cal: dict, threads: int) -> None:
    from segscore.curvilinear.operators import perturb
    from segscore.engine import side_by_side

    pr.seed, pr.seeds, pr.calibration = seed, seeds, cal
    gt_m = pr.scoring.gt
    analysis = pr.scoring.analysis()  # the reference's skeleton and graph, made once (None: physical units)
    jobs = [(op, s, k) for op in OPERATORS for s in cal.get(op, ())
            for k in (range(1) if op in _SEEDLESS else range(seeds))]

    def one(op, s, k):
        def run():
            try:
                out, _ = perturb(gt_m, op, s, seed=seed + k, prune_px=pr.prune_px, name=pr.name,
                                 analysis=analysis)
            except ScoreError:  # a severity the operator refuses: no realisation (curvicost: ValueError)
                return None
            if np.array_equal(out, gt_m):
                return None
            return _signature(pr, out)
        return run

    sigs = side_by_side([one(*j) for j in jobs], threads=threads)
    got: dict = {}
    for (op, s, _), sig in zip(jobs, sigs):
        lst = got.setdefault((op, s), [])
        if sig is not None:
            lst.extend([sig] * (seeds if op in _SEEDLESS else 1))
    pr.table, pr.realisations = {}, {}
    for key, lst in got.items():
        pr.table[key] = np.mean(lst, axis=0) if lst else None
        pr.realisations[key] = len(lst)


# ------------------------------------------------------------------------------------------
# the fit
# ------------------------------------------------------------------------------------------

def _fit(pr: ProfileReference, obs: np.ndarray, idx: int, notes: dict) -> dict:
    p = f"predictions.{idx}."
    magnitude = obs[0] + obs[1]
    basis, names, used = [], [], {}
    for op in OPERATORS:
        best, best_gap, best_sev = None, np.inf, None
        for s in pr.calibration.get(op, ()):
            sig = pr.table.get((op, s))
            if sig is None:
                continue
            gap = abs((sig[0] + sig[1]) - magnitude)
            if gap < best_gap:
                best, best_gap, best_sev = sig, gap, s
        if best is not None:
            basis.append(best)
            names.append(op)
            used[op] = best_sev
    shares: dict = {op: None for op in OPERATORS}
    row_basis: dict = {op: None for op in OPERATORS}
    sev: dict = {op: None for op in OPERATORS}
    for op in OPERATORS:
        if op not in used:
            levels = pr.calibration.get(op, ())
            why = (f"{op} " + _NO_BASIS.format(sev=", ".join(f"{s:g}" for s in levels)) if levels else
                   f"{op} has no severity in the calibration, so it has no basis signature and no share")
            for part in ("shares", "basis", "severities"):
                notes[f"{p}{part}.{op}"] = why
    for op, b in zip(names, basis):
        row_basis[op] = dict(zip(SIGNATURE_FIELDS, b.tolist()))
        sev[op] = used[op]
    nearest = residual = flagged = None
    if not np.any(obs):
        for op in names:
            notes[f"{p}shares.{op}"] = _IDENTICAL
        for k in ("residual", "nearest", "flagged"):
            notes[p + k] = _IDENTICAL
    elif not basis:
        residual, flagged = 1.0, True
        notes[p + "nearest"] = "no operator has a basis signature (see the shares' notes): nothing to fit"
    else:
        B = (np.vstack(basis) / SCALE).T
        y = obs / SCALE
        from scipy.optimize import nnls

        w, _ = nnls(B, y)
        total = float(w.sum())
        resid = float(np.linalg.norm(y - B @ w) / max(np.linalg.norm(y), 1e-9))
        residual = min(resid, 1.0)
        flagged = residual > UNEXPLAINED_FLAG
        if total > 0:
            for op, v in zip(names, w):
                shares[op] = float(v / total)
            nearest = max((op for op in names), key=lambda o: shares[o])
        else:
            for op in names:
                notes[f"{p}shares.{op}"] = _ALL_ZERO
            notes[p + "nearest"] = _ALL_ZERO
    return dict(shares=shares, residual=residual, nearest=nearest, flagged=flagged,
                observed=dict(zip(SIGNATURE_FIELDS, obs.tolist())), basis=row_basis, severities=sev)


def _mean(rows: list, notes: dict) -> dict:
    ok = [r for r in rows if any(r["shares"][o] is not None for o in OPERATORS)]
    shares = {}
    for op in OPERATORS:
        vals = [r["shares"][op] for r in ok if r["shares"][op] is not None]
        if vals:
            shares[op] = float(sum(vals) / len(ok))
        else:
            shares[op] = None
            notes[f"mean.shares.{op}"] = (f"{op} has no share in any prediction" if ok else
                                          "no prediction has shares (see their notes)")
    res = [r["residual"] for r in rows if r["residual"] is not None]
    residual = float(sum(res) / len(res)) if res else None
    if residual is None:
        notes["mean.residual"] = "no prediction has a residual (each equals the reference)"
    have = {o: v for o, v in shares.items() if v is not None}
    lead = max(have, key=have.get) if have else None
    if lead is None:
        notes["mean.nearest"] = "no prediction has shares (see their notes)"
    return dict(shares=shares, residual=residual, nearest=lead, n_predictions=len(rows),
                n_left_out=len(rows) - len(ok), n_left_out_residual=len(rows) - len(res))


def _reading(rows: list, mean: dict) -> list[str]:
    out = []
    n = len(rows)
    if mean["residual"] is None:
        out.append("Unexplained: none -- every prediction equals the reference, so there is no disagreement to "
                   "profile.")
    else:
        over = sum(1 for r in rows if r["flagged"])
        what = "of the disagreement" if n == 1 else f"of the disagreement on average over {n} predictions"
        out.append(f"Unexplained: {100 * mean['residual']:.0f}% {what} is reproduced by no combination of the five "
                   f"operators" + (f" ({over} of {n} over {100 * UNEXPLAINED_FLAG:.0f}%)." if n > 1 else "."))
    lead = mean["nearest"]
    if lead is not None:
        out.append(f"Read the '{lead}' column of the audit first: it is the error type these predictions most "
                   f"resemble on this data. Shares are coarse -- read them as \"mostly {lead}-like\", not as a "
                   "measurement.")
    if any(r["flagged"] for r in rows):
        out.append(f"+ more than {100 * UNEXPLAINED_FLAG:.0f}% of the disagreement is explained by no combination of "
                   "the five operators. The commonest cause is over-tracing: only `bridge` adds structure, so a "
                   "method that paints more than the reference falls outside the model and the audit's columns "
                   "describe it only in part.")
        flagged = [r for r in rows if r["flagged"]]
        over = [r["prediction"] for r in flagged if r["observed"]["added"] > r["observed"]["removed"]]
        under = [r["prediction"] for r in flagged if r["observed"]["added"] <= r["observed"]["removed"]]
        if over:
            out.append(f"  Over-tracing here: {_list(over)} add(s) more voxels outside the reference than they miss "
                       "inside it.")
        if under:
            out.append(f"  Not over-tracing: {_list(under)} miss(es) at least as many reference voxels as they add; "
                       "the fit misses something other than added structure there.")
    if n > 1:
        out.append("Pass predictions from one method: the mean row is meaningless across different methods.")
    return out


def _list(names, k: int = 3) -> str:
    names = [os.path.basename(str(x)) for x in names]
    return ", ".join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")


@as_result
def profile(gt, preds, *, prune_px: float = 5, seed: int = 0, seeds: int = 3, names=None, threads: int | None = None,
            calibration=None, reference: ProfileReference | None = None) -> dict:
    """Express each prediction's disagreement with the reference ``gt`` as shares of the five
    operators (module docstring), curvicost 0.3.1's ``profile``.

    Parameters
    ----------
    gt : array-like or path
        The reference (truth) mask, 2D or 3D binary. May be None when ``reference`` is given.
    preds : sequence of arrays or paths
        Predictions of one method, each of the reference's shape (one array of the reference's
        dimension counts as one prediction).
    prune_px : spur-pruning length in voxels (default 5).
    seed, seeds : the first seed of the calibration draws and how many realisations each
        operator's basis averages (default 0 and 3, curvicost's).
    names : the predictions' names in the result (default: the path, or ``prediction_<i>``).
    threads : threads for the calibration realisations (default 1; see :func:`prepare_profile`).
    calibration : ``{operator: severities}`` (default :data:`CALIBRATION`).
    reference : a :func:`prepare_profile` result, reused (its options win).

    Returns
    -------
    dict
        ``reference``, ``shape``, ``prune_px``, ``seed``, ``seeds``, ``calibration``,
        ``n_predictions``, ``predictions`` (per prediction: ``prediction``, ``shares``
        ({operator: share of the explained part}), ``residual`` (the unexplained share), ``nearest``,
        ``flagged`` (residual over 0.30), ``observed``, ``basis``, ``severities``), ``mean`` (the
        shares and residual averaged over the predictions that have them, ``nearest`` the largest
        mean share, ``n_left_out``), ``reading`` (the reading notes, unexplained first) and
        ``notes`` ({dotted path: why it is null}).
    """
    if reference is None:
        pr = prepare_signature(gt, prune_px=prune_px)  # every input is read and checked before the work
        seed = whole_number(seed, "seed", 0)
        seeds = whole_number(seeds, "seeds", 1)
        threads = 1 if threads is None else whole_number(threads, "threads", 1)
        cal = _check_calibration(calibration)
    else:
        pr = reference
        if not pr.calibration:
            raise ScoreError("reference: has no calibration table; make it with prepare_profile(gt, ...)")
        if gt is not None and not isinstance(gt, (str, os.PathLike)) and np.shape(gt) != tuple(pr.shape):
            raise ScoreError(f"reference: prepared for shape {tuple(pr.shape)}, the mask given has {np.shape(gt)}")
    if isinstance(preds, (str, os.PathLike)) or (isinstance(preds, np.ndarray) and preds.ndim == len(pr.shape)):
        preds = [preds]  # one prediction (a stack of 2D masks, one dimension more, is many)
    preds = list(preds)
    if not preds:
        raise ScoreError("preds: no prediction given; give one or more masks of one method")
    if names is None:
        names = [_name_of(p, f"prediction_{i}") for i, p in enumerate(preds)]
    else:
        names = [str(n) for n in names]
        if len(names) != len(preds):
            raise ScoreError(f"names: {len(names)} name(s) for {len(preds)} prediction(s); give one per prediction")
    masks = []
    for p, nm in zip(preds, names):
        m = _binary(p, nm)
        _check_shape(m, pr, nm)
        masks.append(m)
    if reference is None:
        _calibrate(pr, seed, seeds, cal, threads)
    notes: dict = {}
    rows = []
    for i, (m, nm) in enumerate(zip(masks, names)):
        obs = _signature(pr, m)
        rows.append({"prediction": nm, **_fit(pr, obs, i, notes)})
    mean = _mean(rows, notes)
    return {"reference": pr.name, "shape": list(pr.shape), "prune_px": pr.prune_px, "seed": pr.seed,
            "seeds": pr.seeds, "calibration": {op: list(v) for op, v in pr.calibration.items()},
            "n_predictions": len(rows), "predictions": rows, "mean": mean, "reading": _reading(rows, mean),
            "notes": notes, "warnings": []}


# ------------------------------------------------------------------------------------------
# text
# ------------------------------------------------------------------------------------------

def _pct(v, width: int = 9) -> str:
    return f"{'--':>{width}} " if v is None else f"{100 * v:>{width}.0f}%"


def format_profile(result: dict) -> str:
    """The profile as text: one row per prediction (shares, unexplained, ``+`` over 30%), the
    mean row, the reading notes and the notes (curvicost's ``profile`` report)."""
    rows = result["predictions"]
    lines = [f"{len(rows)} prediction(s) of ONE method against one reference ({result['reference']})", ""]
    lines.append("  " + "prediction".ljust(26) + "".join(o.rjust(10) for o in OPERATORS) + "  unexplained")
    for r in rows:
        name = os.path.basename(str(r["prediction"]))
        mark = " +" if r["flagged"] else "  "
        lines.append("  " + name[:26].ljust(26) + "".join(_pct(r["shares"][o]) for o in OPERATORS)
                     + _pct(r["residual"], 10) + mark)
    m = result["mean"]
    if len(rows) > 1:
        lines.append("  " + "MEAN".ljust(26) + "".join(_pct(m["shares"][o]) for o in OPERATORS)
                     + _pct(m["residual"], 10))
    lines.append("")
    for text in result.get("reading", []):
        lines.append("  " + text)
    notes = result.get("notes") or {}
    if notes:
        lines.append("")
        seen = {}
        for k, why in notes.items():  # one line per reason, naming the fields
            seen.setdefault(why, []).append(k)
        for why, keys in seen.items():
            shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
            lines.append(f"note: {shown} null: {why}")
    return "\n".join(lines)
