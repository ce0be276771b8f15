"""Generated challengeR-style long tables (``task,case,algo,value``; an empty value is missing)
and the bootstrap draws given to the R oracle: ``python make_tables.py [OUT_DIR]``.

Generated data only (seed :data:`SEED`), no R. The answers beside each table (``*.json``) were
made by challengeR in R from these files; see README.md in this folder.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

SEED = 20261203
#: bootstrap draws recorded with challengeR's rankings: ``default_rng(BOOT_SEED).integers(0, n,
#: size=(BOOT_RESAMPLES, n))`` over the n cases of the task in sorted order of their ids
BOOT_SEED = 0
BOOT_RESAMPLES = 50


def _names(prefix: str, k: int, width: int) -> list[str]:
    return [f"{prefix}{i:0{width}d}" for i in range(1, k + 1)]


def _dice_like(rng, n_cases: int, effects, noise: float) -> np.ndarray:
    """values (models x cases) in [0, 1]: a case difficulty shared by every model, a model
    effect, and noise of its own (clipped: some exact 0s and 1s)."""
    base = rng.beta(6.0, 2.0, size=n_cases)
    eff = np.asarray(effects, float)[:, None]
    return np.clip(base[None, :] + eff + rng.normal(0.0, noise, size=(eff.shape[0], n_cases)), 0.0, 1.0)


def single_12x200(rng):
    """One task, 12 models x 200 cases, larger is better; a few models close to one another."""
    effects = [0.06, 0.05, 0.047, 0.04, 0.03, 0.029, 0.02, 0.0, -0.01, -0.03, -0.05, -0.09]
    v = _dice_like(rng, 200, effects, 0.05)
    return {"T1": (_names("m", 12, 2), _names("c", 200, 3), v)}


def tasks_missing(rng):
    """Three tasks (60, 45, 80 cases), 8 models, larger is better, with missing values: about
    5 % at random, alg08 missing a fifth of T2, and case c005 of T3 scored by alg01 only."""
    effects = [0.05, 0.045, 0.03, 0.02, 0.01, 0.0, -0.02, -0.04]
    algos = _names("alg", 8, 2)
    out = {}
    for task, n in (("T1", 60), ("T2", 45), ("T3", 80)):
        v = _dice_like(rng, n, rng.permutation(effects), 0.06)
        v[rng.random(v.shape) < 0.05] = np.nan
        if task == "T2":
            v[7, rng.choice(n, size=n // 5, replace=False)] = np.nan
        if task == "T3":
            v[1:, 4] = np.nan
        out[task] = (algos, _names("c", n, 3), v)
    return out


def ties(rng):
    """One task, 10 models x 150 cases, larger is better, values rounded to 2 decimals: cases
    c001-c010 all 1.00, c011-c015 all 0.00, m10 a copy of m09 (every difference zero), m08
    equal to m07 on 70 % of the cases."""
    effects = [0.03, 0.02, 0.02, 0.01, 0.005, 0.0, 0.0, 0.0, -0.01, -0.01]
    v = np.round(_dice_like(rng, 150, effects, 0.03), 2)
    v[:, :10] = 1.0
    v[:, 10:15] = 0.0
    v[9] = v[8]
    same = rng.random(150) < 0.7
    v[7, same] = v[6, same]
    return {"T1": (_names("m", 10, 2), _names("c", 150, 3), v)}


def smaller_better(rng):
    """Two tasks (70 and 90 cases), 7 models, a distance where smaller is better (HD95-like, mm,
    rounded to 3 decimals)."""
    factors = [0.8, 0.85, 0.9, 1.0, 1.0, 1.15, 1.4]
    algos = _names("alg", 7, 1)
    out = {}
    for task, n in (("T1", 70), ("T2", 90)):
        scale = rng.lognormal(1.0, 0.6, size=n)
        v = scale[None, :] * np.asarray(rng.permutation(factors))[:, None] * rng.lognormal(0.0, 0.35, size=(7, n))
        out[task] = (algos, _names("c", n, 3), np.round(v, 3))
    return out


#: name -> (maker, direction, na treatments given to the oracle)
TABLES = {
    "single_12x200": (single_12x200, "larger", ["none"]),
    "tasks_missing": (tasks_missing, "larger", ["na.rm", "0", "none"]),
    "ties": (ties, "larger", ["none"]),
    "smaller_better": (smaller_better, "smaller", ["none"]),
}
#: the tables whose rankings were also recorded on given bootstrap draws
BOOTSTRAPPED = ("single_12x200", "ties")


def write_table(path: Path, tasks: dict) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["task", "case", "algo", "value"])
        for task, (algos, cases, v) in tasks.items():
            for a, algo in enumerate(algos):
                for c, case in enumerate(cases):
                    x = v[a, c]
                    w.writerow([task, case, algo, "" if np.isnan(x) else repr(float(x))])


def boot_index(n: int) -> np.ndarray:
    return np.random.default_rng(BOOT_SEED).integers(0, n, size=(BOOT_RESAMPLES, n))


def main(argv=None) -> int:
    out = Path((argv or sys.argv[1:] or [Path(__file__).parent])[0])
    out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for k, (name, (maker, direction, modes)) in enumerate(TABLES.items()):
        tasks = maker(np.random.default_rng([SEED, k]))
        write_table(out / f"{name}.csv", tasks)
        manifest[name] = {"csv": f"{name}.csv", "json": f"{name}.json", "direction": direction,
                          "na_treat": modes, "generator": f"{maker.__name__}(numpy.random.default_rng([{SEED}, {k}]))",
                          "rows": sum(v.size for _, _, v in tasks.values())}
        if name in BOOTSTRAPPED:
            (_, cases, _), = tasks.values()
            np.savetxt(out / f"{name}_boot_index.csv", boot_index(len(cases)), fmt="%d", delimiter=",")
            manifest[name]["bootstrap"] = {"index": f"{name}_boot_index.csv", "json": f"{name}_bootstrap.json",
                                           "draws": f"numpy.random.default_rng({BOOT_SEED}).integers(0, n, "
                                                    f"size=({BOOT_RESAMPLES}, n)), n = {len(cases)}"}
    with open(out / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
