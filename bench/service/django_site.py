"""The Django example's settings as the HTTP benchmark serves it (``DJANGO_SETTINGS_MODULE``).

The site is ``examples/django_login`` unchanged; these settings pick the hasher and database the
environment names (see :mod:`bench.service.config`) and add :func:`echo`, which copies the request's
``X-Bench`` header into the answer for the load generator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.hashers import Argon2PasswordHasher
from django_login.settings import *  # noqa: F403
from django_login.settings import DATABASES

from bench.service.config import argon2_settings, server_config, twocats_params
from twocats.integrations.django import TwoCatsPasswordHasher
from twocats.password import verify_limits_for

_SERVER = server_config()
_SIZE = _SERVER.size


# The site has only ever used the benchmark's parameters: a stored hash may ask for at most twice
# their memory and work, so a planted one costs no more than two normal verifications.
_OWN_MEMORY, _OWN_WORK = verify_limits_for(twocats_params(_SIZE))


class BenchTwoCats(TwoCatsPasswordHasher):
    """twocats at the benchmark's parameters, with limits that follow only them."""

    params = twocats_params(_SIZE)
    max_memory = 2 * _OWN_MEMORY
    max_work = 2 * _OWN_WORK


class BenchArgon2(Argon2PasswordHasher):
    """argon2id at the same memory."""

    time_cost = argon2_settings(_SIZE)["time_cost"]
    memory_cost = argon2_settings(_SIZE)["memory_cost"]
    parallelism = argon2_settings(_SIZE)["parallelism"]


def echo(get_response: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Django middleware: answer with the request's ``X-Bench`` header."""

    def middleware(request: Any) -> Any:
        response = get_response(request)
        tag = request.headers.get("X-Bench")
        if tag is not None:
            response["X-Bench"] = tag
        return response

    return middleware


DATABASES["default"]["NAME"] = _SERVER.database
PASSWORD_HASHERS = [
    "bench.service.django_site.BenchTwoCats"
    if _SERVER.hasher == "twocats"
    else "bench.service.django_site.BenchArgon2"
]
MIDDLEWARE = ["bench.service.django_site.echo"]
LOGIN_TIMEOUT = _SERVER.timeout
