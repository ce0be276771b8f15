"""Connected components built from blocks: what joins per-block labels into one labelling.

A block is labelled on its own by :func:`segscore.kernels.components.label_components` (through
:func:`segscore.metrics.masks.components`, one labeller for every family); these kernels do the rest,
in the shape of dask-image's ``label`` (offset, face adjacency, components, relabel) without its
whole-graph step:

- :func:`block_summary`: each label's class value and its first voxel as a flat index of the whole
  image (C order): what numbers a component canonically, whatever the blocks.
- :func:`face_pairs`: the (label of block A, label of block B) pairs of touching voxels of one
  class across the slabs where two blocks meet (a face, an edge or a corner).
- :func:`join_pairs` and :func:`roots`: a union-find over the (small) table of pairs, with the
  shared :func:`segscore.kernels.components.union`.

Relabelling a block is a NumPy lookup (``lookup[labels]``): no kernel beats ``numpy.take`` there.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.components import find, union


@jit
def block_summary(labels, values, origin, shape, first, cls):
    """Fill ``first[l]`` (the flat C-order index in the whole image of label ``l``'s first voxel)
    and ``cls[l]`` (its class value) for the labels ``1..n`` of one block.

    Parameters
    ----------
    labels : (Z, Y, X) int32 or int64, the block's labels (0 = background).
    values : (Z, Y, X) integer or bool, the block's class values (equal on a label).
    origin : (3,) int64, the block's first voxel in the image; ``shape``: (3,) int64, the image's.
    first, cls : (n + 1,) int64 outputs; ``first`` must hold -1 on entry.

    Notes
    -----
    Does not check shapes or that every label is below ``first.shape[0]``.
    """
    nz, ny, nx = labels.shape
    sy = shape[2]
    sz = shape[1] * sy
    for z in range(nz):
        for y in range(ny):
            row = (origin[0] + z) * sz + (origin[1] + y) * sy + origin[2]
            for x in range(nx):
                lab = labels[z, y, x]
                if lab != 0 and first[lab] < 0:
                    first[lab] = row + x
                    cls[lab] = values[z, y, x]


@jit
def face_pairs(la, va, lb, vb, offsets, pa, pb):
    """The label pairs of touching voxels of one class across the slabs where two blocks meet;
    returns how many were written to ``pa``, ``pb``.

    Parameters
    ----------
    la, lb : (Z, Y, X) labels of block A's and block B's slabs (one voxel thick on the axes they
        cross, the same extent on the others); ``va``, ``vb``: their class values.
    offsets : (K, 3) int64, the displacements ``q - p`` within the slabs (0 on the crossed axes)
        from a voxel ``p`` of A's slab to the voxels ``q`` of B's it touches.
    pa, pb : (la.size * K,) int64 outputs.

    Notes
    -----
    Consecutive repeats of one pair are written once; other repeats are left to the caller.
    Does not check shapes.
    """
    nz, ny, nx = la.shape
    k = 0
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                a = la[z, y, x]
                if a == 0:
                    continue
                for m in range(offsets.shape[0]):
                    qz = z + offsets[m, 0]
                    qy = y + offsets[m, 1]
                    qx = x + offsets[m, 2]
                    if qz < 0 or qy < 0 or qx < 0 or qz >= nz or qy >= ny or qx >= nx:
                        continue
                    b = lb[qz, qy, qx]
                    if b == 0 or va[z, y, x] != vb[qz, qy, qx]:
                        continue
                    if k > 0 and pa[k - 1] == a and pb[k - 1] == b:
                        continue
                    pa[k] = a
                    pb[k] = b
                    k += 1
    return k


@jit
def join_pairs(parent, a, b):
    """Union-find over ids ``0..n-1`` (``parent`` holds ``arange(n)`` on entry): join ``a[i]`` and
    ``b[i]`` for every pair. Does not check the ids' range."""
    for i in range(a.shape[0]):
        union(parent, a[i], b[i])


@jit
def roots(parent, out):
    """``out[i]`` = the root of ``i`` (the smallest id of its set: :func:`components.link`)."""
    for i in range(parent.shape[0]):
        out[i] = find(parent, i)
