"""Deprecated alias of the plain-Python hashes, which moved to :mod:`twocats.lanes.reference`.

Every name of that module's ``__all__`` is here too, and ``ALGORITHMS`` is
:data:`twocats.lanes.reference.FUNCTIONS`.
"""

from __future__ import annotations

import warnings
from typing import Any

from twocats.lanes import reference as _moved

__all__ = ["ALGORITHMS", *(name for name in _moved.__all__ if name != "FUNCTIONS")]

ALGORITHMS = _moved.FUNCTIONS


def __getattr__(name: str) -> Any:
    """The moved module's public names, read from it."""
    if name in __all__:
        return getattr(_moved, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


warnings.warn(
    "twocats.simd.reference is deprecated: import twocats.lanes.reference",
    DeprecationWarning,
    stacklevel=2,
)
