"""The Django app that brings the ``twocats_upgrade`` management command."""

from __future__ import annotations

from django.apps import AppConfig


class TwoCatsConfig(AppConfig):
    """``twocats.integrations.django`` in ``INSTALLED_APPS``; it has no models."""

    name = "twocats.integrations.django"
    label = "twocats"
    verbose_name = "twocats password hashing"
