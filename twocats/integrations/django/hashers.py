"""``TwoCatsPasswordHasher``: twocats as a Django password hasher.

The stored value is Django's algorithm name followed by the PHC string, as Django's own argon2
hasher does it: ``twocats$twocats$v=2015$m=18,x=3$<salt>$<hash>``.  Django's salt (22 random
letters and digits, 128 bits) is the twocats salt, byte for byte.  The value must fit Django's
``password`` column of :data:`MAX_STORED_LENGTH` characters, including after an offline upgrade
(which adds the ``s=`` start level to the string); a configuration whose hashes could be longer
(for example any 64-byte output, ``hash_type="blake2b"`` or ``"sha512"``) is refused with
:class:`~twocats.exceptions.InvalidParametersError` the first time the hasher is used.

A login beyond the hasher's bounds (``max_concurrency``, ``max_total_memory``, ``timeout``)
raises :class:`HasherBusyDeniedError`, which Django's ``authenticate()`` takes for a backend's
refusal: the login fails, as with a wrong password, and never becomes a server error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from typing import Any, NamedTuple

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_noop as _

from twocats import phc
from twocats._units import format_size
from twocats.exceptions import (
    HasherBusyError,
    InvalidHashError,
    InvalidParametersError,
    TwoCatsError,
)
from twocats.integrations._common import shared_hasher, verify_quietly
from twocats.integrations.stored import DJANGO_ALGORITHM, MAX_STORED_LENGTH, longest_stored
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import DEFAULT

__all__ = [
    "MAX_STORED_LENGTH",
    "HasherBusyDeniedError",
    "TwoCatsPasswordHasher",
    "longest_stored",
]


class HasherBusyDeniedError(HasherBusyError, PermissionDenied):
    """The hasher waited its ``timeout`` in vain for a slot, as Django's authentication takes it.

    It is a :class:`~twocats.exceptions.HasherBusyError` and Django's ``PermissionDenied``:
    ``django.contrib.auth.authenticate()`` treats it as a backend refusing the login (it returns
    None and sends ``user_login_failed``), whether it came from checking a user's password or from
    the decoy hash of a user that does not exist, so the login fails as a wrong password does and
    takes no longer; a view that checks or sets a password itself answers 403, never 500, unless
    it catches :class:`~twocats.exceptions.HasherBusyError` to answer 503.
    """


@contextlib.contextmanager
def denied_when_busy() -> Iterator[None]:
    """Raise :class:`HasherBusyDeniedError` for a hasher that stayed busy beyond its timeout."""
    try:
        yield
    except HasherBusyError as error:
        raise HasherBusyDeniedError(str(error)) from None


class TwoCatsPasswordHasher(BasePasswordHasher):
    """A Django password hasher that stores twocats PHC strings.

    Configure it by subclassing, as with Django's ``Argon2PasswordHasher``: set `params` to a
    :class:`~twocats.params.Params` (a profile from :mod:`twocats.profiles`; the default is
    :data:`twocats.profiles.DEFAULT`), or override only `mem_cost`, `multiplies` or
    `parallelism`.  The attributes are read at every use, so one set on an instance (Django's own
    tests do that) takes effect at once.

    `start_mem_cost` gives new hashes the shape of upgraded ones: after ``twocats_upgrade`` (or
    ``twocats upgrade-db``) raised the memory cost from ``m`` to the configured one, set it to
    ``m``.  New hashes then start at that level too, and Django's decoy for a login naming no
    user (it hashes the password once) costs what verifying an upgraded hash costs, so login
    times do not tell which user names exist.

    `max_concurrency`, `max_total_memory` and `timeout` bound the hashes running at once, their
    memory and a login's wait for a slot (see :class:`twocats.PasswordHasher`; ``twocats tune
    --for django`` prints them); a login that waited `timeout` seconds in vain fails with
    :class:`HasherBusyDeniedError`.  Every hasher class configured alike shares one twocats
    hasher, and so one set of bounds.

    The stored-hash limits (see :class:`twocats.PasswordHasher`) accept the hashes of the
    configured parameters, of every built-in profile and of the parameters listed in `previous`
    (a tuple of :class:`~twocats.params.Params`: what this site used before); `max_memory` and
    `max_work` set them outright.  A stored hash they refuse fails to verify and is logged as a
    warning by the ``twocats.integrations`` logger; ``manage.py check`` warns of a `previous`
    set whose hashes they refuse (see :mod:`twocats.integrations.django.checks`).

    ``verify`` returns False for a wrong password and for a malformed hash, never raises for
    either; ``must_update`` asks Django to rehash a hash made with other parameters or a shorter
    salt at the next login; :meth:`upgrade` raises the memory cost of a stored value without
    the password.
    """

    algorithm = DJANGO_ALGORITHM
    params: Params = DEFAULT
    mem_cost: int | None = None
    start_mem_cost: int | None = None
    multiplies: int | None = None
    parallelism: int | None = None
    previous: tuple[Params, ...] = ()
    max_memory: int | None = None
    max_work: int | None = None
    max_concurrency: int | None = None
    max_total_memory: int | None = None
    timeout: float | None = None

    @property
    def hasher(self) -> PasswordHasher:
        """The configured twocats hasher (the configuration is checked at first use)."""
        return _configured(type(self).__qualname__, self._settings())

    def _settings(self) -> _Settings:
        """Return the configuration as this instance's attributes give it."""
        name = type(self).__qualname__
        if not isinstance(self.params, Params):
            raise InvalidParametersError(
                f"{name}.params must be a twocats.Params, not {type(self.params).__name__}"
            )
        try:
            params = self._resolved(self.params)
            previous = tuple(self.previous)
            for earlier in previous:
                if not isinstance(earlier, Params):
                    raise TypeError(
                        f"previous must hold twocats.Params, not {type(earlier).__name__}"
                    )
        except (ValueError, TypeError) as exc:
            raise InvalidParametersError(f"{name} is misconfigured: {exc}") from None
        return _Settings(
            params,
            len(self.salt()),
            previous,
            self.max_memory,
            self.max_work,
            self.max_concurrency,
            self.max_total_memory,
            self.timeout,
        )

    def _resolved(self, params: Params) -> Params:
        """Return `params` with the cost attributes of this instance applied."""
        if self.mem_cost is not None:
            params = dataclasses.replace(
                params, mem_cost=self.mem_cost, start_mem_cost=self.mem_cost
            )
        if self.start_mem_cost is not None:
            params = dataclasses.replace(params, start_mem_cost=self.start_mem_cost)
        if self.multiplies is not None:
            params = dataclasses.replace(params, multiplies=self.multiplies)
        if self.parallelism is not None:
            params = dataclasses.replace(params, parallelism=self.parallelism)
        return params

    def encode(self, password: str, salt: str) -> str:
        """Hash `password` with Django's `salt` (a str without ``$``) into a stored value."""
        self._check_encode_args(password, salt)
        if not isinstance(salt, str):
            raise TypeError(f"salt must be a str, not {type(salt).__name__}")
        with denied_when_busy():
            return self._stored(self.hasher.hash(password, salt=salt.encode()))

    def decode(self, encoded: str) -> dict[str, Any]:
        """Split a stored value into algorithm, salt, hash and the twocats parameters.

        The salt is the str :meth:`encode` was given.  Raises
        :class:`~twocats.exceptions.InvalidHashError` for a value this hasher did not make.
        """
        text = self._phc(encoded)
        stored = phc.decode(text)
        return {
            "algorithm": self.algorithm,
            # Salts of other origins (not UTF-8) show their bytes escaped, never mangled.
            "salt": stored.salt.decode("utf-8", "backslashreplace"),
            # The decoder accepts canonical strings only, so the last field is the hash as stored.
            "hash": text.rpartition("$")[2],
            "params": stored.params,
        }

    def verify(self, password: str, encoded: str) -> bool:
        """Return whether `password` matches; False for a mismatch or a malformed value.

        Raises :class:`HasherBusyDeniedError` after waiting `timeout` seconds in vain for a slot.
        """
        try:
            text = self._phc(encoded)
        except InvalidHashError:
            return False
        with denied_when_busy():
            return verify_quietly(self.hasher, text, password)

    def safe_summary(self, encoded: str) -> dict[str, Any]:
        """The parameters of a stored value, with its salt and hash masked (for the admin)."""
        decoded = self.decode(encoded)
        params: Params = decoded["params"]
        return {
            _("algorithm"): decoded["algorithm"],
            _("variant"): params.variant,
            _("hash type"): params.hash_type,
            _("memory cost"): f"{params.mem_cost} ({format_size(params.memory_bytes)})",
            _("start memory cost"): params.start_mem_cost,
            _("multiplies"): params.multiplies,
            _("parallelism"): params.parallelism,
            _("salt"): mask_hash(decoded["salt"]),
            _("hash"): mask_hash(decoded["hash"]),
        }

    def must_update(self, encoded: str) -> bool:
        """Return True unless `encoded` has the configured parameters and a long enough salt.

        An upgraded hash (its start level below the configured one) is up to date.  A malformed
        value also answers True: it can never verify, so any new value is better.
        """
        try:
            return self.hasher.needs_rehash(self._phc(encoded))
        except InvalidHashError:
            return True

    def harden_runtime(self, password: str, encoded: str) -> None:
        """Spend the work a stored hash of a lower cost lacks (after a wrong password).

        Django calls this when a wrong password was given for a hash that must be updated, so that
        the time of a failed login does not tell old accounts from current ones.  For a hash that
        differs from the configuration only by its memory cost, the missing work is exactly that
        of upgrading it, which is run and thrown away; for one whose start level is above the
        configured `start_mem_cost`, it is the levels in between, which are derived and thrown
        away.  Any other difference (another hash type, other multiplies) has no well-defined
        difference and is left alone, as Django's argon2 hasher does.  A value whose upgrade
        would not fit the column is refused only after the work, so it costs the same, and a
        failed login never raises.
        """
        if self.can_upgrade(encoded):
            with contextlib.suppress(TwoCatsError):
                self.upgrade(encoded)
        lower = self._lower_levels(encoded)
        if lower is not None:
            shape = phc.encode(lower, bytes(phc.MIN_SALT_BYTES), bytes(lower.output_size))
            with contextlib.suppress(TwoCatsError):
                self.hasher.verify_unknown(password, like=shape)

    def _lower_levels(self, encoded: str) -> Params | None:
        """Return the levels below its start that `encoded` lacks, as parameters (None: none)."""
        own = self.hasher.params
        try:
            stored = phc.decode(self._phc(encoded)).params
        except InvalidHashError:
            return None
        start, own_start = stored.start_mem_cost or 0, own.start_mem_cost or 0
        if start <= own_start or stored.mem_cost > own.mem_cost:
            return None
        with contextlib.suppress(InvalidParametersError):
            # Only a hash that differs from the configuration in its costs alone.
            if dataclasses.replace(stored, mem_cost=own.mem_cost, start_mem_cost=own_start) == own:
                return dataclasses.replace(own, mem_cost=start - 1, start_mem_cost=own_start)
        return None

    def can_upgrade(self, encoded: str) -> bool:
        """Return True if :meth:`upgrade` would raise the memory cost of `encoded`."""
        try:
            return self.hasher.can_upgrade(self._phc(encoded))
        except InvalidHashError:
            return False

    def upgrade(self, encoded: str) -> str:
        """Return `encoded` raised to the configured memory cost, computed without the password.

        The result verifies the same password.  A value already at the configured memory cost
        comes back unchanged.  Raises :class:`~twocats.exceptions.InvalidHashError` for a
        malformed value and :class:`~twocats.exceptions.InvalidParametersError` for one that
        differs in another parameter (Django rehashes it at the user's next login).
        """
        return self._stored(self.hasher.upgrade(self._phc(encoded)))

    def _phc(self, encoded: str) -> str:
        """Return the PHC string inside a stored value."""
        if not isinstance(encoded, str):
            raise InvalidHashError("a stored Django password is a str")
        algorithm, sep, rest = encoded.partition("$")
        if algorithm != self.algorithm or not sep:
            raise InvalidHashError(f"not a value of the {self.algorithm!r} hasher")
        return sep + rest

    def _stored(self, phc_string: str) -> str:
        """Return the stored value for `phc_string`, refusing one too long for the column."""
        encoded = self.algorithm + phc_string
        if len(encoded) > MAX_STORED_LENGTH:
            raise InvalidParametersError(
                f"the stored value would be {len(encoded)} characters, more than the "
                f"{MAX_STORED_LENGTH} of Django's password column (is the salt longer than "
                "the hasher's own?)"
            )
        return encoded


class _Settings(NamedTuple):
    """A hasher's configuration, as read from its attributes."""

    params: Params
    salt_len: int
    previous: tuple[Params, ...]
    max_memory: int | None
    max_work: int | None
    max_concurrency: int | None
    max_total_memory: int | None
    timeout: float | None


@functools.lru_cache(maxsize=64)
def _configured(name: str, settings: _Settings) -> PasswordHasher:
    """Check the configuration of the hasher class `name` and return its twocats hasher."""
    params = settings.params
    try:
        hasher = shared_hasher(*settings)
    except (ValueError, TypeError) as exc:
        raise InvalidParametersError(f"{name} is misconfigured: {exc}") from None
    longest = longest_stored(params, settings.salt_len)
    if longest > MAX_STORED_LENGTH:
        raise InvalidParametersError(
            f"{name} is misconfigured: its stored values could be {longest} "
            f"characters, more than the {MAX_STORED_LENGTH} of Django's password column; "
            f"a 64-byte output never fits (this one is {params.output_size} bytes): use "
            "hash_type 'blake2s' or 'sha256'"
        )
    return hasher
