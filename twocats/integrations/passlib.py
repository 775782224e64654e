"""libpass / passlib adapter: ``TwoCatsHandler`` for a ``CryptContext``.

``CryptContext(schemes=[TwoCatsHandler, "argon2"])`` hashes new passwords with twocats and
verifies argon2 hashes; ``verify_and_update`` returns a twocats hash for each argon2 user who logs
in, and for twocats hashes made with other parameters.  Settings, in code or in an ini file
(``twocats__mem_cost = 20``): ``profile`` (a name of :data:`twocats.profiles.PROFILES` or a
:class:`~twocats.params.Params`), ``mem_cost``, ``multiplies`` and ``parallelism``.  To name the
scheme ``twocats`` in an ini file, register the handler once with
``passlib.registry.register_crypt_handler(TwoCatsHandler)``.  Works with
libpass, the maintained fork, and with passlib 1.7.4 on the Pythons where it still imports.
Needs ``pip install -e '.[passlib]'`` (in a checkout).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from twocats.integrations._common import missing_framework

try:
    from passlib.utils import handlers as uh
except ImportError as error:
    raise missing_framework(__name__, "libpass (or passlib)", "passlib") from error

from twocats.exceptions import InvalidParametersError, VerificationError
from twocats.hasher import DEFAULT_SALT_LEN, PasswordHasher
from twocats.integrations._common import has_twocats_prefix, shared_hasher
from twocats.params import Params
from twocats.profiles import DEFAULT, PROFILES

__all__ = ["TwoCatsHandler"]


def _integer(name: str, value: object) -> int:
    """Return an integer setting given as an int or, from an ini file, as decimal text."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidParametersError(f"twocats setting {name} must be an integer")


def _profile(value: object) -> Params:
    if isinstance(value, Params):
        return value
    if isinstance(value, str) and value.strip().lower() in PROFILES:
        return PROFILES[value.strip().lower()]
    raise InvalidParametersError(
        f"twocats setting profile must be a twocats.Params or one of {', '.join(PROFILES)}"
    )


class TwoCatsHandler(uh.MinimalHandler):  # type: ignore[misc]
    """A password hash handler (passlib's class-based API) for twocats PHC strings.

    ``verify`` returns False for a wrong password and, like every passlib handler, raises
    ``ValueError`` (:class:`~twocats.exceptions.InvalidHashError`) for a malformed hash or one
    asking for more than the hasher's limits.
    """

    name = "twocats"
    setting_kwds = ("profile", "mem_cost", "multiplies", "parallelism")
    context_kwds = ()
    params: ClassVar[Params] = DEFAULT

    @classmethod
    def using(cls, relaxed: bool = False, **settings: Any) -> type[TwoCatsHandler]:
        """Return a subclass configured with `settings` (see the module documentation)."""
        params = cls.params
        unknown = {key: value for key, value in settings.items() if key not in cls.setting_kwds}
        configured: type[TwoCatsHandler] = super().using(relaxed=relaxed, **unknown)
        if "profile" in settings:
            params = _profile(settings["profile"])
        if "mem_cost" in settings:
            cost = _integer("mem_cost", settings["mem_cost"])
            params = dataclasses.replace(params, mem_cost=cost, start_mem_cost=cost)
        if "multiplies" in settings:
            multiplies = _integer("multiplies", settings["multiplies"])
            params = dataclasses.replace(params, multiplies=multiplies)
        if "parallelism" in settings:
            parallelism = _integer("parallelism", settings["parallelism"])
            params = dataclasses.replace(params, parallelism=parallelism)
        configured.params = params
        configured._hasher()  # A bad configuration fails here, when the context is built.
        return configured

    @classmethod
    def _hasher(cls) -> PasswordHasher:
        return shared_hasher(cls.params, DEFAULT_SALT_LEN)

    @classmethod
    def identify(cls, hash: str | bytes) -> bool:
        """Return whether `hash` is a twocats string (by its prefix; verify checks the rest)."""
        return has_twocats_prefix(hash)

    @classmethod
    def hash(cls, secret: str | bytes, **settings: Any) -> str:
        """Hash `secret` into a twocats PHC string (`settings`: a one-off :meth:`using`)."""
        if settings:
            return cls.using(**settings).hash(secret)
        uh.validate_secret(secret)
        return cls._hasher().hash(secret)

    @classmethod
    def verify(cls, secret: str | bytes, hash: str | bytes, **context: Any) -> bool:
        """Return whether `secret` matches `hash` (False for a mismatch)."""
        uh.validate_secret(secret)
        try:
            return cls._hasher().verify(hash, secret)
        except VerificationError:
            return False

    @classmethod
    def needs_update(cls, hash: str | bytes, secret: str | bytes | None = None) -> bool:
        """Return True if `hash` was made with other parameters or a shorter salt.

        Raises ``ValueError`` (:class:`~twocats.exceptions.InvalidHashError`) for a malformed hash.
        """
        return cls._hasher().needs_rehash(hash)
