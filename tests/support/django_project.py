"""The Django project the Django tests share: settings are configured once per process."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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


@contextlib.contextmanager
def login_site(templates: Path, hashers: list[str]) -> Iterator[None]:
    """Serve Django's own ``LoginView`` at ``/login/`` with `hashers`, for ``django.test.Client``.

    Sessions are signed cookies (no table to migrate); the login page shows the form's errors
    only, from a template written into `templates`.
    """
    from django.test import override_settings

    (templates / "login.html").write_text("{{ form.non_field_errors }}", encoding="utf-8")
    with override_settings(
        ROOT_URLCONF="tests.support.django_urls",
        ALLOWED_HOSTS=["testserver"],
        MIDDLEWARE=[
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ],
        SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies",
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [templates]}
        ],
        LOGIN_REDIRECT_URL="/",
        PASSWORD_HASHERS=hashers,
    ):
        yield
