"""pwdlib adapter: ``TwoCatsHasher`` for ``pwdlib.PasswordHash``, as used with FastAPI.

``PasswordHash((TwoCatsHasher(), Argon2Hasher()))`` hashes new passwords with twocats and still
verifies argon2 hashes; ``verify_and_update`` hands back a twocats hash for each argon2 user who
logs in, and for twocats hashes made with other parameters (a lower cost included: lowering the
cost never locks anyone out).  When a login names no user, call
:meth:`TwoCatsHasher.dummy_verify` so that the answer takes as long as for a real one.  Needs
``pip install -e '.[pwdlib]'`` (in a checkout).
"""

from __future__ import annotations

from twocats.integrations._common import missing_framework

try:
    from pwdlib.hashers import HasherProtocol
except ImportError as error:
    raise missing_framework(__name__, "pwdlib", "pwdlib") from error

from collections.abc import Iterable

from twocats.exceptions import InvalidHashError, InvalidParametersError, VerificationError
from twocats.hasher import PasswordHasher
from twocats.integrations._common import has_twocats_prefix, verify_quietly
from twocats.params import Params
from twocats.profiles import DEFAULT

__all__ = ["TwoCatsHasher"]


def _check_type(value: object, name: str) -> None:
    """Refuse a password or hash that is neither str nor bytes, as pwdlib's own hashers do."""
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be str or bytes")


class TwoCatsHasher(HasherProtocol):
    """pwdlib's hasher protocol over a :class:`twocats.PasswordHasher`.

    Give either a `hasher`, or the keywords that make one: `params` (default
    :data:`twocats.profiles.DEFAULT`; a ``start_mem_cost`` below its memory cost gives new hashes
    the shape of upgraded ones, see :meth:`dummy_verify`) and the stored-hash limits `previous`,
    `max_memory` and `max_work` (see :class:`twocats.PasswordHasher`).  A stored hash the limits
    refuse fails to verify and is logged as a warning by the ``twocats.integrations`` logger.

    ``verify`` returns False for a wrong password and for a malformed or oversized hash.  The
    twocats hasher stays reachable as :attr:`hasher`, for example to raise the memory cost of
    stored hashes offline with its ``upgrade``.
    """

    def __init__(
        self,
        hasher: PasswordHasher | None = None,
        *,
        params: Params | None = None,
        previous: Iterable[Params] = (),
        max_memory: int | None = None,
        max_work: int | None = None,
    ) -> None:
        if hasher is None:
            hasher = PasswordHasher.from_params(
                DEFAULT if params is None else params,
                previous=previous,
                max_memory=max_memory,
                max_work=max_work,
            )
        elif not isinstance(hasher, PasswordHasher):
            raise TypeError(f"hasher must be a twocats.PasswordHasher, not {type(hasher).__name__}")
        elif params is not None or previous != () or (max_memory, max_work) != (None, None):
            raise TypeError("give either a hasher or the keywords that make one, not both")
        self._hasher = hasher

    @property
    def hasher(self) -> PasswordHasher:
        """The twocats hasher behind this adapter."""
        return self._hasher

    def __repr__(self) -> str:
        return f"TwoCatsHasher({self._hasher!r})"

    @classmethod
    def identify(cls, hash: str | bytes) -> bool:
        """Return whether `hash` is a twocats string (by its prefix; verify checks the rest)."""
        _check_type(hash, "hash")
        return has_twocats_prefix(hash)

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        """Hash `password` into a twocats PHC string (`salt` only to reproduce known answers)."""
        _check_type(password, "password")
        return self._hasher.hash(password, salt=salt)

    def verify(self, password: str | bytes, hash: str | bytes) -> bool:
        """Return whether `password` matches `hash`; False for a mismatch or an unusable hash."""
        _check_type(password, "password")
        _check_type(hash, "hash")
        return verify_quietly(self._hasher, hash, password)

    def dummy_verify(self, password: str | bytes) -> bool:
        """Spend what verifying a stored hash costs, and return False: for a login naming no user.

        The work is that of verifying a hash of the hasher's own parameters
        (:meth:`twocats.PasswordHasher.verify_unknown`).  After stored hashes were upgraded
        offline, give the hasher a ``start_mem_cost`` equal to the memory cost they were
        upgraded from: new hashes then take their shape, and this costs what verifying them
        costs, so that response times do not tell which user names exist.
        """
        _check_type(password, "password")
        try:
            self._hasher.verify_unknown(password)
        except (VerificationError, InvalidParametersError):
            return False
        raise AssertionError("verify_unknown always raises")  # pragma: no cover

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        """Return True if `hash` was made with other parameters (or is malformed)."""
        _check_type(hash, "hash")
        try:
            return self._hasher.needs_rehash(hash)
        except InvalidHashError:
            return True
