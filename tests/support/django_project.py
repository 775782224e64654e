"""The Django project the Django tests share: settings are configured once per process."""

from __future__ import annotations

from pathlib import Path

import django
from django.conf import settings
from django.core.management import call_command


def configure(database_dir: Path) -> None:
    """Configure Django once (a SQLite database in `database_dir`) and migrate its database.

    Each test module sets its own ``PASSWORD_HASHERS`` with ``override_settings``.
    """
    if not settings.configured:
        settings.configure(
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.sqlite3",
                    "NAME": database_dir / "db.sqlite3",
                }
            },
            INSTALLED_APPS=[
                "django.contrib.contenttypes",
                "django.contrib.auth",
                "twocats.integrations.django",
            ],
            PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
            SECRET_KEY="test key, not a secret",
            USE_TZ=True,
            DEFAULT_AUTO_FIELD="django.db.models.AutoField",
        )
        django.setup()
    call_command("migrate", verbosity=0)
