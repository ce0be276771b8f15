"""Skeleton-graph kernels: neighbour degree and chain tracing on a padded, flattened skeleton.

The skeleton is padded by one zero voxel on every side and flattened (C order), so a
neighbour of voxel ``i`` is ``i + offsets[m]`` with no bounds check. ``offsets`` lists the
8 (2D) or 26 (3D) neighbours in lexicographic order of their (dz, dy, dx) steps; tracing
follows that order wherever it has a choice, so the chains come out in a fixed order.

Arrays in, arrays out: the caller (``segscore.curvilinear.graph``) pads, labels the junction
clusters (:func:`segscore.kernels.components.label_subset`) and turns the chains into a graph;
the shared union-find also gives the components of a node graph (:func:`node_components`).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.components import label_subset, neighbour_offsets  # noqa: F401  (callers use them from here)
from segscore.kernels.components import find, link


@jit
def neighbour_degree(skel, pixels, offsets, out):
    """Count skeleton neighbours of each skeleton voxel.

    Parameters
    ----------
    skel : (P,) uint8, the padded, flattened skeleton (0/1).
    pixels : (K,) int64, flat indices of the skeleton voxels.
    offsets : (M,) int64, neighbour offsets (see :func:`neighbour_offsets`).
    out : (K,) int32, filled with the neighbour count of ``pixels[k]``.

    Notes
    -----
    Does not check that ``pixels`` are skeleton voxels or that the border is zero.
    """
    for k in range(pixels.shape[0]):
        p = pixels[k]
        c = 0
        for m in range(offsets.shape[0]):
            if skel[p + offsets[m]]:
                c += 1
        out[k] = c


@jit
def trace_chains(skel, node_of, node_pix, pix_slot, offsets, step_len, edge_u, edge_v, edge_ptr, edge_len, path):
    """Trace every chain between node voxels; returns (n_edges, n_path).

    Parameters
    ----------
    skel : (P,) uint8 padded flat skeleton.
    node_of : (P,) int32, node id of a node voxel (end point or junction-cluster voxel), else -1.
    node_pix : (K,) int64, the node voxels in visiting order (by node id, then flat index).
    pix_slot : (P,) int32, position of a node voxel in ``node_pix``, else -1.
    offsets, step_len : (M,) neighbour offsets and their lengths.
    edge_u, edge_v : (E,) int64 outputs: the node a chain starts from and the node it ends at.
    edge_ptr : (E + 1,) int64 output: chain ``e`` is ``path[edge_ptr[e]:edge_ptr[e + 1]]``.
    edge_len : (E,) float64 output: arc length (sum of step lengths).
    path : (T,) int64 output: flat voxel indices of every chain, both end voxels included.

    Notes
    -----
    From each node voxel, each neighbour that is not in the same node starts a chain unless
    that (voxel, direction) was already walked from the other end; the walk follows the first
    neighbour (in offset order) that is not the previous voxel until it reaches a node voxel.
    A chain may return to its own node (a loop, or a one-voxel hop between two voxels of one
    junction cluster): it is kept as a self-loop. Capacities are not checked: size ``E`` to
    ``K * M`` and ``T`` to the skeleton size plus ``2 * E``.
    """
    n_off = offsets.shape[0]
    K = node_pix.shape[0]
    seen = np.zeros((K, n_off), dtype=np.bool_)
    ne = 0
    npth = 0
    edge_ptr[0] = 0
    for kk in range(K):
        px = node_pix[kk]
        src = node_of[px]
        for m in range(n_off):
            step = px + offsets[m]
            if not skel[step]:
                continue
            if node_of[step] == src:
                continue
            if seen[kk, m]:
                continue
            seen[kk, m] = True
            start = npth
            path[npth] = px
            path[npth + 1] = step
            npth += 2
            length = step_len[m]
            prev = px
            cur = step
            dead = False
            while node_of[cur] < 0:
                nxt = -1
                for m2 in range(n_off):
                    q = cur + offsets[m2]
                    if skel[q] and q != prev:
                        nxt = q
                        length += step_len[m2]
                        break
                if nxt < 0:
                    dead = True
                    break
                prev = cur
                cur = nxt
                path[npth] = cur
                npth += 1
            if dead:
                npth = start
                continue
            # the reverse walk (cur -> prev) is the same chain: mark it walked
            back = prev - cur
            for m2 in range(n_off):
                if offsets[m2] == back:
                    seen[pix_slot[cur], m2] = True
                    break
            edge_u[ne] = src
            edge_v[ne] = node_of[cur]
            edge_len[ne] = length
            ne += 1
            edge_ptr[ne] = npth
    return ne, npth


@jit
def prune_spurs(edge_u, edge_v, edge_len, n_nodes, min_length, alive):
    """Remove short terminal chains, pass by pass, until none is left; returns the count removed.

    Parameters
    ----------
    edge_u, edge_v : (E,) int64 node ids; edge_len : (E,) float64.
    n_nodes : int, number of nodes.
    min_length : float; a chain with a degree-1 end and ``length < min_length`` is removed.
    alive : (E,) bool, in/out: edges still in the graph.

    Notes
    -----
    One pass removes every chain that has an end of degree 1 at the start of the pass (a
    self-loop counts 2 towards its node's degree), so the result does not depend on edge
    order. Degrees are recomputed between passes.
    """
    E = edge_u.shape[0]
    deg = np.zeros(n_nodes, dtype=np.int64)
    removed = 0
    while True:
        deg[:] = 0
        for e in range(E):
            if alive[e]:
                deg[edge_u[e]] += 1
                deg[edge_v[e]] += 1
        changed = 0
        for e in range(E):
            if alive[e] and edge_len[e] < min_length and (deg[edge_u[e]] == 1 or deg[edge_v[e]] == 1):
                alive[e] = False
                changed += 1
        removed += changed
        if changed == 0:
            break
    return removed


@jit
def node_components(n, eu, ev, out):
    """Connected component of every node: ``out[i]`` is the smallest node id of ``i``'s
    component (union-find over the edges ``eu[e] - ev[e]``).

    Parameters
    ----------
    n : number of nodes; eu, ev : (E,) int64 edge ends; out : (n,) int64 output.

    Notes
    -----
    Does not check that ids lie in 0..n-1.
    """
    for i in range(n):
        out[i] = i
    for e in range(eu.shape[0]):
        link(out, find(out, np.int64(eu[e])), find(out, np.int64(ev[e])))  # union, without its own kernel
    for i in range(n):  # a parent is smaller than its child: resolve in increasing order
        out[i] = out[out[i]]
