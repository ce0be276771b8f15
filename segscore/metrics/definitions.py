"""The surface-distance definitions segscore computes (:mod:`segscore.metrics.surface`), by name:
declared apart from the metric, without numpy, so the CLI's parser and ``--help`` import no
metric module."""

from __future__ import annotations

from segscore.errors import ScoreError

#: the surface-distance definitions segscore computes, by the library that defines them
DISTANCE_DEFINITIONS = ("monai", "panoptica", "deepmind")
#: the default: MONAI's (and curvicost's hd95), what segscore has always reported
DEFAULT_DISTANCE_DEFINITION = "monai"
#: one line per definition, for --help and the README
DEFINITION_HELP = {
    "monai": "surface voxels (6-/4-connected erosion); hd95 the larger directed 95th percentile, assd the mean of "
             "both directions pooled (MONAI compute_hausdorff_distance, compute_average_surface_distance symmetric)",
    "panoptica": "surface voxels as monai; hd95 one 95th percentile of both directions pooled, assd the mean of the "
                 "two directed means (panoptica 2.1.7)",
    "deepmind": "surface elements on the voxel corners weighted by area (3D) or length (2D); hd95 the larger "
                "area-weighted 95th percentile, assd the mean of the two weighted directed means, nsd the "
                "weighted surface Dice (DeepMind surface-distance 0.1)",
}


def check_definition(name) -> str:
    """``name`` as one of :data:`DISTANCE_DEFINITIONS` (None: the default)."""
    if name is None:
        return DEFAULT_DISTANCE_DEFINITION
    key = str(name).strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    key = {"surfacedistance": "deepmind", "deepmindsurfacedistance": "deepmind"}.get(key, key)
    if key not in DISTANCE_DEFINITIONS:
        raise ScoreError(f"distance definition {name!r}: choose one of {', '.join(DISTANCE_DEFINITIONS)}")
    return key
