"""twocats: TwoCats memory-hard password hashing and SIMD lane hashing.

Importing this package is cheap: it imports neither numpy nor numba and compiles nothing.  The names
below are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from twocats.exceptions import (
    BackendError,
    HashingError,
    InvalidHashError,
    InvalidParametersError,
    MemoryLimitError,
    TwoCatsError,
    VerificationError,
    VerifyMismatchError,
)

if TYPE_CHECKING:
    from twocats.params import Params

__version__ = "0.1.0"

_LAZY = {
    "Params": "twocats.params",
}

__all__ = [
    "BackendError",
    "HashingError",
    "InvalidHashError",
    "InvalidParametersError",
    "MemoryLimitError",
    "Params",
    "TwoCatsError",
    "VerificationError",
    "VerifyMismatchError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'twocats' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
