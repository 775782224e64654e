"""A system check (``manage.py check``, and at every server start) of the twocats hashers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import get_hashers
from django.core import checks

from twocats._units import format_size
from twocats.exceptions import InvalidParametersError
from twocats.integrations.django.hashers import TwoCatsPasswordHasher
from twocats.kdf.limits import format_work


def check_hashers(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report each twocats hasher of ``PASSWORD_HASHERS``: refused, or what its limits accept."""
    messages: list[checks.CheckMessage] = []
    for hasher in get_hashers():
        if not isinstance(hasher, TwoCatsPasswordHasher):
            continue
        try:
            configured = hasher.hasher
        except InvalidParametersError as exc:
            messages.append(checks.Error(str(exc), obj=type(hasher), id="twocats.E001"))
            continue
        limits = configured.limits
        own = configured.params
        messages.append(
            checks.Info(
                f"stored twocats hashes are accepted up to {format_size(limits.max_memory)} of "
                f"memory ({limits.memory_name}) and {format_work(limits.max_work)} of work "
                f"({limits.work_basis}); the hasher's own need {format_size(own.memory_bytes)} "
                f"and {format_work(limits.work_of(own))}",
                hint=(
                    "a hash above these limits fails to verify and is logged; list the "
                    "parameters this site used before in the hasher's 'previous'"
                ),
                obj=type(hasher),
                id="twocats.I001",
            )
        )
    return messages
