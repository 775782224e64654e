"""A system check (``manage.py check``, and at every server start) of the twocats hashers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import get_hashers
from django.core import checks

from twocats.exceptions import InvalidParametersError
from twocats.integrations.django.hashers import TwoCatsPasswordHasher


def check_hashers(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report each twocats hasher of ``PASSWORD_HASHERS`` whose configuration is refused."""
    errors: list[checks.CheckMessage] = []
    for hasher in get_hashers():
        if not isinstance(hasher, TwoCatsPasswordHasher):
            continue
        try:
            hasher.hasher  # noqa: B018 - reading it checks the configuration.
        except InvalidParametersError as exc:
            errors.append(checks.Error(str(exc), obj=type(hasher), id="twocats.E001"))
    return errors
