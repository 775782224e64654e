"""JSON register and login views that keep the service up under a flood of logins.

* A login waits at most ``settings.LOGIN_TIMEOUT`` seconds for the twocats hasher (its admission
  control bounds the hashes running at once and their memory); one that waited in vain is
  answered ``503`` with ``Retry-After``, never a 500 or a dropped connection.
* A login naming an unknown user, or a user whose stored value is corrupt or asks for more than
  the hasher's limits, costs one ordinary verification (``verify_unknown``, shaped like the stored
  hashes) and gets the same ``401`` as a wrong password: the answer's time does not tell which
  users exist.
* Users stored by Django's other hashers log in through Django's own ``check_password``, which
  rehashes them with twocats; argon2 values are verified in the twocats hasher's admission slots
  and within its limits (see ``hashers.py``).
* A body above ``settings.DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes is answered ``413`` (read no
  further than that, even when it is sent in chunks); one without a user name and password that
  are valid Unicode text (a lone surrogate ``"\\ud800"`` is not) is answered ``400``, and no
  answer repeats what was sent.

With another hasher first in ``PASSWORD_HASHERS`` the login is Django's plain ``authenticate``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import secrets
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.hashers import get_hasher
from django.db import IntegrityError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from twocats import HasherBusyError, InvalidHashError, PasswordHasher, VerifyMismatchError
from twocats.integrations.django import TwoCatsPasswordHasher

#: The Retry-After of a 503, in seconds.
RETRY_AFTER = 1


@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Answer at once, whatever the logins are doing."""
    return JsonResponse({"status": "ok"})


def _with_credentials(
    view: Callable[[HttpRequest, str, str], JsonResponse],
) -> Callable[[HttpRequest], JsonResponse]:
    """Call `view` with the user name and password of the JSON body; 400 if it has no such pair."""

    @functools.wraps(view)
    def checked(request: HttpRequest) -> JsonResponse:
        body = _body(request)
        if body is None:
            return _answer(413, "the request body is too large")
        credentials = _credentials(body)
        if credentials is None:
            return _answer(400, "expected JSON with a username and a password")
        return view(request, *credentials)

    return checked


@csrf_exempt
@require_POST
@_with_credentials
def register(request: HttpRequest, username: str, password: str) -> JsonResponse:
    """Create a user from ``{"username", "password"}``; 409 if the name is taken."""
    try:
        get_user_model().objects.create_user(username, password=password)
    except IntegrityError:
        return _answer(409, "this user name is taken")
    return JsonResponse({"username": username}, status=201)


@csrf_exempt
@require_POST
@_with_credentials
def login(request: HttpRequest, username: str, password: str) -> JsonResponse:
    """Check ``{"username", "password"}``: 200, 401 for any wrong pair, 503 when overloaded."""
    try:
        user = _authenticate(request, username, password)
    except HasherBusyError:
        response = _answer(503, "too many logins at once, try again shortly")
        response["Retry-After"] = str(RETRY_AFTER)
        return response
    if user is None:
        return _answer(401, "wrong user name or password")
    return JsonResponse({"username": username})


def _answer(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)


def _body(request: HttpRequest) -> bytes | None:
    """The request body, or None if it is larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
    limit = int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    declared = request.META.get("CONTENT_LENGTH")
    if declared:
        if not declared.isdigit() or int(declared) > limit:
            return None
        data = request.read(limit + 1)
    else:
        # A body sent in chunks declares no length, and Django reads none of it: the server's
        # decoded stream is read, never more than one byte past the limit.
        data = request.META["wsgi.input"].read(limit + 1)
    return data if len(data) <= limit else None


def _text(value: object, longest: int) -> str | None:
    """`value` if it is valid Unicode text of 1 to `longest` characters, else None."""
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def _credentials(body: bytes) -> tuple[str, str] | None:
    """The user name and password of a JSON body, or None if it has no usable pair."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    username, password = _text(data.get("username"), 150), _text(data.get("password"), 1024)
    if username is None or password is None:
        return None
    return username, password


def _authenticate(request: HttpRequest, username: str, password: str) -> Any:
    """Return the active user whose password this is, or None."""
    hasher = get_hasher()
    if not isinstance(hasher, TwoCatsPasswordHasher):
        return authenticate(request, username=username, password=password)
    user = get_user_model().objects.filter(username=username).first()
    stored = "" if user is None else user.password
    algorithm, _, rest = stored.partition("$")
    if user is not None and algorithm != hasher.algorithm and user.has_usable_password():
        # A value of Django's other hashers: Django checks it and rehashes it with twocats.
        return user if user.check_password(password) and user.is_active else None
    core = hasher.hasher
    if algorithm != hasher.algorithm:
        _spend_decoy(core, password)
        return None
    try:
        core.verify("$" + rest, password, timeout=settings.LOGIN_TIMEOUT)
    except VerifyMismatchError:
        return None
    except InvalidHashError:
        # Corrupt, or refused by the limits before any work: cost what a verify costs.
        _spend_decoy(core, password)
        return None
    if hasher.must_update(stored):
        user.set_password(password)
        user.save(update_fields=["password"])
    return user if user.is_active else None


def _spend_decoy(core: PasswordHasher, password: str) -> None:
    """Spend one verification's time and memory on a login that cannot succeed."""
    with contextlib.suppress(VerifyMismatchError):
        core.verify_unknown(password, like=_decoy(core), timeout=settings.LOGIN_TIMEOUT)


@functools.cache
def _decoy(core: PasswordHasher) -> str:
    """A hash shaped like the stored ones, so that the decoy does the same work.

    After an offline upgrade (``manage.py twocats_upgrade``), return an upgraded stored hash here.
    """
    return core.hash(secrets.token_urlsafe(16))
