"""The Django app that brings the ``twocats_upgrade`` command and a check of the hashers."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class TwoCatsConfig(AppConfig):
    """``twocats.integrations.django`` in ``INSTALLED_APPS``; it has no models."""

    name = "twocats.integrations.django"
    label = "twocats"
    verbose_name = "twocats password hashing"

    def ready(self) -> None:
        """Register the check that refuses a twocats hasher whose values would not fit."""
        from twocats.integrations.django.checks import check_hashers

        checks.register(check_hashers, checks.Tags.security)
