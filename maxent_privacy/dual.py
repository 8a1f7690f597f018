"""Our own maximum-entropy solver: moved to :mod:`maxent_privacy.solve.newton` (and
:mod:`maxent_privacy.solve.forced_zeros`); these names stay importable from here."""

from .solve.forced_zeros import lp_forced_zeros
from .solve.newton import DualResult, NotConverged, newton_maxent

__all__ = ["DualResult", "NotConverged", "lp_forced_zeros", "newton_maxent"]
