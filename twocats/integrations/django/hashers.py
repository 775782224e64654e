"""``TwoCatsPasswordHasher``: twocats as a Django password hasher.

The stored value is Django's algorithm name followed by the PHC string, as Django's own argon2
hasher does it: ``twocats$twocats$v=2015$m=18,x=3$<salt>$<hash>``.  Django's salt (22 random
letters and digits, 128 bits) is the twocats salt, byte for byte.  The value must fit Django's
``password`` column of :data:`MAX_STORED_LENGTH` characters, including after an offline upgrade
(which adds the ``s=`` start level to the string); a configuration whose hashes could be longer
(for example any 64-byte output, ``hash_type="blake2b"`` or ``"sha512"``) is refused with
:class:`~twocats.exceptions.InvalidParametersError` the first time the hasher is used.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, ClassVar

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash
from django.utils.translation import gettext_noop as _

from twocats import phc
from twocats.exceptions import InvalidHashError, InvalidParametersError, TwoCatsError
from twocats.hasher import PasswordHasher
from twocats.integrations._common import shared_hasher, verify_quietly
from twocats.kdf.limits import format_size
from twocats.params import Params
from twocats.profiles import DEFAULT

__all__ = ["MAX_STORED_LENGTH", "TwoCatsPasswordHasher"]

#: The length of ``AbstractBaseUser.password`` (``CharField(max_length=128)``).
MAX_STORED_LENGTH = 128


class TwoCatsPasswordHasher(BasePasswordHasher):
    """A Django password hasher that stores twocats PHC strings.

    Configure it by subclassing, as with Django's ``Argon2PasswordHasher``: set `params` to a
    :class:`~twocats.params.Params` (a profile from :mod:`twocats.profiles`; the default is
    :data:`twocats.profiles.DEFAULT`), or override only `mem_cost`, `multiplies` or
    `parallelism`.  ``verify`` returns False for a wrong password and for a malformed hash, never
    raises for either; ``must_update`` asks Django to rehash a hash made with other parameters or
    a shorter salt at the next login; :meth:`upgrade` raises the memory cost of a stored value
    without the password.
    """

    algorithm = "twocats"
    params: ClassVar[Params] = DEFAULT
    mem_cost: ClassVar[int | None] = None
    multiplies: ClassVar[int | None] = None
    parallelism: ClassVar[int | None] = None

    @property
    def hasher(self) -> PasswordHasher:
        """The configured twocats hasher (the configuration is checked on first use)."""
        return _configured(type(self))

    def encode(self, password: str, salt: str) -> str:
        """Hash `password` with Django's `salt` (a str without ``$``) into a stored value."""
        if password is None:
            raise TypeError("password must be provided")
        if not isinstance(salt, str) or not salt or "$" in salt:
            raise ValueError("salt must be a non-empty str without '$'")
        return self._stored(self.hasher.hash(password, salt=salt.encode()))

    def decode(self, encoded: str) -> dict[str, Any]:
        """Split a stored value into algorithm, salt, hash and the twocats parameters.

        Raises :class:`~twocats.exceptions.InvalidHashError` for a value this hasher did not make.
        """
        text = self._phc(encoded)
        stored = phc.decode(text)
        return {
            "algorithm": self.algorithm,
            "salt": stored.salt.decode("latin-1"),
            # The decoder accepts canonical strings only, so the last field is the hash as stored.
            "hash": text.rpartition("$")[2],
            "params": stored.params,
        }

    def verify(self, password: str, encoded: str) -> bool:
        """Return whether `password` matches; False for a mismatch or a malformed value."""
        try:
            text = self._phc(encoded)
        except InvalidHashError:
            return False
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
        """Spend the work a stored hash of a lower memory cost lacks (after a wrong password).

        Django calls this when a wrong password was given for a hash that must be updated, so that
        the time of a failed login does not tell old accounts from current ones.  For a hash that
        differs from the configuration only by its memory cost, the missing work is exactly that
        of upgrading it, which is run and thrown away.  Any other difference (another hash type,
        other multiplies) has no well-defined difference and is left alone, as Django's argon2
        hasher does.  A value whose upgrade would not fit the column is refused only after the
        work, so it costs the same, and a failed login never raises.
        """
        if self.can_upgrade(encoded):
            with contextlib.suppress(TwoCatsError):
                self.upgrade(encoded)

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


def _resolved(cls: type[TwoCatsPasswordHasher]) -> Params:
    """Return the parameters a hasher class configures."""
    params = cls.params
    if not isinstance(params, Params):
        raise InvalidParametersError(
            f"{cls.__qualname__}.params must be a twocats.Params, not {type(params).__name__}"
        )
    if cls.mem_cost is not None:
        params = dataclasses.replace(params, mem_cost=cls.mem_cost, start_mem_cost=cls.mem_cost)
    if cls.multiplies is not None:
        params = dataclasses.replace(params, multiplies=cls.multiplies)
    if cls.parallelism is not None:
        params = dataclasses.replace(params, parallelism=cls.parallelism)
    return params


def longest_stored(params: Params, salt_len: int) -> int:
    """Return the length of the longest value a hasher for `params` can store.

    That is a fresh hash, or one upgraded from a lower memory cost, whose string then carries
    the start level as well (at most ``mem_cost - 1``, the widest such number).
    """
    forms = [params]
    if params.mem_cost > 0:
        # A March 2014 set may refuse that start level, and then every lower one too: no
        # upgraded value of it exists.
        with contextlib.suppress(InvalidParametersError):
            forms.append(dataclasses.replace(params, start_mem_cost=params.mem_cost - 1))
    salt = bytes(salt_len)
    return max(
        len(TwoCatsPasswordHasher.algorithm) + len(phc.encode(form, salt, bytes(form.output_size)))
        for form in forms
    )


# The checked twocats hasher of each hasher class, filled on first use.
_CONFIGURED: dict[type[TwoCatsPasswordHasher], PasswordHasher] = {}


def _configured(cls: type[TwoCatsPasswordHasher]) -> PasswordHasher:
    """Return the twocats hasher of a hasher class, checking its configuration on first use."""
    hasher = _CONFIGURED.get(cls)
    if hasher is None:
        hasher = _CONFIGURED.setdefault(cls, _checked(cls))
    return hasher


def _checked(cls: type[TwoCatsPasswordHasher]) -> PasswordHasher:
    """Check the configuration of a hasher class and return its twocats hasher."""
    try:
        params = _resolved(cls)
        salt_len = len(cls().salt())
        hasher = shared_hasher(params, salt_len)
    except ValueError as exc:
        raise InvalidParametersError(f"{cls.__qualname__} is misconfigured: {exc}") from None
    longest = longest_stored(params, salt_len)
    if longest > MAX_STORED_LENGTH:
        raise InvalidParametersError(
            f"{cls.__qualname__} is misconfigured: its stored values could be {longest} "
            f"characters, more than the {MAX_STORED_LENGTH} of Django's password column; "
            f"a 64-byte output never fits (this one is {params.output_size} bytes): use "
            "hash_type 'blake2s' or 'sha256'"
        )
    return hasher
