"""Settings of the example login service: django.contrib.auth users in SQLite, hashed by twocats."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

# Set your own secret key in the environment; this one only serves to run the example.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only-not-a-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    # Brings `manage.py twocats_upgrade` and the check that stored values fit the column.
    "twocats.integrations.django",
]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "django_login.urls"
WSGI_APPLICATION = "django_login.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "users.sqlite3",
        # Several worker processes write to the file: wait for its lock rather than fail.
        "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"},
    }
}

# twocats for new passwords; users hashed with Django's own hashers are rehashed at their next
# login.  Older argon2 values are verified in the twocats hasher's admission slots and within its
# limits (a planted one cannot take more memory than a twocats hash may).
PASSWORD_HASHERS = [
    "twocats.integrations.django.TwoCatsPasswordHasher",
    "django_login.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

# The largest request body read, in bytes; a larger one is answered 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = 16 * 2**10

# How long a login waits for the hasher, in seconds, before it is answered 503.
LOGIN_TIMEOUT = 1.0

USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
