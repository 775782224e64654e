"""What the adapters share: the import guard, the cached hasher and a verify that answers a bool."""

from __future__ import annotations

import functools

from twocats import phc
from twocats._extras import install_hint
from twocats.exceptions import InvalidHashError, InvalidParametersError, VerificationError
from twocats.hasher import PasswordHasher
from twocats.params import Params

__all__ = ["has_twocats_prefix", "missing_framework", "shared_hasher", "verify_quietly"]

_PREFIX = f"${phc.PHC_ID}$"


def missing_framework(module: str, framework: str, extra: str) -> ImportError:
    """Return the error raised when the adapter `module` is imported without its framework."""
    return ImportError(
        f"{module} needs {framework}, which is not installed; "
        f"install it with: {install_hint(extra)} (the {extra} extra)"
    )


@functools.lru_cache(maxsize=32)
def shared_hasher(params: Params, salt_len: int) -> PasswordHasher:
    """Return the process's one hasher for `params` and `salt_len`.

    Adapters are instantiated often (Django per settings change, a ``CryptContext`` per scheme
    record), and sharing one :class:`~twocats.PasswordHasher` per configuration lets them all reuse
    its pool of work areas.  The hasher is thread-safe.
    """
    return PasswordHasher.from_params(params, salt_len=salt_len)


def has_twocats_prefix(value: object) -> bool:
    """Return whether `value` is a str or bytes that starts like a twocats hash string.

    This is how the frameworks pick the hasher of a stored hash; verifying checks the rest.
    """
    if isinstance(value, bytes):
        return value.startswith(_PREFIX.encode())
    return isinstance(value, str) and value.startswith(_PREFIX)


def verify_quietly(hasher: PasswordHasher, stored: str | bytes, password: str | bytes) -> bool:
    """Return whether `password` matches `stored`: False for a mismatch or an unusable hash.

    An unusable hash is malformed, or asks for more memory or work than the hasher allows; a
    ``str`` password that is not valid Unicode cannot match either.  The frameworks' protocols
    want a bool here, never an exception.
    """
    try:
        return hasher.verify(stored, password)
    except (VerificationError, InvalidHashError, InvalidParametersError):
        return False
