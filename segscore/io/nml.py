"""Read WEBKNOSSOS ``.nml`` skeletons: trees (one per traced fiber), their nodes and edges.

An NML file is XML: a ``<things>`` root holding one ``<thing id= name=>`` per tree, each with
``<nodes><node id= x= y= z= [radius=]/></nodes>`` and ``<edges><edge source= target=/></edges>``
(edges name node ids of their own tree), and optionally ``<parameters><scale x= y= z=
[unit=]/></parameters>``.

Coordinates. An NML lists ``x``, ``y``, ``z`` in absolute scroll voxels; :func:`read_nml`
returns them as ``(z, y, x)`` in *cube* voxels, the order volumes are indexed in, with the cube
origin subtracted. The origin is either given (``origin=(z, y, x)``) or read from the file
name (:func:`cube_from_name`), which the villa fiber-skeletons dataset (and ScrollGT's targets)
write as ``<scroll>_<z>_<y>_<x>_<size>``, e.g. ``s1_00497_01497_03997_256.nml``: **z, y, x** in
the name, the reverse of the node attributes. villa's annotation names
(``fibers_s5_06500z_02000y_04000x_500_v03.nml``) spell the axes out and are read too; they give
the annotated region, which the dataset's cubes pad by a few voxels, so a caller pairing one
with a volume must check the size (``segscore fibers-target`` does).

Refusals. Every malformed input raises :class:`~segscore.errors.ScoreError` (a missing file
:class:`~segscore.errors.InputFileError`) with one line ``PATH: what is wrong; what to do``:
text that is not XML, a root other than ``<things>``, a missing or non-numeric attribute (a
node without its coordinates among them), a NaN or infinite value, duplicate tree or node ids.
The parser never expands entities: ``defusedxml`` is used when it is installed; otherwise any
``<!DOCTYPE``/``<!ENTITY`` declaration is refused before a byte is parsed (and again by the
parser, should an encoding hide it from that scan).

What ScrollGT's ``parse_nml`` reads, this reads too, and says what it did in the skeleton's
``warnings`` (one-line strings naming the file): an edge naming a node its tree does not hold
is dropped (ScrollGT drops it rather than index garbage), and an empty file (or one whose
``<things>`` holds no ``<thing>``) is an empty skeleton.

Nodes and edges keep their file order (the fiber scorer reads runs in stored edge order).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from segscore.errors import InputFileError, ScoreError

#: the fiber-skeletons dataset's (and ScrollGT's) cube name: <scroll>_<z>_<y>_<x>_<size>
_CUBE_NAME = re.compile(r"^(?:fibers_)?(?P<scroll>[A-Za-z0-9]+)_(?P<z>\d+)_(?P<y>\d+)_(?P<x>\d+)_(?P<size>\d+)"
                        r"(?=$|[_.\-])")
#: villa's annotation name, axes spelled out: [fibers_]<scroll>_<z>z_<y>y_<x>x_<size>
_REGION_NAME = re.compile(r"^(?:fibers_)?(?P<scroll>[A-Za-z0-9]+)_(?P<z>\d+)z_(?P<y>\d+)y_(?P<x>\d+)x_"
                          r"(?P<size>\d+)(?=$|[_.\-])")
#: how an NML file should be named, for the refusals
NAME_RULE = ("name it <scroll>_<z>_<y>_<x>_<size>.nml as the fiber-skeletons dataset does "
             "(e.g. s1_00497_01497_03997_256.nml)")
_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_FIX = "export the skeleton again from WEBKNOSSOS"


@dataclass(frozen=True)
class CubeName:
    """What a file name says about its cube: ``origin_zyx`` and edge ``size`` in voxels;
    ``form`` is ``"cube"`` (``s1_00497_01497_03997_256``) or ``"region"`` (villa's
    ``fibers_s5_06500z_02000y_04000x_500``); ``stem`` is the matched part of the name."""

    scroll: str
    origin_zyx: tuple[int, int, int]
    size: int
    form: str
    stem: str


@dataclass
class Tree:
    """One tree (a traced fiber), in file order.

    ``node_ids`` (N,) int64; ``coords`` (N, 3) float64 z, y, x in cube voxels; ``radius`` (N,)
    float64, NaN where a node states none; ``edges`` (E, 2) int64 (source, target) as indices
    into the tree's nodes.
    """

    id: int
    name: str
    node_ids: np.ndarray
    coords: np.ndarray
    radius: np.ndarray
    edges: np.ndarray


@dataclass
class Skeleton:
    """The trees of one NML file, with the frame they were read in.

    ``origin_zyx`` was subtracted from every node; ``origin_source`` is ``"file name"`` or
    ``"origin="``; ``cube`` is what the file name says (None when it says nothing);
    ``scale_zyx`` and ``scale_unit`` are the file's ``<scale>`` (None when absent).
    """

    path: str
    trees: list
    origin_zyx: tuple[int, int, int]
    origin_source: str
    cube: CubeName | None
    scale_zyx: tuple[float, float, float] | None
    scale_unit: str | None
    #: what the reader did that a user should know: dangling edges dropped, an empty file read
    warnings: list = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return int(sum(len(t.node_ids) for t in self.trees))

    @property
    def n_edges(self) -> int:
        return int(sum(len(t.edges) for t in self.trees))


def cube_from_name(path) -> CubeName | None:
    """The cube a file's name encodes (module docstring), or None when it encodes none."""
    name = os.path.basename(os.fspath(path).rstrip("/\\"))
    for form, pattern in (("cube", _CUBE_NAME), ("region", _REGION_NAME)):
        m = pattern.match(name)
        if m:
            return CubeName(scroll=m.group("scroll"), size=int(m.group("size")), form=form, stem=m.group(0),
                            origin_zyx=(int(m.group("z")), int(m.group("y")), int(m.group("x"))))
    return None


def check_origin(origin, what: str = "origin") -> tuple[int, int, int]:
    """``origin`` as three whole numbers ``(z, y, x)``; ScoreError naming ``what`` otherwise."""
    try:
        values = [float(v) for v in origin]
    except (TypeError, ValueError):
        values = None
    if values is None or len(values) != 3 or not all(math.isfinite(v) and v.is_integer() for v in values):
        raise ScoreError(f"{what}={origin!r}: not a cube origin; give three whole numbers z, y, x "
                         f"(absolute scroll voxels)")
    return int(values[0]), int(values[1]), int(values[2])


# ------------------------------------------------------------------ parsing


class _Declaration(Exception):
    """The parser met a DOCTYPE (the only place an entity can be declared)."""


def _builder():
    import xml.etree.ElementTree as ET

    class Builder(ET.TreeBuilder):
        def doctype(self, name, pubid, system):  # called by XMLParser before the internal subset
            raise _Declaration(name)

    return Builder()


def _parse(path: Path, raw: bytes):
    """The root element of ``raw``; ScoreError for anything that is not plain, well-formed XML."""
    import xml.etree.ElementTree as ET

    if _DECLARATION.search(raw):
        raise ScoreError(f"{path}: declares a DOCTYPE or ENTITY, which an NML never needs and which is refused "
                         f"(entity expansion); {_FIX}, or delete the declaration")
    try:
        from defusedxml.ElementTree import DefusedXMLParser
    except ImportError:
        parser = ET.XMLParser(target=_builder())
        unsafe: tuple = (_Declaration,)
    else:
        from defusedxml import DefusedXmlException

        parser = DefusedXMLParser(target=_builder(), forbid_dtd=True)
        unsafe = (_Declaration, DefusedXmlException)
    try:
        parser.feed(raw)
        return parser.close()
    except unsafe:
        raise ScoreError(f"{path}: declares a DOCTYPE or ENTITY, which an NML never needs and which is refused "
                         f"(entity expansion); {_FIX}, or delete the declaration") from None
    except ET.ParseError as exc:
        why = " ".join(str(exc).split())
        raise ScoreError(f"{path}: not well-formed XML ({why}); {_FIX}") from None
    except (ValueError, RecursionError) as exc:  # undecodable text, absurd nesting
        raise ScoreError(f"{path}: not readable XML ({type(exc).__name__}); {_FIX}") from None


def _int(path, elem, attr: str, where: str) -> int:
    text = elem.get(attr)
    if text is None:
        raise ScoreError(f"{path}: {where} has no '{attr}' attribute; {_FIX}")
    try:
        value = int(text.strip())
    except ValueError:
        raise ScoreError(f"{path}: {where} has {attr}={_short(text)}, not a whole number; {_FIX}") from None
    if not -2 ** 63 <= value < 2 ** 63:
        raise ScoreError(f"{path}: {where} has {attr}={_short(text)}, beyond a 64-bit id; {_FIX}")
    return value


def _float(path, elem, attr: str, where: str, *, required: bool = True) -> float | None:
    text = elem.get(attr)
    if text is None:
        if required:
            raise ScoreError(f"{path}: {where} has no '{attr}' attribute; {_FIX}")
        return None
    try:
        value = float(text.strip())
    except ValueError:
        raise ScoreError(f"{path}: {where} has {attr}={_short(text)}, not a number; {_FIX}") from None
    if not math.isfinite(value):
        raise ScoreError(f"{path}: {where} has {attr}={_short(text)}, not a finite number; {_FIX}")
    return value


def _short(text: str) -> str:
    r = repr(text)
    return r if len(r) <= 30 else r[:27] + "..."


def _scale(path, root):
    elem = root.find("parameters/scale")
    if elem is None:
        return None, None
    xyz = [_float(path, elem, a, "<scale>") for a in ("x", "y", "z")]
    if min(xyz) <= 0:
        raise ScoreError(f"{path}: <scale> holds {xyz}; a voxel size must be positive; {_FIX}")
    return (xyz[2], xyz[1], xyz[0]), elem.get("unit")


def _nodes(path, thing, index: int, seen_nodes: dict):
    """``(tree id, node ids, x y z rows, radii)`` of one ``<thing>``; ``seen_nodes`` (node id ->
    tree id, over the whole file) refuses a node id used twice."""
    tid = _int(path, thing, "id", f"tree {index + 1} (<thing>)")
    where = f"tree {tid}"
    ids, xyz, radius = [], [], []
    for k, node in enumerate(thing.findall("nodes/node")):
        nid = _int(path, node, "id", f"node {k + 1} of {where}")
        at = f"node {nid} of {where}"
        if nid in seen_nodes:
            raise ScoreError(f"{path}: node id {nid} appears twice (in tree {seen_nodes[nid]} and {where}); node "
                             f"ids must be unique in a file: {_FIX}")
        seen_nodes[nid] = tid
        ids.append(nid)
        xyz.append([_float(path, node, a, at) for a in ("x", "y", "z")])
        r = _float(path, node, "radius", at, required=False)
        if r is not None and r < 0:
            raise ScoreError(f"{path}: {at} has radius={r:g}; a radius is at least 0; {_FIX}")
        radius.append(math.nan if r is None else r)
    return tid, ids, xyz, radius


def _edges(path, thing, tid: int, ids, seen_nodes: dict, dropped: list) -> np.ndarray:
    """One tree's edges as (source, target) indices into its nodes, in file order; an edge naming
    a node the tree does not hold is left out and described in ``dropped`` (ScrollGT's rule)."""
    where = f"tree {tid}"
    index_of = {nid: i for i, nid in enumerate(ids)}
    edges = []
    for k, edge in enumerate(thing.findall("edges/edge")):
        at = f"edge {k + 1} of {where}"
        s, t = _int(path, edge, "source", at), _int(path, edge, "target", at)
        missing = [nid for nid in (s, t) if nid not in index_of]
        if missing:
            nid = missing[0]
            other = f", in tree {seen_nodes[nid]}" if nid in seen_nodes else ", in no tree"
            dropped.append(f"{at} ({s} -> {t}; node {nid}{other})")
            continue
        edges.append((index_of[s], index_of[t]))
    return np.asarray(edges, np.int64).reshape(-1, 2)


def _dropped_warning(path, dropped: list) -> str:
    shown = "; ".join(dropped[:5]) + (f"; and {len(dropped) - 5} more" if len(dropped) > 5 else "")
    n = len(dropped)
    return (f"{path}: {n} edge{'s' if n != 1 else ''} dropped that name{'s' if n == 1 else ''} a node "
            f"{'its' if n == 1 else 'their'} tree does not hold (as ScrollGT's parse_nml drops them): {shown}")


def _coords(path, tid: int, xyz, off) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        coords = np.asarray(xyz, np.float64).reshape(-1, 3)[:, ::-1] - off  # x, y, z -> z, y, x; into the cube
    if not np.all(np.isfinite(coords)):
        raise ScoreError(f"{path}: a node of tree {tid} lies beyond the range of a float once the origin is "
                         f"subtracted; check the coordinates and the origin")
    return np.ascontiguousarray(coords)


def read_nml(path, *, origin=None) -> Skeleton:
    """The trees of the WEBKNOSSOS skeleton at ``path``, coordinates ``(z, y, x)`` in cube voxels.

    ``origin`` (z, y, x, absolute scroll voxels) is subtracted from every node; without it the
    origin is read from the file name (:func:`cube_from_name`) and a name that gives none is
    refused. ``origin=(0, 0, 0)`` keeps absolute coordinates. Malformed files are refused
    (module docstring). Trees without nodes are kept (with empty arrays). Dangling edges are
    dropped and an empty file is an empty skeleton, each said in ``warnings`` (ScrollGT's rules).
    """
    from segscore.io import budget
    from segscore.io.paths import check_readable

    p = Path(path)
    check_readable(p, "skeleton")
    try:
        # a size limit (never read whole); XML may be UTF-16, so NUL bytes are the parser's to judge
        raw = budget.read_bytes(p, fix="give a WEBKNOSSOS .nml skeleton", text=False)
    except FileNotFoundError:
        raise InputFileError(f"{p}: no such file; give a WEBKNOSSOS .nml skeleton") from None
    except IsADirectoryError:
        raise ScoreError(f"{p}: is a folder, not an .nml file; give a WEBKNOSSOS .nml skeleton") from None
    except OSError as exc:
        raise ScoreError(f"{p}: cannot be read ({exc.strerror or type(exc).__name__}); check its "
                         f"permissions") from None
    cube = cube_from_name(p)
    if origin is not None:
        org, source = check_origin(origin), "origin="
    elif cube is None:
        raise ScoreError(f"{p}: the file name gives no cube origin; {NAME_RULE}, or give the origin (--origin Z Y X)")
    else:
        org, source = cube.origin_zyx, "file name"
    empty = Skeleton(path=str(p), trees=[], origin_zyx=org, origin_source=source, cube=cube, scale_zyx=None,
                     scale_unit=None)
    if not raw.strip():
        empty.warnings.append(f"{p}: the file is empty; read as a skeleton with no tree (as ScrollGT's parse_nml "
                              f"reads it)")
        return empty
    root = _parse(p, raw)
    if root.tag != "things":
        raise ScoreError(f"{p}: not a WEBKNOSSOS NML (its root element is <{str(root.tag)[:40]}>, not "
                         f"<things>); give an .nml skeleton")
    things = root.findall("thing")
    scale, unit = _scale(p, root)
    if not things:
        empty.scale_zyx, empty.scale_unit = scale, unit
        empty.warnings.append(f"{p}: holds no tree (no <thing> under <things>); read as a skeleton with no tree "
                              f"(as ScrollGT's parse_nml reads it)")
        return empty
    off = np.asarray(org, np.float64)
    seen_nodes: dict = {}
    parsed, tree_ids = [], set()
    for i, thing in enumerate(things):  # every node first, so an edge into another tree can name it
        tid, ids, xyz, radius = _nodes(p, thing, i, seen_nodes)
        if tid in tree_ids:
            raise ScoreError(f"{p}: tree id {tid} appears twice; tree ids must be unique in a file: {_FIX}")
        tree_ids.add(tid)
        parsed.append((tid, ids, xyz, radius))
    trees, dropped = [], []
    for thing, (tid, ids, xyz, radius) in zip(things, parsed):
        trees.append(Tree(id=tid, name=thing.get("name") or "", node_ids=np.asarray(ids, np.int64),
                          coords=_coords(p, tid, xyz, off), radius=np.asarray(radius, np.float64),
                          edges=_edges(p, thing, tid, ids, seen_nodes, dropped)))
    return Skeleton(path=str(p), trees=trees, origin_zyx=org, origin_source=source, cube=cube, scale_zyx=scale,
                    scale_unit=unit, warnings=[_dropped_warning(p, dropped)] if dropped else [])
