"""pwdlib adapter: ``TwoCatsHasher`` for ``pwdlib.PasswordHash``, as used with FastAPI.

``PasswordHash((TwoCatsHasher(), Argon2Hasher()))`` hashes new passwords with twocats and still
verifies argon2 hashes; ``verify_and_update`` hands back a twocats hash for each argon2 user who
logs in.  Needs ``pip install -e '.[pwdlib]'`` (in a checkout).
"""

from __future__ import annotations

from twocats.integrations._common import missing_framework

try:
    from pwdlib.hashers import HasherProtocol
except ImportError as error:
    raise missing_framework(__name__, "pwdlib", "pwdlib") from error

from twocats.exceptions import InvalidHashError
from twocats.hasher import PasswordHasher
from twocats.integrations._common import has_twocats_prefix, verify_quietly

__all__ = ["TwoCatsHasher"]


def _check_type(value: object, name: str) -> None:
    """Refuse a password or hash that is neither str nor bytes, as pwdlib's own hashers do."""
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be str or bytes")


class TwoCatsHasher(HasherProtocol):
    """pwdlib's hasher protocol over a :class:`twocats.PasswordHasher` (the default one if None).

    ``verify`` returns False for a wrong password and for a malformed or oversized hash.  The
    twocats hasher stays reachable as :attr:`hasher`, for example to raise the memory cost of
    stored hashes offline with its ``upgrade``.
    """

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        if hasher is not None and not isinstance(hasher, PasswordHasher):
            raise TypeError(f"hasher must be a twocats.PasswordHasher, not {type(hasher).__name__}")
        self._hasher = PasswordHasher() if hasher is None else hasher

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

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        """Return True if `hash` was made with other parameters (or is malformed)."""
        _check_type(hash, "hash")
        try:
            return self._hasher.needs_rehash(hash)
        except InvalidHashError:
            return True
