"""Django's argon2 hasher for this example: verified in the twocats hasher's slots and limits."""

from __future__ import annotations

from django.conf import settings

from twocats.integrations.django import AdmittedArgon2PasswordHasher


class Argon2PasswordHasher(AdmittedArgon2PasswordHasher):
    """Older users' argon2 values: a login waits at most ``LOGIN_TIMEOUT`` s for a slot."""

    @property
    def timeout(self) -> float | None:  # type: ignore[override]
        """The example's login timeout, in seconds."""
        return float(settings.LOGIN_TIMEOUT)
