"""The statistics of the metric audit, from a case table: which metric tracks which cost, per
error type (curvicost 0.3.1's ``audit``, its labels and intervals, without scoring anything).

    from segscore.curvilinear.findings import findings_from_cases, read_cases
    result = findings_from_cases(read_cases("audit.json"), min_units=10, n_boot=2000)

A **case** is one damaged copy of a reference mask, scored against it: a dict with

* ``unit`` (str): the reference mask, the cluster the bootstrap resamples;
* ``operator`` (str): the error type (``break``, ``bridge``, ``truncate``, ``radius``,
  ``boundary``; other names are audited after these five, in sorted order);
* ``severity``, ``seed`` (optional, for the record), ``realised`` (optional: how much the
  operator did, e.g. the number of edges cut; it reveals a saturated ladder);
* ``acted`` (bool, default true): whether the operator changed the mask. curvicost counts a case
  as acted when the damaged mask differs from the reference it is scored against (the radius
  operator's is its own redraw at scale 1.0); a case that did not act (the operator declined, or
  returned the reference unchanged) is no data point: it enters no count and no correlation,
  and says only that the operator was tried;
* the cost quantities (``traceable_frac``, ``conductance_twosided``, ...) and the metrics
  (:data:`METRIC_ORDER`), each a number or None (NaN and infinities read as None).

A case table is a list of such dicts, or a dict of equal-length columns. On disk
(:func:`read_cases`) it is either the JSON ``curvicost audit --include-cases --json FILE`` writes
(curvicost records acting cases only; the reader adds a declined case for each rung of the
file's ``ladder`` that a unit has no case for), or a **segscore case table**::

    {"format": "segscore-case-table", "version": 1,
     "costs": ["traceable_frac", "conductance_twosided"],      (optional: the default costs)
     "cases": [{"unit": "gt1.png", "operator": "break", "severity": 0.05, "seed": 0,
                "acted": true, "traceable_frac": 0.81, "dice": 0.99, "hd95": null, ...}, ...]}

where ``cases`` may also be a dict of columns, and a bare JSON list of cases is read the same way.

The statistics, as curvicost 0.3.1's ``audit`` computes them (Methods of the paper):

* per (cost, operator, metric) cell, over the operator's acting cases with both values finite,
  Spearman's ρ (ties by average rank, ``scipy.stats.spearmanr``), sign-aligned: negated for a
  lower-is-better metric (:data:`LOWER_IS_BETTER`), so a positive ρ always means "tracks";
* its 95% percentile interval from a cluster bootstrap over units: ``n_boot`` resamples of the
  cell's units with replacement, each taking all its cases, drawn as curvicost draws them
  (``numpy.random.default_rng(seed)`` anew for every cell, one ``integers(0, g, g)`` per
  resample); resamples that leave the cost or the metric constant are dropped; no interval
  when the cell has fewer than 3 units. Units are taken as curvicost takes them, in the order they
  first appear among the cell's cases (an audit's: the order its masks were given), so reordering the
  units changes the intervals, as in curvicost, and nothing else; ρ is computed over the pairs in an
  order of their values and each unit's cases are taken in that order too, so neither depends on the
  order of the cases within a unit;
* the label (:func:`label_cell`), first match wins: ``undefined`` (the cost or the metric is
  constant over the cell, or fewer than 3 cases have both: ρ does not exist; ``reason`` says
  which), ``inconclusive`` (fewer than ``min_units`` acting units or fewer than ``min_cases``
  acting cases, whatever the interval says; or no interval), ``blind`` (``ci_lo < 0 < ci_hi``:
  an end exactly at 0 does not count as including it, as in curvicost), ``anti-correlated``
  (ρ < 0 and the interval excludes 0), otherwise ``tracks``;
* an operator with fewer than 3 acting cases gets no cells (``operator_notes`` names it).

Differences from curvicost's JSON: null where curvicost writes NaN, with the reason in the row
(curvicost leaves ``reason`` empty on undefined cells and on cells without an interval above its
floors); the per-operator explanations are ``operator_notes`` (curvicost's ``notes``), in other
words, and say also in which units an operator declined and which metrics were null on some
cases; ``notes`` is the result contract's (always present, empty: every null is in a row).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError, whole_number

__all__ = ["findings_from_cases", "cell_statistics", "read_cases", "label_cell", "spearman_rho", "cluster_interval",
           "CaseTable", "OPERATORS", "COSTS", "METRIC_ORDER", "LOWER_IS_BETTER", "LABELS",
           "MIN_UNITS", "MIN_CASES", "N_BOOT", "CASE_TABLE_FORMAT"]

OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
#: the costs curvicost audits by default
COSTS = ("traceable_frac", "conductance_twosided")
#: curvicost 0.3.1's audited metrics, in its order (the article's Table 2); a metric joins the
#: default list when some acting case has a finite value of it
METRIC_ORDER = ("dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error",
                "betti_matching", "erl_star", "node_recall", "apls", "junction_f1", "hd95")
#: metrics where a higher value is a worse segmentation: their ρ and interval are negated
LOWER_IS_BETTER = frozenset({"betti0_error", "betti_matching", "hd95"})
#: metrics known to run the usual way; ``erl_frac`` and ``diadem_like`` are curvicost's names
#: before 0.3.0 (and segscore's row keys) for ``erl_star`` and ``node_recall``, audited on request
HIGHER_IS_BETTER = frozenset({"dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "erl_star",
                              "node_recall", "apls", "junction_f1", "erl_frac", "diadem_like"})
LABELS = ("undefined", "inconclusive", "blind", "anti-correlated", "tracks")
#: the paper's floors: acting units and acting cases per cell for any verdict
MIN_UNITS = 10
MIN_CASES = 12
N_BOOT = 1000
#: an operator needs this many acting cases to be correlated at all; an interval this many units
MIN_OPERATOR_CASES = 3
MIN_CI_UNITS = 3
CASE_TABLE_FORMAT = "segscore-case-table"
ROW_KEYS = ("cost", "operator", "metric", "n", "n_units", "aligned_rho", "ci_lo", "ci_hi", "label",
            "reason", "undefined", "inconclusive", "blind", "anti", "cost_constant")


class CaseTable(list):
    """A list of cases read from a file, with what the file says beside them.

    ``source``: the path; ``format``: ``"curvicost"`` or :data:`CASE_TABLE_FORMAT`; ``costs``: the
    costs the file's audit used (curvicost's findings, or the table's ``costs``), which
    :func:`findings_from_cases` audits when it is given none; None if the file names none.
    """

    def __init__(self, cases=(), *, source=None, format=None, costs=None):
        super().__init__(cases)
        self.source = source
        self.format = format
        self.costs = tuple(costs) if costs else None


# ------------------------------------------------------------------------------------------
# statistics of one cell
# ------------------------------------------------------------------------------------------

def _float_vector(v, name):
    a = np.ascontiguousarray(v, dtype=np.float64)
    if a.ndim != 1:
        raise ScoreError(f"{name}: expected a 1-D array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ScoreError(f"{name}: holds NaN or an infinity at index {int(np.flatnonzero(~np.isfinite(a))[0])}; "
                         "drop the cases without a value first")
    return a


def spearman_rho(x, y) -> float | None:
    """Spearman's ρ of two equal-length vectors, ties by average rank (``scipy.stats.spearmanr``);
    None where either has fewer than two distinct values."""
    from segscore.kernels.rankstats import spearman

    x = _float_vector(x, "x")
    y = _float_vector(y, "y")
    if x.shape != y.shape:
        raise ScoreError(f"x and y: lengths {x.size} and {y.size} differ")
    r = float(spearman(x, y))
    return r if math.isfinite(r) else None


def _picks(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """The units each resample draws: curvicost's stream (a fresh ``default_rng(seed)`` and one
    ``integers(0, g, g)`` per resample; one call of shape (n_boot, g) is the same stream)."""
    return np.random.default_rng(seed).integers(0, n_groups, size=(n_boot, n_groups)).astype(np.int64)


def cluster_interval(x, y, groups, *, n_boot=N_BOOT, seed=0, picks=None):
    """95% percentile interval of Spearman's ρ under a bootstrap of clusters.

    ``groups`` (int, in ``[0, g)``, every value present) is each case's cluster; a resample
    draws ``g`` clusters with replacement (``picks``, shape (n_boot, g), or drawn from
    ``seed`` as curvicost draws them) and takes all their cases. Returns ``(lo, hi, n_defined)``:
    the 2.5th and 97.5th percentiles (``numpy.percentile``, linear) of the resamples whose ρ is
    defined, and how many were; ``(None, None, 0)`` when none was.
    """
    from segscore.kernels.rankstats import cluster_bootstrap_spearman

    x = _float_vector(x, "x")
    y = _float_vector(y, "y")
    g = np.ascontiguousarray(groups, dtype=np.int64)
    if not (x.shape == y.shape == g.shape):
        raise ScoreError(f"x, y and groups: lengths {x.size}, {y.size} and {g.size} differ")
    n_groups = int(g.max()) + 1 if g.size else 0
    if g.size and (g.min() < 0 or np.unique(g).size != n_groups):
        raise ScoreError("groups: expected every cluster number 0..g-1 to occur")
    if picks is None:
        picks = _picks(n_groups, int(n_boot), int(seed))
    picks = np.ascontiguousarray(picks, dtype=np.int64)
    if picks.ndim != 2 or picks.shape[1] != n_groups or (picks.size and (picks.min() < 0 or picks.max() >= n_groups)):
        raise ScoreError(f"picks: expected shape (n_boot, {n_groups}) of cluster numbers below {n_groups}")
    draws = np.empty(picks.shape[0])
    n_def = int(cluster_bootstrap_spearman(x, y, g, picks, draws))
    if n_def == 0:
        return None, None, 0
    draws = draws[np.isfinite(draws)]
    return float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5)), n_def


def label_cell(aligned_rho, ci_lo, ci_hi, n_cases, n_units, *, min_units=MIN_UNITS, min_cases=MIN_CASES):
    """The paper's label of one cell and curvicost's reason (``""`` but for inconclusive cells).

    First match wins: ``undefined`` (ρ is None), ``inconclusive`` (fewer than ``min_units``
    acting units or ``min_cases`` acting cases, reason ``"<10 units"``, ``"<12 cases"`` or both;
    or no interval, reason ``"no interval"``), ``blind`` (``ci_lo < 0 < ci_hi``),
    ``anti-correlated`` (ρ < 0), ``tracks``.
    """
    if aligned_rho is None or not math.isfinite(aligned_rho):
        return "undefined", ""
    short = _floors(n_cases, n_units, min_units, min_cases)
    if short:
        return "inconclusive", short
    if ci_lo is None or ci_hi is None or not (math.isfinite(ci_lo) and math.isfinite(ci_hi)):
        return "inconclusive", "no interval"
    if ci_lo < 0 < ci_hi:
        return "blind", ""
    if aligned_rho < 0:
        return "anti-correlated", ""
    return "tracks", ""


def _g(v: float) -> str:
    return f"{v:.3g}"


def _cell(metric, cost, x, y, g, unit_names, *, n_boot, seed, picks_cache):
    """ρ (raw, not sign-aligned), interval, and the reason for whatever is null, over the pairs
    of one cell where both values are finite; the fifth value names what is constant, if any
    (``"cost"``, ``"metric"``, ``"both"``, or ``"pairs"`` when fewer than 3 pairs exist)."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, g = x[ok], y[ok], g[ok]
    if x.size < 3:
        return None, None, None, (f"only {x.size} acting case(s) have both {metric} and {cost}, "
                                  "and a correlation needs 3"), "pairs"
    cx = np.unique(x).size < 2
    cy = np.unique(y).size < 2
    if cx or cy:
        if cx and cy:
            what, which = f"the cost {cost} ({_g(y[0])}) and the metric {metric} ({_g(x[0])}) are both", "both"
        elif cy:
            what, which = f"the cost {cost} is constant ({_g(y[0])})", "cost"
        else:
            what, which = f"the metric {metric} is constant ({_g(x[0])})", "metric"
        if which == "both":
            what += " constant"
        return None, None, None, f"{what} on all {x.size} cases, so ρ does not exist", which
    from segscore.kernels.rankstats import spearman

    by_value = np.lexsort((y, x))  # ρ over the pairs in one order whatever the order of cases or units
    rho = float(spearman(x[by_value], y[by_value]))
    # the units as curvicost takes them: in the order they first appear among the cell's cases
    # (the order the masks were given), each unit's cases by value
    present, first, g = np.unique(g, return_index=True, return_inverse=True)
    appearance = np.argsort(first, kind="stable")
    rank = np.empty(present.size, dtype=np.int64)
    rank[appearance] = np.arange(present.size)
    g = rank[g.ravel()]
    order = np.lexsort((y, x, g))
    x, y, g = x[order], y[order], g[order]
    n_groups = present.size
    if n_groups < MIN_CI_UNITS:
        return rho, None, None, (f"no interval: the cell has {n_groups} unit(s) "
                                 f"({_join(unit_names[i] for i in present[appearance])}), and a cluster bootstrap "
                                 f"needs {MIN_CI_UNITS}"), ""
    picks = picks_cache.get(n_groups)
    if picks is None:
        picks = picks_cache[n_groups] = _picks(n_groups, n_boot, seed)
    lo, hi, _ = cluster_interval(x, y, g.astype(np.int64), picks=picks)
    if lo is None:
        return rho, None, None, (f"no interval: every one of the {n_boot} resamples left {cost} or {metric} "
                                 "constant"), ""
    return rho, lo, hi, "", ""


def _floors(n_cases, n_units, min_units, min_cases):
    short = []
    if n_units < min_units:
        short.append(f"<{min_units} units")
    if n_cases < min_cases:
        short.append(f"<{min_cases} cases")
    return ", ".join(short)


# ------------------------------------------------------------------------------------------
# the case table
# ------------------------------------------------------------------------------------------

def _number(v, where):
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ScoreError(f"{where} is {v!r}; fix: give a number or null")
    return float(v)


class _Table:
    """A validated case table: unit, operator and acted per case, value columns on demand."""

    def __init__(self, cases, origin):
        self.origin = origin
        if isinstance(cases, dict):
            cases = _rows_of_columns(cases, origin, "cases")
        if not isinstance(cases, (list, tuple)):
            raise ScoreError(f"{origin}: cases is a {type(cases).__name__}; fix: give a list of case dicts "
                             "or a dict of equal-length columns")
        self.cases = cases
        self.unit, self.operator, acted = [], [], []
        for i, c in enumerate(cases):
            if not isinstance(c, dict):
                raise ScoreError(f"{origin}: cases[{i}] is a {type(c).__name__}; fix: each case is an object "
                                 "with unit, operator and its values")
            for key in ("unit", "operator"):
                v = c.get(key)
                if not isinstance(v, str) or not v:
                    what = "missing" if key not in c else f"{v!r}"
                    raise ScoreError(f"{origin}: cases[{i}].{key} is {what}; fix: name the "
                                     + ("reference mask" if key == "unit" else "error type") + " as a non-empty string")
            a = c.get("acted", True)
            if isinstance(a, (bool, np.bool_)) or (isinstance(a, int) and a in (0, 1)):
                a = bool(a)
            else:
                raise ScoreError(f"{origin}: cases[{i}].acted is {a!r}; fix: true or false")
            self.unit.append(c["unit"])
            self.operator.append(c["operator"])
            acted.append(a)
        self.acted = np.asarray(acted, dtype=bool)
        self._columns = {}

    def has(self, key) -> bool:
        return any(key in c for c, a in zip(self.cases, self.acted) if a)

    def column(self, key) -> np.ndarray:
        """float64 values of acting cases (NaN where absent, null or not finite; 0 where not acting)."""
        col = self._columns.get(key)
        if col is None:
            col = np.zeros(len(self.cases))
            for i, (c, a) in enumerate(zip(self.cases, self.acted)):
                if a:
                    col[i] = _number(c.get(key), f"{self.origin}: cases[{i}].{key}")
            col[~np.isfinite(col)] = np.nan
            self._columns[key] = col
        return col

    def realised(self, i):
        v = self.cases[i].get("realised")
        if isinstance(v, float) and v.is_integer():
            v = int(v)  # curvicost writes numpy integers through json's default=float
        elif isinstance(v, (list, dict)):
            v = json.dumps(v, sort_keys=True)  # compared for equality only
        return v


def _rows_of_columns(cols, origin, where):
    lengths = {k: len(v) for k, v in cols.items() if isinstance(v, (list, tuple))}
    if len(lengths) != len(cols) or len(set(lengths.values())) > 1:
        bad = sorted(set(cols) - set(lengths))
        got = (f"{bad[0]} is a {type(cols[bad[0]]).__name__}" if bad else
               ", ".join(f"{k} has {n}" for k, n in lengths.items()))
        raise ScoreError(f"{origin}: {where} as columns: {got}; fix: one list per key, all of one length")
    n = next(iter(lengths.values()), 0)
    return [{k: cols[k][i] for k in cols} for i in range(n)]


def _names(value, name):
    if isinstance(value, str):
        value = (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise ScoreError(f"{name}: expected a list of names, got {value!r}") from None
    if not out or not all(isinstance(v, str) and v for v in out) or len(set(out)) != len(out):
        raise ScoreError(f"{name}: expected distinct non-empty names, got {list(out)!r}")
    return out



def _join(units, limit=6):
    names = [str(u).rsplit("/", 1)[-1] for u in units]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ------------------------------------------------------------------------------------------
# the audit's findings
# ------------------------------------------------------------------------------------------

class _Resolved:
    """A case table read and checked, with the costs, metrics, operators and acting units its
    findings use: what :func:`findings_from_cases` and :func:`cell_statistics` share."""

    def __init__(self, cases, costs, metrics, min_units, min_cases, n_boot, seed, directions, origin):
        t = _Table(cases, getattr(cases, "source", None) or origin)
        min_units = whole_number(min_units, "min_units", 0)
        min_cases = whole_number(min_cases, "min_cases", 0)
        n_boot = whole_number(n_boot, "n_boot", 1)
        seed = whole_number(seed, "seed", 0)
        lower = set(LOWER_IS_BETTER)
        higher = set(HIGHER_IS_BETTER)
        for m, d in (directions or {}).items():
            if d not in ("higher", "lower") or not isinstance(m, str):
                raise ScoreError(f"directions[{m!r}] is {d!r}; fix: \"higher\" or \"lower\" (is better)")
            (lower if d == "lower" else higher).add(m)
            (higher if d == "lower" else lower).discard(m)

        acting = t.acted
        if costs is None:
            costs = getattr(cases, "costs", None) or tuple(c for c in COSTS if t.has(c)) or COSTS
        costs = _names(costs, "costs")
        for c in costs:
            if not t.has(c) and acting.any():
                held = ", ".join(k for k in _value_keys(t) if k not in METRIC_ORDER) or "none"
                raise ScoreError(f"{t.origin}: no acting case has the cost {c!r}; fix: name a cost the table "
                                 f"holds (numeric columns besides the metrics: {held})")
        if metrics is None:
            metrics = tuple(m for m in METRIC_ORDER if t.has(m) and np.isfinite(t.column(m)[acting]).any())
        else:
            metrics = _names(metrics, "metrics")
            for m in metrics:
                if m not in lower and m not in higher:
                    raise ScoreError(f"metrics: {m!r} has no known direction; fix: pass directions={{{m!r}: "
                                     "\"higher\" or \"lower\"}}")
                if not t.has(m) and acting.any():
                    raise ScoreError(f"{t.origin}: no acting case has the metric {m!r}; fix: name a metric the "
                                     "table holds")

        for k in costs + metrics:
            t.column(k)  # every value read is checked, whether or not its operator gets cells

        ops_all = np.asarray(t.operator, dtype=object)
        units_all = np.asarray(t.unit, dtype=object)
        tried = set(t.operator)
        operators = [o for o in OPERATORS if o in tried] + sorted(tried - set(OPERATORS))
        acting_units = sorted({u for u, a in zip(t.unit, acting) if a})
        unit_index = {u: i for i, u in enumerate(acting_units)}
        gidx = np.asarray([unit_index.get(u, -1) for u in t.unit], dtype=np.int64)

        self.t, self.min_units, self.min_cases, self.n_boot, self.seed = t, min_units, min_cases, n_boot, seed
        self.lower, self.acting, self.costs, self.metrics = lower, acting, costs, metrics
        self.ops_all, self.units_all, self.operators = ops_all, units_all, operators
        self.acting_units, self.gidx = acting_units, gidx

    def acting_rows(self, op) -> np.ndarray:
        """The rows of the operator's acting cases."""
        return np.flatnonzero((self.ops_all == op) & self.acting)

    def cells(self):
        """``(cost, operator, metric, idx)`` of every cell, in the findings' order (operators with
        fewer than 3 acting cases have none); ``idx``: :meth:`acting_rows`."""
        for cost in self.costs:
            for op in self.operators:
                idx = self.acting_rows(op)
                if idx.size < MIN_OPERATOR_CASES:
                    continue
                for metric in self.metrics:
                    yield cost, op, metric, idx

    def cell(self, cost, metric, idx, picks_cache):
        """:func:`_cell` of one cell."""
        return _cell(metric, cost, self.t.column(metric)[idx], self.t.column(cost)[idx], self.gidx[idx],
                     self.acting_units, n_boot=self.n_boot, seed=self.seed, picks_cache=picks_cache)


def findings_from_cases(cases, *, costs=None, metrics=None, min_units=MIN_UNITS, min_cases=MIN_CASES,
                        n_boot=N_BOOT, seed=0, directions=None, cells=None) -> dict:
    """The audit's findings from a case table (see the module docstring), as curvicost 0.3.1's
    ``audit`` computes them from its cases.

    Parameters
    ----------
    cases : list of dicts, dict of columns, or :class:`CaseTable`
        One entry per damaged copy of a reference mask (the prediction; ``unit`` names the
        reference it was scored against).
    costs : names, optional
        The cost quantities to correlate against; default the table's own (a
        :class:`CaseTable` read from an audit) or :data:`COSTS`.
    metrics : names, optional
        Default: every metric of :data:`METRIC_ORDER` with a finite value on some acting case.
    min_units, min_cases : int
        The floors below which a cell is inconclusive (the paper's 10 and 12).
    n_boot, seed : int
        Bootstrap resamples per cell, and the seed every cell starts from.
    directions : dict, optional
        ``{metric: "higher" | "lower"}`` for metrics beyond the built-in ones (or to override them).
    cells : dict, optional
        Cells already computed by :func:`cell_statistics` on this table with the same costs,
        metrics, ``n_boot`` and ``seed`` (the parts merged): those are not computed again.

    Returns
    -------
    dict
        ``n_cases`` and ``n_units`` (acting cases, units with an acting case), ``n_declined``
        (cases where the operator did not act), ``has_ci`` (3 or more acting units), ``min_units``,
        ``min_cases``, ``n_boot``, ``seed``, ``costs``, ``metrics``, ``findings`` (one row per
        (cost, operator, metric) cell with curvicost's fields: cost, operator, metric, n,
        n_units, aligned_rho, ci_lo, ci_hi, label, reason, undefined, inconclusive, blind, anti,
        cost_constant), ``operator_notes`` ({operator: explanation}) and ``notes`` (empty: every
        null is explained in its row's ``reason``).
    """
    r = _Resolved(cases, costs, metrics, min_units, min_cases, n_boot, seed, directions, "findings_from_cases")
    t, min_units, min_cases, n_boot, seed = r.t, r.min_units, r.min_cases, r.n_boot, r.seed
    lower, acting, costs, metrics = r.lower, r.acting, r.costs, r.metrics
    ops_all, units_all, operators, acting_units, gidx = r.ops_all, r.units_all, r.operators, r.acting_units, r.gidx
    notes: dict[str, list[str]] = {}

    def note(op, why):
        if why not in notes.setdefault(op, []):
            notes[op].append(why)

    for op in operators:
        on = ops_all == op
        n_act = int((on & acting).sum())
        tried_units = sorted(set(units_all[on]))
        acted_units = set(units_all[on & acting])
        idle = [u for u in tried_units if u not in acted_units]
        if n_act == 0:
            note(op, f"It left the mask unchanged in all {int(on.sum())} case(s) it was tried on, so it has no "
                     "cells. bridge joins two skeleton tips closer than 12 px (an absolute length) that are far "
                     "apart along the skeleton; thick or heavily pruned structures have no such pair.")
            continue
        if idle:
            note(op, f"It acted in {len(acted_units)} of the {len(tried_units)} unit(s) it was tried on; "
                     f"it changed nothing in {_join(idle)}.")
        if n_act < MIN_OPERATOR_CASES:
            note(op, f"Skipped: {n_act} acting case(s), and a correlation needs {MIN_OPERATOR_CASES}; "
                     "add severities or seeds.")
        elif len(acted_units) < MIN_CI_UNITS:
            note(op, f"No intervals: it acted in {len(acted_units)} unit(s), and a cluster bootstrap over "
                     f"units needs {MIN_CI_UNITS}.")

    findings = []
    short = {}
    picks_cache: dict[int, np.ndarray] = {}
    for cost in costs:
        y_all = t.column(cost)
        for op in operators:
            idx = r.acting_rows(op)
            n_cases = int(idx.size)
            if n_cases < MIN_OPERATOR_CASES:
                continue
            n_units = len(set(gidx[idx].tolist()))
            yv = y_all[idx]
            fin = yv[np.isfinite(yv)]
            cost_constant = np.unique(fin).size < 2
            realised = {(t.unit[i], t.realised(i)) for i in idx if t.realised(i) is not None}
            if realised and len(realised) <= n_cases // 2:
                note(op, f"Its {n_cases} cases hold only {len(realised)} distinct realisation(s) (what the "
                         "operator did, per unit): the severity ladder saturated on a small eligible population, "
                         f"in {_join(sorted({u for u, _ in realised}))}. Repeated copies of one damaged mask "
                         "are not independent evidence.")
            if cost_constant:
                note(op, (f"The cost {cost} stays at {_g(fin[0])} under this operator, so every cell against it is "
                          "undefined: an error type the cost cannot register says the cost is the wrong one "
                          "for it, not that a metric is blind.") if fin.size else
                     f"The cost {cost} is null on every acting case of this operator, so every cell against it is undefined.")
            nonnull = np.isfinite(yv)
            if 0 < int((~nonnull).sum()) and fin.size:
                note(op, f"The cost {cost} is null on {int((~nonnull).sum())} of its {n_cases} acting cases; its cells "
                         "use the others.")
            for metric in metrics:
                xv = t.column(metric)[idx]
                miss = int((~np.isfinite(xv)).sum())
                if 0 < miss < n_cases:
                    note(op, f"The metric {metric} is null on {miss} of its {n_cases} acting cases; its cells use the others.")
                got = cells.get((cost, op, metric)) if cells is not None else None
                rho, lo, hi, why, constant = got if got is not None else r.cell(cost, metric, idx, picks_cache)
                if metric in lower and rho is not None:
                    rho, lo, hi = -rho, (None if hi is None else -hi), (None if lo is None else -lo)
                label, reason = label_cell(rho, lo, hi, n_cases, n_units, min_units=min_units,
                                           min_cases=min_cases)
                if label == "undefined":
                    reason = why
                    if constant == "metric":
                        note(op, f"The metric {metric} does not move under this operator, so its cells are undefined: "
                                 "the error type leaves that metric where it was.")
                    elif constant == "pairs":
                        note(op, f"The metric {metric} and the cost {cost} are both defined on fewer than 3 of its acting cases, "
                                 "so that cell is undefined.")
                elif why:  # no interval: say why beside the floor it missed
                    reason = f"{reason}; {why}" if reason != "no interval" else why
                if label == "inconclusive":
                    short[op] = (n_cases, n_units, _floors(n_cases, n_units, min_units, min_cases))
                findings.append(dict(cost=cost, operator=op, metric=metric, n=n_cases, n_units=n_units,
                                     aligned_rho=rho, ci_lo=lo, ci_hi=hi, label=label, reason=reason,
                                     undefined=label == "undefined", inconclusive=label == "inconclusive",
                                     blind=label == "blind", anti=label == "anti-correlated",
                                     cost_constant=bool(cost_constant)))
    for op, (n_cases, n_units, why) in sorted(short.items()):
        if why:
            note(op, f"It acted in {n_units} unit(s) and {n_cases} case(s), below the floor ({why}): every "
                     "defined cell is inconclusive. Its ρ is kept for the record; it is not a validated "
                     "correlation and never reads as blind or anti-correlated, because a percentile interval "
                     "over so few resampled units cannot tell no relation from too little data. Audit more "
                     "reference masks.")
        else:
            note(op, "Cells without an interval are inconclusive: a verdict needs an interval.")
    n_acting = int(acting.sum())
    return dict(n_cases=n_acting, n_units=len(acting_units), n_declined=len(t.cases) - n_acting,
                has_ci=len(acting_units) >= MIN_CI_UNITS, min_units=min_units, min_cases=min_cases,
                n_boot=n_boot, seed=seed, costs=list(costs), metrics=list(metrics), findings=findings,
                operator_notes={op: " ".join(v) for op, v in notes.items()}, notes={})


def cell_statistics(cases, *, costs=None, metrics=None, n_boot=N_BOOT, seed=0, directions=None, part=0,
                    parts=1) -> dict:
    """The correlations and intervals of part ``part`` of ``parts`` of the cells
    :func:`findings_from_cases` computes (every ``parts``-th cell in its order, from the
    ``part``-th): ``{(cost, operator, metric): value}``, to be merged and given back to it as
    ``cells``. Each cell depends on its own cases and the seed alone, so the parts may run in any
    process and the findings are those of one call."""
    r = _Resolved(cases, costs, metrics, MIN_UNITS, MIN_CASES, n_boot, seed, directions, "cell_statistics")
    parts = whole_number(parts, "parts", 1)
    part = whole_number(part, "part", 0)
    if part >= parts:
        raise ScoreError(f"part {part} of {parts}: expected 0 <= part < parts")
    picks_cache: dict[int, np.ndarray] = {}
    return {(cost, op, metric): r.cell(cost, metric, idx, picks_cache)
            for k, (cost, op, metric, idx) in enumerate(r.cells()) if k % parts == part}


def _value_keys(t):
    keys = {}
    for c, a in zip(t.cases, t.acted):
        if a:
            for k, v in c.items():
                if k not in ("unit", "operator", "acted", "severity", "seed", "realised", "population") and \
                        (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))):
                    keys[k] = None
    return list(keys)


# ------------------------------------------------------------------------------------------
# reading case tables
# ------------------------------------------------------------------------------------------

_FIX = ("give the JSON of `curvicost audit ... --include-cases --json FILE` or a segscore case table "
        f"({{\"format\": \"{CASE_TABLE_FORMAT}\", \"version\": 1, \"cases\": [...]}})")


def read_cases(path) -> CaseTable:
    """Read a case table: curvicost 0.3.1's ``audit --include-cases --json`` output, or a segscore
    case table (module docstring). Raises :class:`~segscore.errors.InputFileError` for a missing
    file and :class:`~segscore.errors.ScoreError` (one line naming the file and the fix) for a
    malformed one."""
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"{p}: " + ("is a folder" if p.is_dir() else "no such file") + f"; {_FIX}")
    from segscore.io import budget

    try:
        text = budget.read_text(p, fix=_FIX)
        doc = json.loads(text)
    except OSError as exc:
        raise InputFileError(f"{p}: cannot be read ({exc.strerror or exc}); {_FIX}") from None
    except UnicodeDecodeError:
        raise ScoreError(f"{p}: not a text file (not UTF-8); {_FIX}") from None
    except json.JSONDecodeError as exc:
        raise ScoreError(f"{p}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); {_FIX}") from None
    except RecursionError:
        raise ScoreError(f"{p}: JSON nested too deeply; {_FIX}") from None
    where = str(p)
    costs = None
    if isinstance(doc, list):
        fmt, cases = CASE_TABLE_FORMAT, doc
    elif isinstance(doc, dict) and "format" in doc:
        if doc.get("format") != CASE_TABLE_FORMAT:
            raise ScoreError(f"{p}: format is {doc.get('format')!r}, not {CASE_TABLE_FORMAT!r}; {_FIX}")
        if doc.get("version", 1) != 1:
            raise ScoreError(f"{p}: case table version {doc.get('version')!r}; this segscore reads version 1")
        fmt, cases = CASE_TABLE_FORMAT, doc.get("cases")
        if "costs" in doc and doc["costs"] is not None:
            try:
                costs = _names(doc["costs"], "costs")
            except ScoreError as exc:
                raise ScoreError(f"{p}: {exc}") from None
        if cases is None:
            raise ScoreError(f"{p}: has no \"cases\"; {_FIX}")
    elif isinstance(doc, dict) and "cases" in doc:
        fmt, cases = "curvicost", doc["cases"]
        if cases is None:
            raise ScoreError(f"{p}: curvicost's audit JSON without its cases (written without --include-cases); "
                             "fix: rerun `curvicost audit ... --include-cases --json FILE`")
        found = doc.get("findings")
        if isinstance(found, list):
            costs = tuple(dict.fromkeys(f.get("cost") for f in found if isinstance(f, dict)
                                        and isinstance(f.get("cost"), str))) or None
    else:
        raise ScoreError(f"{p}: a JSON {type(doc).__name__} without \"cases\"; {_FIX}")
    if isinstance(cases, dict):
        cases = _rows_of_columns(cases, where, "cases")
    if not isinstance(cases, list):
        raise ScoreError(f"{p}: \"cases\" is a {type(cases).__name__}; {_FIX}")
    table = _Table(cases, where)  # validates unit, operator, acted
    if fmt == "curvicost":
        for i, c in enumerate(cases):  # every case: the ladder's declined cases are matched on these
            for key in ("severity", "seed"):
                if key in c and c[key] is not None and (isinstance(c[key], bool) or not isinstance(c[key], (int, float))
                                                         or not math.isfinite(c[key])):
                    raise ScoreError(f"{p}: cases[{i}].{key} is {c[key]!r}; fix: a finite number")
        cases = [dict(c, acted=c.get("acted", True)) for c in cases] + _declined(doc, cases)
    del table
    return CaseTable(cases, source=where, format=fmt, costs=costs)


def _declined(doc, cases):
    """The rungs of a curvicost audit's ladder a unit has no case for: the operator was tried
    there and changed nothing (or refused the severity), so curvicost recorded no case."""
    ladder = doc.get("ladder")
    if not isinstance(ladder, dict):
        return []
    sev = ladder.get("severities")
    seeds = ladder.get("seeds") or [0]
    if not isinstance(sev, dict) or not isinstance(seeds, list) or not seeds:
        return []
    have = {(c["unit"], c["operator"], c.get("severity"), c.get("seed")) for c in cases}
    units = sorted({c["unit"] for c in cases})
    out = []
    seeds = [x for x in seeds if isinstance(x, int) and not isinstance(x, bool)] or [0]
    for op, levels in sev.items():
        if not isinstance(levels, list) or op not in OPERATORS:  # a rung of no known operator: no case
            continue
        for s in levels:
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                continue
            for seed in (seeds if op != "radius" else seeds[:1]):
                for u in units:
                    if (u, op, float(s), seed) not in have and (u, op, s, seed) not in have:
                        out.append(dict(unit=u, operator=op, severity=float(s), seed=seed, acted=False))
    return out
