"""The one exception hierarchy of twocats.

Every error the library raises on purpose is a :class:`TwoCatsError`.  Errors about bad input are
also ``ValueError`` so that callers who only know the standard library can still catch them.  No
message ever contains a password, a salt, associated data or a derived key.

No exception twocats raises carries a secret anywhere in its chain either: errors about an input
are raised outside the handler of the error that detected them, so ``__context__`` and
``__cause__`` never hold a codec error quoting a password.

A stored hash that is well formed but asks for more memory or work than the verifier allows is a
:class:`HashLimitError`, which is an :class:`InvalidHashError`: a server cannot use it, exactly as
it cannot use a corrupt one.  The memory case, :class:`HashMemoryLimitError`, is also a
:class:`MemoryLimitError`.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "DatabaseError",
    "HashLimitError",
    "HashMemoryLimitError",
    "HasherBusyError",
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


class HashLimitError(InvalidHashError):
    """A well-formed stored hash asks for more work than this verifier allows; nothing was computed.

    A hash string is untrusted input: one planted in a database must not be able to tie up the
    server.  :meth:`twocats.PasswordHasher.verify` refuses strings whose estimated work (see
    :func:`twocats.kdf.limits.estimated_work`) is above the hasher's limit, for example a
    ``time_cost`` of 30.  Being an :class:`InvalidHashError`, it is caught wherever a corrupt
    stored hash is.
    """


class HashMemoryLimitError(HashLimitError, MemoryLimitError):
    """A stored hash asks for more memory than ``max_memory``; nothing was allocated.

    It is both an :class:`InvalidHashError` (through :class:`HashLimitError`) and a
    :class:`MemoryLimitError`.  The choice is deliberate: a server that catches
    ``InvalidHashError`` around ``verify`` to handle corrupt stored hashes handles a planted
    oversized one the same way, with no extra clause, while code that catches memory-limit errors
    everywhere still sees this one too.
    """


class VerificationError(TwoCatsError):
    """Verification failed for a reason other than bad input."""


class VerifyMismatchError(VerificationError):
    """The password does not match the stored hash."""


class HashingError(TwoCatsError):
    """Hashing could not be carried out (for example, the memory could not be allocated)."""


class BackendError(TwoCatsError, ValueError):
    """An unknown or unavailable compute backend was requested."""


class HasherBusyError(TwoCatsError):
    """A hasher's admission control did not grant a slot within the caller's ``timeout``.

    The message names the limit that held the caller back (``max_concurrency`` or
    ``max_total_memory``) and how long it waited.  Nothing was computed; the caller may retry
    or answer "try again later".  Without a timeout no call ever raises it.
    """


class DatabaseError(TwoCatsError):
    """The database failed during a bulk upgrade; every row holds its old value or its new one."""
