"""pwdlib adapter: ``TwoCatsHasher`` for ``pwdlib.PasswordHash``, as used with FastAPI.

``PasswordHash((TwoCatsHasher(), Argon2Hasher()))`` hashes new passwords with twocats and still
verifies argon2 hashes; ``verify_and_update`` hands back a twocats hash for each argon2 user who
logs in, and for twocats hashes made with other parameters (a lower cost included: lowering the
cost never locks anyone out).  When a login names no user, call
:meth:`TwoCatsHasher.dummy_verify` so that the answer takes as long as for a real one.

pwdlib's own argon2 and bcrypt hashers compute whatever a stored string asks for.  Wrapped in
:class:`AdmittedHasher`, as in
``PasswordHash((twocats, AdmittedHasher(Argon2Hasher(), twocats.hasher)))``, they verify under
the twocats hasher's admission control and limits: the memory of each verification counts
against its ``max_total_memory``, and a stored hash above its limits fails to verify, with the
warning of a refused twocats hash.  Needs ``pip install -e '.[pwdlib]'`` (in a
checkout).
"""

from __future__ import annotations

from twocats.integrations._common import missing_framework

try:
    from pwdlib.exceptions import PwdlibError
    from pwdlib.hashers import HasherProtocol
except ImportError as error:
    raise missing_framework(__name__, "pwdlib", "pwdlib") from error

from collections.abc import Iterable

from twocats.exceptions import (
    HashLimitError,
    InvalidHashError,
    InvalidParametersError,
    VerificationError,
)
from twocats.integrations._common import has_twocats_prefix, report_refused, verify_quietly
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import DEFAULT

__all__ = ["AdmittedHasher", "TwoCatsHasher"]


def _check_type(value: object, name: str) -> None:
    """Refuse a password or hash that is neither str nor bytes, as pwdlib's own hashers do."""
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be str or bytes")


class TwoCatsHasher(HasherProtocol):
    """pwdlib's hasher protocol over a :class:`twocats.PasswordHasher`.

    Give either a `hasher`, or the keywords that make one: `params` (default
    :data:`twocats.profiles.DEFAULT`; a ``start_mem_cost`` below its memory cost gives new hashes
    the shape of upgraded ones, see :meth:`dummy_verify`), the stored-hash limits `previous`,
    `max_memory` and `max_work`, and the bounds `max_concurrency`, `max_total_memory` and
    `timeout` (see :class:`twocats.PasswordHasher`; ``twocats tune --for pwdlib`` prints them).
    A stored hash the limits refuse fails to verify and is logged as a warning by the
    ``twocats.integrations`` logger.

    ``verify`` returns False for a wrong password and for a malformed or oversized hash, and
    raises :class:`~twocats.exceptions.HasherBusyError` after waiting `timeout` seconds in vain
    for a slot (answer 503, as ``examples/fastapi_login.py`` does).  The
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
        max_concurrency: int | None = None,
        max_total_memory: int | None = None,
        timeout: float | None = None,
    ) -> None:
        bounds = (max_memory, max_work, max_concurrency, max_total_memory, timeout)
        if hasher is None:
            hasher = PasswordHasher.from_params(
                DEFAULT if params is None else params,
                previous=previous,
                max_memory=max_memory,
                max_work=max_work,
                max_concurrency=max_concurrency,
                max_total_memory=max_total_memory,
                timeout=timeout,
            )
        elif not isinstance(hasher, PasswordHasher):
            raise TypeError(f"hasher must be a twocats.PasswordHasher, not {type(hasher).__name__}")
        elif params is not None or previous != () or bounds != (None,) * len(bounds):
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


class AdmittedHasher(HasherProtocol):
    """pwdlib's argon2 or bcrypt hasher `inner`, verifying under `hasher`'s admission and limits.

    ``verify`` first reads the stored string's cost (:meth:`twocats.PasswordHasher.check_foreign`):
    a hash above the limits, or one that is not a well-formed argon2 or bcrypt string, fails to
    verify (the former logged like a refused twocats hash); otherwise `inner` verifies it in an
    admission slot of `hasher`, which may raise :class:`~twocats.exceptions.HasherBusyError` after
    the hasher's timeout.  A hash that `inner` cannot verify (pwdlib raises
    ``HashVerificationError``) fails to verify too, so that a malformed stored hash is answered
    like a wrong password.  New hashes and ``check_needs_rehash`` are `inner`'s own, made with the
    operator's parameters.
    """

    def __init__(self, inner: HasherProtocol, hasher: PasswordHasher) -> None:
        if not isinstance(hasher, PasswordHasher):
            raise TypeError(f"hasher must be a twocats.PasswordHasher, not {type(hasher).__name__}")
        self._inner = inner
        self._hasher = hasher

    @property
    def inner(self) -> HasherProtocol:
        """The wrapped pwdlib hasher."""
        return self._inner

    def __repr__(self) -> str:
        return f"AdmittedHasher({self._inner!r}, {self._hasher!r})"

    # pwdlib asks the instance; its answer is the wrapped hasher's.
    def identify(self, hash: str | bytes) -> bool:  # type: ignore[override]
        """Return whether `inner` verifies `hash`."""
        return self._inner.identify(hash)

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        """`inner`'s hash of `password`."""
        return self._inner.hash(password, salt=salt)

    def verify(self, password: str | bytes, hash: str | bytes) -> bool:
        """Return whether `password` matches `hash`; False for a mismatch or a refused hash."""
        _check_type(password, "password")
        _check_type(hash, "hash")
        try:
            return self._hasher.verify_foreign(hash, lambda: self._inner_verify(password, hash))
        except HashLimitError as error:
            report_refused(error)
            return False
        except InvalidHashError:
            return False

    def _inner_verify(self, password: str | bytes, hash: str | bytes) -> bool:
        """`inner`'s answer; False where it cannot verify `hash` (pwdlib raises for that)."""
        try:
            return self._inner.verify(password, hash)
        except (PwdlibError, ValueError):
            return False

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        """`inner`'s answer."""
        return self._inner.check_needs_rehash(hash)
