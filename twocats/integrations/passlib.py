"""libpass / passlib adapter: ``TwoCatsHandler`` for a ``CryptContext``.

``CryptContext(schemes=[TwoCatsHandler, "argon2"])`` hashes new passwords with twocats and
verifies argon2 hashes; ``verify_and_update`` returns a twocats hash for each argon2 user who logs
in, and for twocats hashes made with other parameters (a lower cost included: lowering the cost
never locks anyone out).  Settings, in code or in an ini file (``twocats__mem_cost = 20``):

* ``profile``: a name of :data:`twocats.profiles.PROFILES` or a parameter string
  (:func:`twocats.phc.encode_params`, e.g. ``$twocats$v=2015$m=20,x=3``).  Settings are text and
  numbers, what ``CryptContext.to_string()`` can write back to an ini file, so a
  :class:`~twocats.params.Params` is refused with a message naming ``encode_params``;
* ``mem_cost``, ``start_mem_cost``, ``multiplies`` and ``parallelism``.  ``start_mem_cost`` gives
  new hashes the shape of upgraded ones (set it to the memory cost stored hashes were upgraded
  from), so that ``CryptContext.dummy_verify()`` costs what verifying an upgraded hash costs;
* the stored-hash limits (see :class:`twocats.PasswordHasher`): ``previous`` (the parameters used
  before, as profiles or parameter strings separated by spaces or ``", "``), ``max_memory`` and
  ``max_work``.  A stored hash they refuse raises ``ValueError`` and is logged as a warning by
  the ``twocats.integrations`` logger;
* the bounds of the hasher (see :class:`twocats.PasswordHasher`; ``twocats tune --for passlib``
  prints them): ``max_concurrency``, ``max_total_memory`` (bytes) and ``timeout`` (seconds, a
  decimal number).  A verification that waited ``timeout`` seconds in vain for a slot raises
  :class:`~twocats.exceptions.HasherBusyError`: answer it as "busy, try again" (503), not as a
  wrong password.

passlib's own argon2 and bcrypt handlers compute whatever a stored string asks for.
``admitted(handler, hasher)`` returns the handler verifying under the twocats `hasher`'s
admission control and limits (``CryptContext(schemes=[TwoCatsHandler, admitted(argon2,
TwoCatsHandler.hasher())])``): each verification's memory counts against its
``max_total_memory``, and a stored hash above its limits raises ``ValueError`` and is logged, as a
twocats one is.

To name the scheme ``twocats`` in an ini file, register the handler once with
``passlib.registry.register_crypt_handler(TwoCatsHandler)``.  Works with libpass, the maintained
fork, and with passlib 1.7.4 on the Pythons where it still imports.  Needs
``pip install -e '.[passlib]'`` (in a checkout).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from twocats.integrations._common import missing_framework

try:
    from passlib import exc
    from passlib.utils import handlers as uh
except ImportError as error:
    raise missing_framework(__name__, "libpass (or passlib)", "passlib") from error

from twocats import phc
from twocats.exceptions import (
    HashLimitError,
    InvalidHashError,
    InvalidParametersError,
    VerificationError,
)
from twocats.integrations._common import has_twocats_prefix, report_refused, shared_hasher
from twocats.params import Params
from twocats.password import DEFAULT_SALT_LEN, PasswordHasher
from twocats.profiles import DEFAULT, PROFILES

__all__ = ["TwoCatsHandler", "admitted"]

# The cost settings, applied in this order after the profile.
_COSTS = ("mem_cost", "start_mem_cost", "multiplies", "parallelism")

# The integer limits and bounds of the hasher.
_LIMITS = ("max_memory", "max_work", "max_concurrency", "max_total_memory")

# Items of a list given as text: separated by spaces, or by a comma and a space (a parameter
# string holds commas of its own, never a space).
_SEPARATORS = re.compile(r"\s*,\s+|\s+")


def _integer(name: str, value: object) -> int:
    """Return an integer setting given as an int or, from an ini file, as decimal text."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidParametersError(f"twocats setting {name} must be an integer")


def _seconds(name: str, value: object) -> float:
    """Return a duration setting in seconds, given as a number or, from an ini file, as text."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            value = None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise InvalidParametersError(f"twocats setting {name} must be a number of seconds above 0")


def _profile(value: object, name: str = "profile") -> Params:
    """Return the parameters a profile name or a parameter string stands for."""
    if isinstance(value, Params):
        raise InvalidParametersError(
            f"twocats setting {name} takes a profile name or a parameter string, which "
            f"CryptContext.to_string() can save; give twocats.phc.encode_params(params)"
        )
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in PROFILES:
            return PROFILES[text.lower()]
        if text.startswith(f"${phc.PHC_ID}$"):
            try:
                return phc.decode_params(text)
            except ValueError as exc:
                raise InvalidParametersError(f"twocats setting {name}: {exc}") from None
    raise InvalidParametersError(
        f"twocats setting {name} must be a parameter string ($twocats$v=...) or one of "
        f"{', '.join(PROFILES)}"
    )


def _previous(value: object) -> tuple[Params, ...]:
    """Return the earlier parameters of the `previous` setting (one, a list, or text)."""
    if isinstance(value, str):
        items: list[object] = []
        for token in _SEPARATORS.split(value.strip()):
            items.extend(token.split(",") if "$" not in token else [token])
        value = [item for item in items if item != ""]
    elif isinstance(value, Params):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InvalidParametersError("twocats setting previous must be a list of profiles")
    return tuple(_profile(item, "previous") for item in value)


def _hash_text(hash: object) -> str | bytes:
    """Refuse a hash that is neither str nor bytes with passlib's own TypeError."""
    if not isinstance(hash, (str, bytes)):
        raise exc.ExpectedStringError(hash, "hash")
    return hash


class TwoCatsHandler(uh.MinimalHandler):  # type: ignore[misc]
    """A password hash handler (passlib's class-based API) for twocats PHC strings.

    ``verify`` returns False for a wrong password and, like every passlib handler, raises
    ``ValueError`` (:class:`~twocats.exceptions.InvalidHashError`) for a malformed hash or one
    asking for more than the hasher's limits, and ``TypeError`` for a hash or password of
    another type; :class:`~twocats.exceptions.HasherBusyError` after waiting ``timeout`` seconds
    in vain for a slot.
    """

    name = "twocats"
    setting_kwds = ("profile", *_COSTS, "previous", *_LIMITS, "timeout")
    context_kwds = ()
    params: ClassVar[Params] = DEFAULT
    previous: ClassVar[tuple[Params, ...]] = ()
    max_memory: ClassVar[int | None] = None
    max_work: ClassVar[int | None] = None
    max_concurrency: ClassVar[int | None] = None
    max_total_memory: ClassVar[int | None] = None
    timeout: ClassVar[float | None] = None

    @classmethod
    def using(cls, relaxed: bool = False, **settings: Any) -> type[TwoCatsHandler]:
        """Return a subclass configured with `settings` (see the module documentation)."""
        params = cls.params
        unknown = {key: value for key, value in settings.items() if key not in cls.setting_kwds}
        configured: type[TwoCatsHandler] = super().using(relaxed=relaxed, **unknown)
        if "profile" in settings:
            params = _profile(settings["profile"])
        costs: dict[str, Any] = {
            name: _integer(name, settings[name]) for name in _COSTS if name in settings
        }
        if "mem_cost" in costs:
            costs.setdefault("start_mem_cost", costs["mem_cost"])
        configured.params = dataclasses.replace(params, **costs) if costs else params
        if "previous" in settings:
            configured.previous = _previous(settings["previous"])
        for name in _LIMITS:
            if name in settings:
                setattr(configured, name, _integer(name, settings[name]))
        if "timeout" in settings:
            configured.timeout = _seconds("timeout", settings["timeout"])
        configured._hasher()  # A bad configuration fails here, when the context is built.
        return configured

    @classmethod
    def hasher(cls) -> PasswordHasher:
        """The twocats hasher of this configuration (shared by every handler configured alike)."""
        return cls._hasher()

    @classmethod
    def _hasher(cls) -> PasswordHasher:
        try:
            return shared_hasher(
                cls.params,
                DEFAULT_SALT_LEN,
                cls.previous,
                cls.max_memory,
                cls.max_work,
                cls.max_concurrency,
                cls.max_total_memory,
                cls.timeout,
            )
        except TypeError as error:
            raise InvalidParametersError(f"twocats settings: {error}") from None

    @classmethod
    def identify(cls, hash: str | bytes) -> bool:
        """Return whether `hash` is a twocats string (by its prefix; verify checks the rest)."""
        return has_twocats_prefix(_hash_text(hash))

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
        stored = _hash_text(hash)
        try:
            return cls._hasher().verify(stored, secret)
        except VerificationError:
            return False
        except HashLimitError as error:
            report_refused(error)
            raise

    @classmethod
    def genhash(cls, secret: str | bytes, config: str | bytes, **context: Any) -> str:
        """Return the hash of `secret` with the parameters and salt of the hash `config`.

        It equals `config` exactly when `secret` matches (passlib's legacy API; ``verify``
        compares in constant time).  Raises ``ValueError`` for a malformed `config` or one above
        the limits, ``TypeError`` for a `config` that is not a str or bytes.
        """
        uh.validate_secret(secret)
        if config is None:
            raise TypeError("config must be string")
        stored = _hash_text(config)
        try:
            return cls._hasher().hash_as(stored, secret)
        except HashLimitError as error:
            report_refused(error)
            raise

    @classmethod
    def needs_update(cls, hash: str | bytes, secret: str | bytes | None = None) -> bool:
        """Return True if `hash` was made with other parameters or a shorter salt.

        Raises ``ValueError`` (:class:`~twocats.exceptions.InvalidHashError`) for a malformed hash.
        """
        return cls._hasher().needs_rehash(_hash_text(hash))


def admitted(handler: Any, hasher: PasswordHasher) -> Any:
    """Return a subclass of the argon2 or bcrypt `handler` that verifies under `hasher`'s control.

    Its ``verify`` reads the stored string's cost first
    (:meth:`twocats.PasswordHasher.check_foreign`): a hash above the limits, or one that is not
    a well-formed argon2 or bcrypt string, raises ``ValueError`` before anything is computed (the
    former logged, see the module documentation); any other is verified by `handler` in an
    admission slot of `hasher`, which may raise :class:`~twocats.exceptions.HasherBusyError` after
    the hasher's timeout.  A hash `handler` cannot read raises ``ValueError``
    (:class:`~twocats.exceptions.InvalidHashError`) naming its scheme, never the hash, as every
    malformed hash does.  Its name, settings and hashes are `handler`'s.
    """
    if not isinstance(hasher, PasswordHasher):
        raise TypeError(f"hasher must be a twocats.PasswordHasher, not {type(hasher).__name__}")
    if hasattr(handler, "get_backend"):
        # A handler with backends loads one now: its lazy loader replaces methods of its own
        # class, which a subclass made first would hide.
        handler.get_backend()

    def verify(cls: Any, /, secret: str | bytes, hash: str | bytes, **context: Any) -> bool:
        inner = super(wrapped, cls).verify
        uh.validate_secret(secret)
        stored = _hash_text(hash)

        def check() -> bool:
            try:
                return bool(inner(secret, stored, **context))
            except (ValueError, TypeError):
                # passlib's messages hold the stored hash: none of it reaches this error.
                raise InvalidHashError(f"the stored {handler.name} hash is malformed") from None

        try:
            verified: bool = hasher.verify_foreign(stored, check)
        except HashLimitError as error:
            report_refused(error)
            raise
        return verified

    wrapped: Any = type(handler.__name__, (handler,), {"verify": classmethod(verify)})
    return wrapped
