"""Django login time for a user whose hash was upgraded offline, and for a user who does not exist.

``python -m bench decoy [--repeats N] [--min-time S] [--out DIR] [--smoke]`` times Django's
``authenticate()`` (the ``ModelBackend``, a SQLite database in memory) in rotation (see
:mod:`bench.harness`) for two users: one whose value was made at memory cost 16 and upgraded
offline to the default profile's 18, and a user name with no account, for which Django hashes the
password once as its decoy.  It does so twice: with the hasher as it is, and with
``start_mem_cost = 16``, which gives new hashes, and so Django's decoy, the upgraded shape.  The
ratio upgraded / missing near 1.00x means login times do not tell which user names exist.
``--smoke`` runs both logins once at the cheapest parameters and asserts no timing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from django.test import override_settings

from bench.harness import Report, load_average, load_note, measure_group, plain_smoke, plain_suite
from bench.password.django_settings import configure
from twocats.integrations.django import TwoCatsPasswordHasher
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST, DEFAULT

__all__ = ["main", "run", "smoke"]

PASSWORD = "correct horse battery staple"

#: The memory cost the stored values were upgraded from.
UPGRADED_FROM = 16


class PlainTwoCats(TwoCatsPasswordHasher):
    """The default profile, new hashes fresh (start level 18)."""


class ShapedTwoCats(TwoCatsPasswordHasher):
    """The default profile, new hashes in the shape of values upgraded from 16."""

    start_mem_cost = UPGRADED_FROM


class CheapPlainTwoCats(TwoCatsPasswordHasher):
    """The cheapest parameters at 8 KiB, for the smoke run."""

    params = dataclasses.replace(CHEAPEST, mem_cost=3, start_mem_cost=3)


class CheapShapedTwoCats(CheapPlainTwoCats):
    """The smoke run's hasher with new hashes in the shape of values upgraded from 1."""

    start_mem_cost = 1


def _setup() -> None:
    configure()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _logins(hasher: type[TwoCatsPasswordHasher], old: Params) -> dict[str, Callable[[], object]]:
    """authenticate() of the upgraded user and of a missing one, under `hasher`."""
    from django.contrib.auth import authenticate, get_user_model

    model = get_user_model()
    model.objects.all().delete()
    value = "twocats" + PasswordHasher.from_params(old, salt_len=22).hash(PASSWORD)
    model.objects.create(username="upgraded", password=hasher().upgrade(value))

    def upgraded() -> object:
        user = authenticate(None, username="upgraded", password=PASSWORD)
        if user is None:
            raise AssertionError("the upgraded user does not log in")
        return user

    def missing() -> object:
        if authenticate(None, username="nobody", password=PASSWORD) is not None:
            raise AssertionError("a missing user logged in")
        return None

    return {"upgraded user": upgraded, "missing user": missing}


def run(*, repeats: int, min_time: float, smoke: bool = False) -> Report:
    """Time both logins under each configuration; return the report."""
    _setup()
    report = Report("decoy", "Django login: an upgraded user against a missing one")
    before = load_average()
    hashers: tuple[type[TwoCatsPasswordHasher], ...]
    if smoke:
        old = dataclasses.replace(CHEAPEST, mem_cost=1, start_mem_cost=1)
        hashers = (CheapPlainTwoCats, CheapShapedTwoCats)
    else:
        old = dataclasses.replace(DEFAULT, mem_cost=UPGRADED_FROM, start_mem_cost=UPGRADED_FROM)
        hashers = (PlainTwoCats, ShapedTwoCats)
    for hasher in hashers:
        label = f"start_mem_cost={hasher.start_mem_cost}"
        with override_settings(PASSWORD_HASHERS=[f"{__name__}.{hasher.__qualname__}"]):
            calls = _logins(hasher, old)
            timings = measure_group(calls, repeats=repeats, min_time=min_time)
        for name, timing in timings.items():
            report.record(f"{label}/{name}", timing, configuration=label, login=name)
        report.ratio(
            f"{label}: upgraded user / missing user",
            faster=f"{label}/missing user",
            slower=f"{label}/upgraded user",
        )
    report.notes.append(load_note(before, load_average()))
    report.notes.append(
        "Median wall-clock time of authenticate() per login, both logins timed in rotation.  "
        "Without start_mem_cost Django's decoy hashes at the start level 18 alone, while the "
        "upgraded value recomputes levels 16 to 18."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and write bench/results/decoy.{json,md}."""
    return plain_suite(
        "decoy", __doc__, run, argv, repeats=7, min_time=0.3, smoke_help="one run, no result files"
    )


def smoke() -> int:
    """Run both logins once at the cheapest parameters; asserts no timing."""
    return plain_smoke(run)
