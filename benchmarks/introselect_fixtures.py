"""Write the GNU C++ library's introselect past its depth limit as a test fixture.

``std::nth_element`` (libstdc++) partitions around median-of-three pivots until a depth limit of
``2 * floor(log2(n))`` and then finishes with a heap selection. scipy's ``cKDTree`` builds its
tree with it, and segscore's ``kernels/kdtree.introselect`` replays it, so that equal keys end
where scipy leaves them. On real data the depth limit is hardly ever reached, so the tests
compare the heap-selection path against the library itself: this script compiles a small C++
program (``g++ -O1``) that calls the library's own ``std::__introselect`` with a chosen depth
limit, runs it on random whole-number keys full of ties, and writes each case (``keys``, ``nth``, ``depth``,
and the library's index order ``want``) to ``tests/data/libstdcxx/introselect.json``. The
comparator is scipy's: ``keys[a] < keys[b]`` on an index array that starts as 0..n-1.

    PYTHONPATH=. python benchmarks/introselect_fixtures.py [--out tests/data/libstdcxx]

Needs g++ with libstdc++ (the record says which version made the file).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

PROGRAM = r"""
#include <algorithm>
#include <cstdio>
#include <vector>
// reads cases "n nth depth k_0 ... k_{n-1}" until EOF; prints the index order of each
int main() {
    long n, nth, depth;
    while (std::scanf("%ld %ld %ld", &n, &nth, &depth) == 3) {
        std::vector<double> key(n);
        for (long i = 0; i < n; ++i) std::scanf("%lf", &key[i]);
        std::vector<long> idx(n);
        for (long i = 0; i < n; ++i) idx[i] = i;
        auto less = [&](long a, long b) { return key[a] < key[b]; };
        std::__introselect(idx.begin(), idx.begin() + nth, idx.end(), depth,
                           __gnu_cxx::__ops::__iter_comp_iter(less));
        for (long i = 0; i < n; ++i) std::printf(i ? " %ld" : "%ld", idx[i]);
        std::printf("\n");
    }
    return 0;
}
"""


def cases(seed=0, count=160):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        n = int(rng.integers(4, 100))
        levels = int(rng.integers(1, 8))  # few distinct keys: many ties
        keys = rng.integers(0, levels, n)  # whole numbers, compared as doubles
        nth = int(rng.integers(0, n))
        depth = int(k % 4)  # 0-3 partitions, then the heap selection
        out.append({"keys": keys.tolist(), "nth": nth, "depth": depth})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "data" / "libstdcxx")
    args = ap.parse_args()
    todo = cases()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "introselect.cpp"
        exe = Path(tmp) / "introselect"
        src.write_text(PROGRAM)
        subprocess.run(["g++", "-O1", "-std=c++17", "-o", str(exe), str(src)], check=True)
        stdin = "".join(f"{len(c['keys'])} {c['nth']} {c['depth']} " + " ".join(str(v) for v in c["keys"]) + "\n"
                        for c in todo)
        got = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
    version = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    for c, line in zip(todo, got, strict=True):
        c["want"] = [int(v) for v in line.split()]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "introselect.json"
    path.write_text(json.dumps({"made_by": f"benchmarks/introselect_fixtures.py with {version}",
                                "cases": todo}, separators=(",", ":")) + "\n")
    print(f"{path}: {len(todo)} cases")


if __name__ == "__main__":
    main()
