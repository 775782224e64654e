"""Deprecated: the instruction-set-level runner is :mod:`twocats.perf.levels`.

Importing this module warns and re-exports :mod:`twocats.perf.levels`.
"""

from __future__ import annotations

import warnings

from twocats.perf.levels import *  # noqa: F403  (the deprecated name re-exports every public one)
from twocats.perf.levels import __all__ as __all__

warnings.warn(
    "twocats.simd.levels is deprecated: import twocats.perf.levels instead",
    DeprecationWarning,
    stacklevel=2,
)
