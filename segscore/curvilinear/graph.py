"""Binary mask -> skeleton -> chain graph (nodes: end points, junction clusters; edges: chains).

The skeleton is ``skimage.morphology.skeletonize``'s, made by segscore's kernels
(:mod:`segscore.curvilinear.thinning`), and the radius map is the mask's exact
Euclidean distance transform on the skeleton voxels (:func:`radius_on_skeleton`, equal there to
``scipy.ndimage.distance_transform_edt``), so the voxels and radii are curvicost's. The tracing runs in :mod:`segscore.kernels.skelgraph`.

Definitions (curvicost 0.3.1's, which the parity tests pin):

* a skeleton voxel with one skeleton neighbour (8-connected in 2D, 26 in 3D) is an end point;
  voxels with three or more form junction clusters (connected groups), one node each, placed
  at the middle voxel of the cluster in C order, radius the cluster's mean distance value;
* node ids: clusters in label order, then end points in C order, then loops;
* an edge is a chain between two node voxels with both end voxels included: length = sum of
  the Euclidean steps, radius = max(mean distance value along it, 0.5);
* a skeleton component with no node (a ring, or a lone voxel) becomes a loop node (placed at
  its first voxel in C order; curvicost places it at an arbitrary voxel) with a self-loop
  of length = voxel count;
* spur pruning removes, pass by pass, chains shorter than ``prune_px`` with an end of
  degree 1, then drops nodes left with no edge.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np


@dataclass
class SkeletonGraph:
    """A traced skeleton graph. Node and edge arrays keep every traced item; ``*_alive`` say
    which survive pruning. ``path[edge_ptr[e]:edge_ptr[e+1]]`` are edge ``e``'s voxels
    (flat indices into the unpadded mask, from ``edge_u[e]``'s end to ``edge_v[e]``'s)."""

    shape: tuple
    node_pos: np.ndarray  # (N, ndim) int64
    node_radius: np.ndarray  # (N,)
    edge_u: np.ndarray
    edge_v: np.ndarray
    edge_len: np.ndarray
    edge_rad: np.ndarray
    edge_ptr: np.ndarray
    path: np.ndarray
    edge_alive: np.ndarray
    node_alive: np.ndarray
    pair_first: np.ndarray  # (E,) index of the first edge traced between the same two nodes
    spacing: tuple | None = None  # voxel size per axis; None: unit (lengths in voxels)

    @property
    def n_nodes(self) -> int:
        return int(self.node_pos.shape[0])

    def alive_edges(self) -> np.ndarray:
        return np.flatnonzero(self.edge_alive)

    def alive_nodes(self) -> np.ndarray:
        return np.flatnonzero(self.node_alive)

    def degree(self) -> np.ndarray:
        e = self.alive_edges()
        n = self.n_nodes
        return np.bincount(self.edge_u[e], minlength=n) + np.bincount(self.edge_v[e], minlength=n)

    def edge_order(self) -> np.ndarray:
        """Alive edges in the order networkx iterates curvicost's graph (first node, then the
        first time its neighbour was joined, then tracing order)."""
        e = self.alive_edges()
        a = np.minimum(self.edge_u[e], self.edge_v[e])
        return e[np.lexsort((e, self.pair_first[e], a))]

    def components(self) -> np.ndarray:
        """Connected-component id of every node over the alive edges (-1 for a dead node)."""
        from segscore.kernels.skelgraph import node_components

        e = self.alive_edges()
        lab = np.empty(self.n_nodes, dtype=np.int64)
        node_components(self.n_nodes, self.edge_u[e], self.edge_v[e], lab)
        lab[~self.node_alive] = -1
        return lab


def skeletonize(mask: np.ndarray) -> np.ndarray:
    """``skimage.morphology.skeletonize(mask)`` (Zhang-Suen in 2D, Lee in 3D), as a bool array.

    Made by segscore's kernels, voxel for voxel the same skeleton (:mod:`segscore.curvilinear.thinning`:
    in 2D with the removal table measured from the installed scikit-image, in 3D Lee's procedure).
    """
    from segscore.curvilinear import thinning

    return thinning.skeletonize(mask)


def distance_map(mask: np.ndarray, spacing=None) -> np.ndarray:
    from scipy import ndimage

    return ndimage.distance_transform_edt(mask, sampling=None if spacing is None else [float(v) for v in spacing])


@dataclass
class SkeletonRadius:
    """The distance map of a mask on the voxels of its skeleton only: ``val[i]`` at the flat
    (C-order) voxel index ``idx[i]``, ascending. A full-size float64 map would cost 8 bytes per
    voxel of the image (394 MB at 5980 x 8240) for values read on the skeleton alone."""

    idx: np.ndarray
    val: np.ndarray

    def at(self, flat) -> np.ndarray:
        """Values at the flat indices ``flat``, which must be skeleton voxels."""
        return self.val[np.searchsorted(self.idx, flat)]


def is_unit(spacing) -> bool:
    """Whether ``spacing`` leaves lengths in voxels (None, or 1 on every axis)."""
    return spacing is None or all(float(v) == 1.0 for v in spacing)


def radius_on_skeleton(mask: np.ndarray, skel: np.ndarray, spacing=None) -> SkeletonRadius:
    """The distance map of ``mask`` on the voxels of ``skel``.

    Equal there to ``scipy.ndimage.distance_transform_edt(mask)`` (the kernel
    :func:`segscore.kernels.edt.edt_at` computes the same exact minimum), at a fraction of the
    cost and memory: the costs and operators read the radius only on skeleton voxels. With a
    ``spacing`` (one voxel size per axis) it is scipy's anisotropic transform
    (``sampling=spacing``) there, in the spacing's unit.
    """
    idx = np.flatnonzero(skel.ravel())
    return SkeletonRadius(idx, distance_at(mask, idx, spacing))


#: half-width of the box whose skeleton voxels give a voxel's direction (length_weights)
TANGENT_RADIUS = 3


def length_weights(skel: np.ndarray, idx: np.ndarray, spacing) -> np.ndarray | None:
    """Each skeleton voxel's physical length (:mod:`segscore.kernels.tangent`: 1 per voxel at
    unit spacing, where None is returned and lengths stay voxel counts)."""
    if is_unit(spacing):
        return None
    from segscore.kernels.tangent import chessboard_weights

    sk3 = np.ascontiguousarray(skel, dtype=bool).reshape((1,) * (3 - skel.ndim) + skel.shape).view(np.uint8)
    c = np.zeros((len(idx), 3), dtype=np.int64)
    if len(idx):
        c[:, 3 - skel.ndim:] = np.array(np.unravel_index(idx, skel.shape)).T
    sp3 = np.ones(3)
    sp3[3 - skel.ndim:] = [float(v) for v in spacing]
    out = np.empty(len(idx))
    chessboard_weights(sk3, c, sp3, TANGENT_RADIUS, out)
    return out


def distance_at(mask: np.ndarray, idx: np.ndarray, spacing=None) -> np.ndarray:
    """``scipy.ndimage.distance_transform_edt(mask, sampling=spacing).ravel()[idx]``, evaluated at
    those voxels only (:func:`segscore.kernels.edt.edt_at`; no distance map)."""
    from segscore.kernels.edt import edt_at

    vals = np.empty(len(idx))
    if len(idx):
        m3 = np.ascontiguousarray(mask, dtype=bool).reshape((1,) * (3 - mask.ndim) + mask.shape).view(np.uint8)
        c = np.zeros((len(idx), 3), dtype=np.int64)
        c[:, 3 - mask.ndim:] = np.array(np.unravel_index(idx, mask.shape)).T
        sp3 = np.ones(3)
        if spacing is not None:
            sp3[3 - mask.ndim:] = [float(v) for v in spacing]
        edt_at(m3, c, sp3, vals)
        if not np.isfinite(vals).all():  # no background anywhere: scipy's convention
            vals = distance_map(mask, spacing).ravel()[idx]
    return vals


_scratch = threading.local()
#: largest scratch (bytes) a thread keeps between calls: an audit's masks reuse theirs, while a
#: full-size segment (5980 x 8240: 250 MB of it) leaves nothing behind in a notebook's thread
SCRATCH_KEEP = 16 << 20


def _padded(mask: np.ndarray) -> np.ndarray:
    """``np.pad(mask != 0, 1)`` in a bool buffer this thread reuses while the shape repeats
    (only the interior is ever written, so the border stays 0). A fresh full-size array a call
    cost more in page faults than the labelling itself."""
    shape = tuple(n + 2 for n in mask.shape)
    buf = getattr(_scratch, "pad", None)
    if buf is None or buf.shape != shape:
        buf = np.zeros(shape, dtype=bool)
        _scratch.pad = buf if buf.nbytes <= SCRATCH_KEEP else None
    buf[(slice(1, -1),) * mask.ndim] = mask
    return buf


def _slots(n: int) -> np.ndarray:
    """An int32 scratch of ``n`` entries (contents undefined), reused by this thread."""
    buf = getattr(_scratch, "slots", None)
    if buf is None or buf.size < n:
        buf = np.empty(n, dtype=np.int32)
        _scratch.slots = buf if buf.nbytes <= SCRATCH_KEEP else None
    return buf[:n]


def _components(mask: np.ndarray):
    """``(pixels, ids, n, padded shape)``: the mask's voxels as flat indices of the padded array
    and their 0-based component numbers (:func:`label`'s order)."""
    from segscore.kernels import components as K

    m = np.asarray(mask)
    pad = _padded(m if m.dtype == bool else m != 0)
    flat = pad.ravel()
    pixels = np.flatnonzero(flat).astype(np.int64)  # of a bool array: 5x faster than of uint8
    ids = np.empty(len(pixels), dtype=np.int64)
    offsets, _ = K.neighbour_offsets(pad.shape)
    n = K.label_subset(flat.view(np.uint8), pixels, _slots(flat.size), offsets, ids) if len(pixels) else 0
    return pixels, ids, int(n), pad.shape


def voxel_components(mask: np.ndarray) -> np.ndarray:
    """The 0-based component number (:func:`label`'s, minus 1) of each set voxel of ``mask``,
    in C order: K entries, no image-sized array."""
    return _components(mask)[1]


def label(mask: np.ndarray):
    """Connected components, 8-connected in 2D, 26 in 3D: (int32 labels 1..n, n).

    Numbered in raster order of each component's first voxel, as ``scipy.ndimage.label`` with
    a full structuring element numbers them (the tests compare the two); union-find in
    :func:`segscore.kernels.skelgraph.label_subset`, without importing scipy.ndimage.
    """
    m = np.asarray(mask)
    pixels, ids, n, pshape = _components(m)
    lab = np.zeros(m.shape, dtype=np.int32)
    if len(pixels):  # padded flat index -> the image's
        inner = np.unravel_index(pixels, pshape)
        lab.ravel()[np.ravel_multi_index(tuple(c - 1 for c in inner), m.shape)] = ids + 1
    return lab, n


def count_components(mask: np.ndarray) -> int:
    """``label(mask)[1]`` without the label image."""
    return _components(np.asarray(mask))[2]


def nonzero_coords(a: np.ndarray) -> np.ndarray:
    """``np.argwhere(a)`` (int64 (n, ndim), C order) from the flat indices: NumPy's
    multi-dimensional ``nonzero`` scans five times slower than ``flatnonzero``."""
    a = np.asarray(a)
    idx = np.flatnonzero(a if a.dtype == bool else a != 0)
    if a.ndim <= 1:
        return idx.reshape(-1, a.ndim).astype(np.int64, copy=False)
    return np.stack(np.unravel_index(idx, a.shape), axis=1).astype(np.int64, copy=False)


def csr_order(u: np.ndarray, n: int):
    """``(indptr, order)`` of a graph given as directed edges from nodes ``u`` (in ``[0, n)``):
    the edges of node ``i`` are ``order[indptr[i]:indptr[i + 1]]``, in their given order
    (the CSR form the graph kernels read: ``indices = v[order]``, ``weights = w[order]``)."""
    u = np.asarray(u, dtype=np.int64)
    order = np.argsort(u, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(u, minlength=n))]).astype(np.int64)
    return indptr, order


def nearest_voxels(cand, queries, shape, max_d2: int, key=None):
    """Nearest of the voxels ``cand`` to each voxel of ``queries`` within squared distance
    ``max_d2``: ``(d2, idx, tied)`` with ``d2`` -1 and ``idx`` -1 where none is that close,
    ``idx`` the lowest-numbered nearest candidate, and ``tied`` True where nearest candidates
    of different ``key`` (default: all different) lie at the same distance.

    Returns None when a query is not an integer position inside ``shape`` (the caller then
    needs a general nearest-neighbour search).
    """
    from segscore.kernels.components import ball_offsets
    from segscore.kernels.nearest import nearest_within

    nd = len(shape)
    q = np.asarray(queries, dtype=float).reshape(-1, nd)
    qi = np.rint(q).astype(np.int64)
    if not (np.array_equal(qi, q) and ((qi >= 0) & (qi < np.asarray(shape))).all()):
        return None
    cand = np.asarray(cand, dtype=np.int64).reshape(-1, nd)
    shape3 = np.array((1,) * (3 - nd) + tuple(shape), dtype=np.int64)
    flat = np.ravel_multi_index(tuple(cand.T), shape) if len(cand) else np.zeros(0, np.int64)
    order = np.argsort(flat, kind="stable").astype(np.int64)
    key = np.arange(len(cand), dtype=np.int64) if key is None else np.asarray(key, dtype=np.int64)
    q3 = np.zeros((len(qi), 3), dtype=np.int64)
    q3[:, 3 - nd:] = qi
    off = ball_offsets(np.sqrt(int(max_d2)))  # (dz, dy, dx) by squared length
    if nd == 2:
        off = np.ascontiguousarray(off[off[:, 0] == 0])
    off_d2 = (off**2).sum(axis=1)
    d2 = np.empty(len(qi), np.int64)
    idx = np.empty(len(qi), np.int64)
    tied = np.empty(len(qi), bool)
    nearest_within(shape3, np.ascontiguousarray(flat[order], dtype=np.int64), order, key, q3, off, off_d2, d2, idx, tied)
    return d2, idx, tied


class PointTree:
    """Nearest-point queries over fixed points: ``scipy.spatial.cKDTree``, as curvicost snaps
    (on voxel positions equidistant points are common, and cKDTree's answer decides the ties)."""

    def __init__(self, points):
        from scipy.spatial import cKDTree

        pts = np.asarray(points, dtype=np.float64)
        self.data = np.ascontiguousarray(pts if pts.ndim == 2 else pts.reshape(len(pts), -1))
        self.tree = cKDTree(self.data) if len(self.data) else None

    def query(self, x, distance_upper_bound=np.inf):
        """``(distance, index)`` of the nearest point to each row of ``x`` strictly within the
        bound; ``inf`` and ``len(points)`` where there is none (cKDTree's ``query``, k=1)."""
        q = np.asarray(x, dtype=np.float64).reshape(-1, self.data.shape[1])
        if self.tree is None or not len(q):
            return np.full(len(q), np.inf), np.full(len(q), len(self.data), dtype=np.int64)
        d, j = self.tree.query(q, distance_upper_bound=distance_upper_bound)
        return d, np.asarray(j, dtype=np.int64)


def build_graph(skel: np.ndarray, radius, prune_px: float, spacing=None, prune_length=None) -> SkeletonGraph:
    """Trace ``skel`` into a :class:`SkeletonGraph` and prune spurs shorter than ``prune_px``
    voxels (or, given, ``prune_length`` in the spacing's unit); ``radius``
    (:func:`radius_on_skeleton`) covers the skeleton's voxels. With a non-unit ``spacing`` the
    edge lengths are physical: each chain's Euclidean step lengths with the steps scaled by the
    spacing (a loop without nodes: the physical lengths of its voxels, :func:`length_weights`)."""
    from segscore.kernels import skelgraph as K

    shape = skel.shape
    ndim = skel.ndim
    skel = np.asarray(skel)
    pad = _padded(skel if skel.dtype == bool else skel != 0)  # this thread's scratch, as label's
    pshape = pad.shape
    flat = pad.ravel().view(np.uint8)
    offsets, step_len = K.neighbour_offsets(pshape)
    pixels = np.flatnonzero(pad.ravel()).astype(np.int64)  # of a bool array: 5x faster
    deg = np.empty(len(pixels), dtype=np.int32)
    K.neighbour_degree(flat, pixels, offsets, deg)

    junction = pixels[deg >= 3]
    endpoint = pixels[deg == 1]
    member = np.zeros(flat.shape, dtype=np.uint8)
    member[junction] = 1
    scratch = _slots(flat.size)  # this thread's label scratch (need not be initialised)
    cid = np.empty(len(junction), dtype=np.int64)
    n_clusters = K.label_subset(member, junction, scratch, offsets, cid)
    order = np.argsort(cid, kind="stable")
    junction, cid = junction[order], cid[order]

    n_end = len(endpoint)
    node_of = np.empty(flat.shape, dtype=np.int32)  # read only on skeleton voxels
    node_of[pixels] = -1
    node_of[junction] = cid
    node_of[endpoint] = n_clusters + np.arange(n_end)
    node_pix = np.concatenate([junction, endpoint]).astype(np.int64)
    pix_slot = scratch  # reused: read only on node voxels, written here
    pix_slot[node_pix] = np.arange(len(node_pix))

    def unpad(idx):
        coords = np.unravel_index(idx, pshape)
        return np.ravel_multi_index(tuple(c - 1 for c in coords), shape).astype(np.int64)

    radius_at = radius.at

    # nodes: clusters (middle voxel, mean radius), then end points
    counts = np.bincount(cid, minlength=n_clusters) if n_clusters else np.zeros(0, np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    centre = junction[starts[:-1] + counts // 2] if n_clusters else np.zeros(0, np.int64)
    junc_r = radius_at(unpad(junction))
    clus_r = (np.add.reduceat(junc_r, starts[:-1]) / counts) if n_clusters else np.zeros(0)
    node_flat = np.concatenate([centre, endpoint]).astype(np.int64)
    node_radius = np.concatenate([clus_r, radius_at(unpad(endpoint))])

    n_off = len(offsets)
    cap_e = max(len(node_pix) * n_off, 1)
    edge_u = np.empty(cap_e, np.int64)
    edge_v = np.empty(cap_e, np.int64)
    edge_ptr = np.empty(cap_e + 1, np.int64)
    edge_len = np.empty(cap_e, np.float64)
    path = np.empty(len(pixels) + 2 * cap_e, np.int64)
    ne, npth = K.trace_chains(flat, node_of, node_pix, pix_slot, offsets, step_len,
                              edge_u, edge_v, edge_ptr, edge_len, path)
    edge_u, edge_v, edge_len = edge_u[:ne].copy(), edge_v[:ne].copy(), edge_len[:ne].copy()
    edge_ptr = edge_ptr[: ne + 1].copy()
    path = path[:npth].copy()

    # loops: skeleton voxels on no chain and in no node
    covered = np.zeros(len(pixels), dtype=bool)  # pixels ascend: a voxel's slot by binary search
    covered[np.searchsorted(pixels, path)] = True
    covered[np.searchsorted(pixels, node_pix)] = True
    rest = pixels[~covered]
    n_nodes = n_clusters + n_end
    if len(rest):
        member[junction] = 0
        member[rest] = 1
        lid = np.empty(len(rest), dtype=np.int64)
        n_loops = K.label_subset(member, rest, scratch, offsets, lid)
        o = np.argsort(lid, kind="stable")
        rest, lid = rest[o], lid[o]
        lc = np.bincount(lid, minlength=n_loops)
        ls = np.concatenate([[0], np.cumsum(lc)]).astype(np.int64)
        rr = radius_at(unpad(rest))
        loop_r = np.add.reduceat(rr, ls[:-1]) / lc
        loop_ids = n_nodes + np.arange(n_loops)
        node_flat = np.concatenate([node_flat, rest[ls[:-1]]])
        node_radius = np.concatenate([node_radius, loop_r])
        edge_u = np.concatenate([edge_u, loop_ids])
        edge_v = np.concatenate([edge_v, loop_ids])
        edge_len = np.concatenate([edge_len, lc.astype(np.float64)])
        edge_ptr = np.concatenate([edge_ptr, edge_ptr[-1] + ls[1:]])
        path = np.concatenate([path, rest])
        n_nodes += n_loops
    else:
        n_loops = 0

    path_u = unpad(path) if len(path) else path
    ecount = np.diff(edge_ptr)
    if len(ecount):
        mean_r = np.add.reduceat(radius_at(path_u), edge_ptr[:-1]) / ecount
    else:
        mean_r = np.zeros(0)
    r_floor = 0.5 if is_unit(spacing) else 0.5 * min(float(v) for v in spacing)  # half a voxel, physical
    edge_rad = np.maximum(mean_r, r_floor)
    if n_loops:
        edge_rad[len(edge_rad) - n_loops:] = mean_r[len(mean_r) - n_loops:]  # loops: unclamped mean
    edge_len = np.maximum(edge_len, 1e-6)
    prune_by = edge_len
    if not is_unit(spacing):
        loop_len = None
        if n_loops:  # a loop's voxels are unordered: the sum of their physical lengths (length_weights)
            w = length_weights(skel, unpad(rest), spacing)
            loop_len = np.add.reduceat(w, ls[:-1])
        edge_len = physical_lengths(edge_len, edge_ptr, path_u, shape, spacing, n_loops, loop_len)
    if prune_length is not None:  # a length in the spacing's unit (voxels at unit spacing)
        prune_by, prune_px = edge_len, prune_length

    # first edge index between each unordered node pair (networkx adjacency order)
    a = np.minimum(edge_u, edge_v)
    b = np.maximum(edge_u, edge_v)
    key = a * (n_nodes + 1) + b
    _, first_idx, inv = np.unique(key, return_index=True, return_inverse=True)
    pair_first = first_idx[inv].astype(np.int64) if len(key) else np.zeros(0, np.int64)

    alive = np.ones(len(edge_u), dtype=bool)
    if len(edge_u):
        K.prune_spurs(edge_u, edge_v, prune_by, n_nodes, float(prune_px), alive)
    node_pos = np.array(np.unravel_index(unpad(node_flat), shape), dtype=np.int64).T.reshape(-1, ndim)
    g = SkeletonGraph(shape=tuple(shape), node_pos=node_pos, node_radius=np.asarray(node_radius, float),
                      edge_u=edge_u, edge_v=edge_v, edge_len=edge_len, edge_rad=edge_rad, edge_ptr=edge_ptr,
                      path=path_u, edge_alive=alive, node_alive=np.ones(n_nodes, dtype=bool),
                      pair_first=pair_first, spacing=None if is_unit(spacing) else tuple(float(v) for v in spacing))
    if len(edge_u):
        g.node_alive = g.degree() > 0
    return g


def physical_lengths(edge_len, edge_ptr, path, shape, spacing, n_loops: int, loop_len=None) -> np.ndarray:
    """``edge_len`` (voxel units) scaled per edge by the ratio of its path's physical to its
    voxel-unit Euclidean step lengths; the last ``n_loops`` edges (unordered loop voxels) are
    ``loop_len`` (their voxels' physical lengths summed), or scaled by the mean spacing."""
    sp = np.asarray([float(v) for v in spacing])
    out = np.array(edge_len, dtype=np.float64)
    n_chain = len(out) - n_loops
    if n_chain > 0:
        end = int(edge_ptr[n_chain])
        xyz = np.array(np.unravel_index(path[:end], shape), dtype=np.float64).T.reshape(-1, len(shape))
        d = np.diff(xyz, axis=0)
        vox = np.sqrt((d ** 2).sum(axis=1))
        phys = np.sqrt(((d * sp) ** 2).sum(axis=1))
        last = np.zeros(end, dtype=bool)  # a step from one edge's last voxel to the next edge's first is no step
        last[np.asarray(edge_ptr[1:n_chain + 1]) - 1] = True
        keep = ~last[:-1]
        owner = np.repeat(np.arange(n_chain), np.diff(edge_ptr[:n_chain + 1]))[:-1]
        v_sum = np.bincount(owner[keep], vox[keep], minlength=n_chain)
        p_sum = np.bincount(owner[keep], phys[keep], minlength=n_chain)
        ratio = np.where(v_sum > 0, p_sum / np.where(v_sum > 0, v_sum, 1.0), sp.mean())
        out[:n_chain] *= ratio
    if n_loops:
        out[n_chain:] = loop_len if loop_len is not None else out[n_chain:] * sp.mean()
    return np.maximum(out, 1e-6)
