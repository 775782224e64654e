"""The one exception hierarchy of twocats.

Every error the library raises on purpose is a :class:`TwoCatsError`.  Errors about bad input are also
``ValueError`` so that callers who only know the standard library can still catch them.  No message ever
contains a password, a salt, associated data or a derived key.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "HashingError",
    "InvalidHashError",
    "InvalidParametersError",
    "MemoryLimitError",
    "TwoCatsError",
    "VerificationError",
    "VerifyMismatchError",
]


class TwoCatsError(Exception):
    """Base class of every error twocats raises on purpose."""


class InvalidParametersError(TwoCatsError, ValueError):
    """A parameter is out of range or meaningless; the message names it and its allowed range."""


class MemoryLimitError(InvalidParametersError):
    """A request needs more memory than the configured limit allows; nothing was allocated."""


class InvalidHashError(TwoCatsError, ValueError):
    """A stored hash string is malformed or not in canonical form."""


class VerificationError(TwoCatsError):
    """Verification failed for a reason other than bad input."""


class VerifyMismatchError(VerificationError):
    """The password does not match the stored hash."""


class HashingError(TwoCatsError):
    """Hashing could not be carried out (for example, the memory could not be allocated)."""


class BackendError(TwoCatsError, ValueError):
    """An unknown or unavailable compute backend was requested."""
