"""Union-find over an int array of parents, the smaller root always kept (so every root is the
smallest member of its set, and a parent is always smaller than its child)."""

from __future__ import annotations

from segscore.kernels._jit import jit


@jit
def find(parent, a):
    """Root of ``a``'s set, halving the path on the way."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@jit
def union(parent, a, b):
    """Join the sets of ``a`` and ``b`` under the smaller of their roots."""
    ra = find(parent, a)
    rb = find(parent, b)
    if ra < rb:
        parent[rb] = ra
    elif rb < ra:
        parent[ra] = rb
