"""A synthetic column target: columns with planted line periodicity, gutters, a valid mask (the
package's sample generators, :mod:`segscore.io.samples`)."""

from segscore.io.samples import COLUMN_GRID as GRID  # noqa: F401
from segscore.io.samples import COLUMN_PITCH as PITCH  # noqa: F401
from segscore.io.samples import COLUMNS  # noqa: F401
from segscore.io.samples import column_reading as reading_prediction  # noqa: F401
from segscore.io.samples import column_target as make_column_target  # noqa: F401
