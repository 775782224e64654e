"""Django's argon2 and bcrypt hashers, verifying under the twocats hasher's admission and limits.

Django's own hashers compute whatever a stored value asks for: a planted
``argon2$argon2id$v=19$m=1048576,t=1,p=1$...`` takes 1 GiB.  Listed in ``PASSWORD_HASHERS`` after
:class:`~twocats.integrations.django.TwoCatsPasswordHasher` instead of Django's, these classes
(same algorithm names, same stored values) first read the value's cost
(:meth:`twocats.PasswordHasher.check_foreign`): a value above the twocats hasher's limits fails to
verify, logged like a refused twocats hash, and so does a malformed one; any other is verified by
Django's code in one of the twocats hasher's admission slots, its memory counted against
``max_total_memory`` (a value that Django's code fails on with ``ValueError`` fails to verify).
``timeout`` (a class attribute, in seconds; None: the twocats hasher's own) bounds the wait for a
slot, after which :class:`~twocats.integrations.django.HasherBusyDeniedError` is raised: the login
fails.
"""

from __future__ import annotations

from django.contrib.auth.hashers import (
    Argon2PasswordHasher,
    BCryptPasswordHasher,
    BCryptSHA256PasswordHasher,
    get_hashers,
)
from django.core.exceptions import ImproperlyConfigured

from twocats.exceptions import HashLimitError, InvalidHashError
from twocats.integrations._common import report_refused
from twocats.integrations.django.hashers import TwoCatsPasswordHasher, denied_when_busy
from twocats.password import PasswordHasher

__all__ = [
    "AdmittedArgon2PasswordHasher",
    "AdmittedBCryptPasswordHasher",
    "AdmittedBCryptSHA256PasswordHasher",
]


def _twocats() -> PasswordHasher:
    """The twocats hasher of the first TwoCatsPasswordHasher in ``PASSWORD_HASHERS``."""
    for hasher in get_hashers():
        if isinstance(hasher, TwoCatsPasswordHasher):
            return hasher.hasher
    raise ImproperlyConfigured(
        "the twocats admitted hashers need a TwoCatsPasswordHasher in PASSWORD_HASHERS"
    )


def _foreign(encoded: str) -> str:
    """The foreign string of a Django value (``argon2$argon2id$...``, ``bcrypt$$2b$...``)."""
    _algorithm, _, rest = encoded.partition("$")
    return rest if rest.startswith("$") else "$" + rest


class _Admitted:
    """The verification of a Django hasher run under the twocats hasher's control."""

    #: How long a verification waits for an admission slot, in seconds (None: for ever).
    timeout: float | None = None

    def verify(self, password: str, encoded: str) -> bool:
        """Return whether `password` matches; False for a mismatch, a malformed value or one
        above the limits."""
        django_verify = super().verify  # type: ignore[misc]

        def check() -> bool:
            try:
                return bool(django_verify(password, encoded))
            except ValueError:
                # bcrypt's "Invalid salt" and the like: Django's hashers let them through.
                return False

        try:
            with denied_when_busy():
                verified: bool = _twocats().verify_foreign(
                    _foreign(encoded), check, timeout=self.timeout
                )
        except HashLimitError as error:
            report_refused(error)
            return False
        except InvalidHashError:
            return False
        return verified


class AdmittedArgon2PasswordHasher(_Admitted, Argon2PasswordHasher):
    """Django's ``Argon2PasswordHasher``, verifying under the twocats hasher's control."""


class AdmittedBCryptSHA256PasswordHasher(_Admitted, BCryptSHA256PasswordHasher):
    """Django's ``BCryptSHA256PasswordHasher``, verifying under the twocats hasher's control."""


class AdmittedBCryptPasswordHasher(_Admitted, BCryptPasswordHasher):
    """Django's ``BCryptPasswordHasher``, verifying under the twocats hasher's control."""
