"""Django adapter: ``TwoCatsPasswordHasher`` and the ``twocats_upgrade`` management command.

Put the hasher first in ``PASSWORD_HASHERS`` (users of the other hashers are rehashed with twocats
at their next login, by Django's own mechanism) and add ``"twocats.integrations.django"`` to
``INSTALLED_APPS`` for ``manage.py twocats_upgrade``, which raises the memory cost of every stored
twocats hash offline, without the passwords.  List ``AdmittedArgon2PasswordHasher`` (and the bcrypt
ones) instead of Django's own, so that older users' values are verified within the twocats
hasher's admission and limits.  Needs ``pip install -e '.[django]'`` (in a checkout).
"""

from __future__ import annotations

from twocats.integrations._common import missing_framework

try:
    import django.contrib.auth.hashers  # noqa: F401
except ImportError as error:
    raise missing_framework(__name__, "Django", "django") from error

from twocats.integrations.django.foreign import (
    AdmittedArgon2PasswordHasher,
    AdmittedBCryptPasswordHasher,
    AdmittedBCryptSHA256PasswordHasher,
)
from twocats.integrations.django.hashers import (
    MAX_STORED_LENGTH,
    HasherBusyDeniedError,
    TwoCatsPasswordHasher,
)

__all__ = [
    "MAX_STORED_LENGTH",
    "AdmittedArgon2PasswordHasher",
    "AdmittedBCryptPasswordHasher",
    "AdmittedBCryptSHA256PasswordHasher",
    "HasherBusyDeniedError",
    "TwoCatsPasswordHasher",
]
