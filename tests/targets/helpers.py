"""Small synthetic ScrollGT-style targets for the target tests: the package's sample generators
(:mod:`segscore.io.samples`, which ``segscore demo --keep`` writes the docs' data with)."""

from segscore.io.samples import ink_target as make_target  # noqa: F401
from segscore.io.samples import reading_map, write_png  # noqa: F401
