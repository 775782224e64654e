"""The Django settings the benchmark suites share: one process may run several of them."""

from __future__ import annotations

import django
from django.conf import settings


def configure() -> None:
    """Configure Django once per process: the auth app on an in-memory SQLite database."""
    if settings.configured:
        return
    settings.configure(
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"],
        PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"],
        SECRET_KEY="benchmark key, not a secret",
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    )
    django.setup()
