"""What the adapters share: the import guard, the cached hasher and a verify that answers a bool."""

from __future__ import annotations

import functools
import logging

from twocats import phc
from twocats._extras import install_hint
from twocats.exceptions import (
    HashLimitError,
    InvalidHashError,
    InvalidParametersError,
    VerificationError,
)
from twocats.params import Params
from twocats.password import PasswordHasher

__all__ = [
    "LOGGER",
    "has_twocats_prefix",
    "missing_framework",
    "report_refused",
    "shared_hasher",
    "verify_quietly",
]

_PREFIX = f"${phc.PHC_ID}$"

#: The adapters' logger: a warning for each stored hash the limits refuse.
LOGGER = logging.getLogger("twocats.integrations")


def missing_framework(module: str, framework: str, extra: str) -> ImportError:
    """Return the error raised when the adapter `module` is imported without its framework."""
    return ImportError(
        f"{module} needs {framework}, which is not installed; "
        f"install it with: {install_hint(extra)} (the {extra} extra)"
    )


@functools.lru_cache(maxsize=32)
def shared_hasher(
    params: Params,
    salt_len: int,
    previous: tuple[Params, ...] = (),
    max_memory: int | None = None,
    max_work: int | None = None,
    max_concurrency: int | None = None,
    max_total_memory: int | None = None,
    timeout: float | None = None,
) -> PasswordHasher:
    """Return the process's one hasher for `params`, `salt_len`, the limits and the bounds.

    Adapters are instantiated often (Django per settings change, a ``CryptContext`` per scheme
    record), and sharing one :class:`~twocats.PasswordHasher` per configuration lets them all reuse
    its pool of work areas and keeps them all within one set of bounds (``max_concurrency``,
    ``max_total_memory``, ``timeout``).  The hasher is thread-safe.
    """
    return PasswordHasher.from_params(
        params,
        salt_len=salt_len,
        previous=previous,
        max_memory=max_memory,
        max_work=max_work,
        max_concurrency=max_concurrency,
        max_total_memory=max_total_memory,
        timeout=timeout,
    )


def has_twocats_prefix(value: object) -> bool:
    """Return whether `value` is a str or bytes that starts like a twocats hash string.

    This is how the frameworks pick the hasher of a stored hash; verifying checks the rest.
    """
    if isinstance(value, bytes):
        return value.startswith(_PREFIX.encode())
    return isinstance(value, str) and value.startswith(_PREFIX)


def report_refused(error: HashLimitError) -> None:
    """Log a warning for a stored hash the limits refused: a user who may be locked out.

    The message names the hash's parameters and the limits (never the hash or the password), and
    how to accept such hashes.
    """
    LOGGER.warning(
        "%s; if this server made such hashes, declare their parameters as previous "
        "(or raise max_memory or max_work), otherwise its user cannot log in",
        error,
    )


def verify_quietly(hasher: PasswordHasher, stored: str | bytes, password: str | bytes) -> bool:
    """Return whether `password` matches `stored`: False for a mismatch or an unusable hash.

    An unusable hash is malformed, or asks for more memory or work than the hasher allows (which
    is logged, see :func:`report_refused`); a ``str`` password that is not valid Unicode cannot
    match either.  The frameworks' protocols want a bool here, never an exception.
    """
    try:
        return hasher.verify(stored, password)
    except HashLimitError as error:
        report_refused(error)
        return False
    except (VerificationError, InvalidHashError, InvalidParametersError):
        return False
