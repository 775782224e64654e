"""twocats: TwoCats memory-hard password hashing and SIMD lane hashing.

Importing this package is cheap: it imports neither numpy nor numba and compiles nothing.  The names
below are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twocats._lazy import lazy_attributes
from twocats.exceptions import (
    BackendError,
    HasherBusyError,
    HashingError,
    HashLimitError,
    HashMemoryLimitError,
    InvalidHashError,
    InvalidParametersError,
    MemoryLimitError,
    TwoCatsError,
    VerificationError,
    VerifyMismatchError,
)

if TYPE_CHECKING:
    from twocats import profiles
    from twocats.params import Params
    from twocats.password import PasswordHasher

__version__ = "0.1.0"

# Public name -> module that defines it; a module maps to itself when the name is a submodule.
_LAZY = {
    "Params": "twocats.params",
    "PasswordHasher": "twocats.password",
    "profiles": "twocats.profiles",
}

__all__ = [
    "BackendError",
    "HashLimitError",
    "HashMemoryLimitError",
    "HasherBusyError",
    "HashingError",
    "InvalidHashError",
    "InvalidParametersError",
    "MemoryLimitError",
    "Params",
    "PasswordHasher",
    "TwoCatsError",
    "VerificationError",
    "VerifyMismatchError",
    "__version__",
    "profiles",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
