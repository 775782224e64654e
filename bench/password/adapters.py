"""What the framework adapters add to a bare ``PasswordHasher.verify``.

``python -m bench adapters [--repeats N] [--min-time S] [--out DIR] [--smoke]`` verifies one
stored hash, in one process and in rotation (see :mod:`bench.harness`), through:

* :meth:`twocats.PasswordHasher.verify` itself (the peer every ratio is measured against);
* Django: ``TwoCatsPasswordHasher.verify``, and ``django.contrib.auth.hashers.check_password``,
  the whole path of a login (find the hasher, ``must_update``, verify);
* pwdlib: ``PasswordHash((TwoCatsHasher(),)).verify`` and ``verify_and_update``;
* libpass: ``CryptContext(schemes=[TwoCatsHandler]).verify``;

at the ``CHEAPEST`` profile, where a hash takes microseconds and the ratio shows the adapter's own
cost, and at ``INTERACTIVE`` (64 MiB), a real login cost.  Each row also has the CPU time per
call, measured in rotation too.  ``--smoke`` checks once that every adapter accepts the password
and refuses a wrong one, at ``CHEAPEST``; it asserts no timing.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence

from django.contrib.auth.hashers import check_password, get_hashers
from django.test import override_settings
from passlib.context import CryptContext
from pwdlib import PasswordHash

from bench.harness import (
    Report,
    load_average,
    load_note,
    measure_group,
    plain_smoke,
    plain_suite,
)
from bench.password.django_settings import configure
from twocats.exceptions import TwoCatsError
from twocats.integrations._common import shared_hasher
from twocats.integrations.django import TwoCatsPasswordHasher
from twocats.integrations.passlib import TwoCatsHandler
from twocats.integrations.pwdlib import TwoCatsHasher
from twocats.password import DEFAULT_SALT_LEN
from twocats.phc import encode_params
from twocats.profiles import CHEAPEST, INTERACTIVE

__all__ = ["main", "run", "smoke"]

PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3"
BARE = "bare PasswordHasher.verify"


class CheapestTwoCats(TwoCatsPasswordHasher):
    """The Django hasher at CHEAPEST."""

    params = CHEAPEST


class InteractiveTwoCats(TwoCatsPasswordHasher):
    """The Django hasher at INTERACTIVE."""

    params = INTERACTIVE


#: Profile name -> the Django hasher configured with it.
DJANGO_HASHERS: dict[str, type[TwoCatsPasswordHasher]] = {
    "CHEAPEST": CheapestTwoCats,
    "INTERACTIVE": InteractiveTwoCats,
}


def _django(label: str) -> tuple[Callable[[str], bool], Callable[[str], bool], str]:
    """Django's hasher.verify and check_password for profile `label`, and the stored value.

    Call it with the profile's hasher in ``PASSWORD_HASHERS``.
    """
    hasher = get_hashers()[0]
    assert isinstance(hasher, DJANGO_HASHERS[label])
    encoded = hasher.encode(PASSWORD, hasher.salt())

    def verify(password: str) -> bool:
        return bool(hasher.verify(password, encoded))

    def login(password: str) -> bool:
        return bool(check_password(password, encoded))

    return verify, login, encoded


def _calls(label: str) -> dict[str, Callable[[str], bool]]:
    """Name -> verify(password) through each adapter, all on one stored hash of profile `label`."""
    params = DJANGO_HASHERS[label].params
    django_verify, django_login, encoded = _django(label)
    stored = encoded.removeprefix("twocats")
    bare = shared_hasher(params, DEFAULT_SALT_LEN)
    pwdlib_hash = PasswordHash((TwoCatsHasher(bare),))
    context = CryptContext(schemes=[TwoCatsHandler], twocats__profile=encode_params(params))

    def bare_verify(password: str) -> bool:
        try:
            return bare.verify(stored, password)
        except TwoCatsError:
            return False

    return {
        BARE: bare_verify,
        "Django TwoCatsPasswordHasher.verify": django_verify,
        "Django check_password": django_login,
        "pwdlib PasswordHash.verify": lambda password: pwdlib_hash.verify(password, stored),
        "pwdlib PasswordHash.verify_and_update": lambda password: pwdlib_hash.verify_and_update(
            password, stored
        )[0],
        "libpass CryptContext.verify": lambda password: bool(context.verify(password, stored)),
    }


def _check(calls: Mapping[str, Callable[[str], bool]], label: str) -> None:
    for name, verify in calls.items():
        if verify(PASSWORD) is not True or verify(WRONG) is not False:
            raise AssertionError(f"{label}: {name} does not tell the password from a wrong one")


def run(*, repeats: int, min_time: float, smoke: bool = False) -> Report:
    """Measure every adapter against the bare verify at each profile; return the report."""
    configure()
    report = Report("adapters", "Framework adapters against a bare PasswordHasher.verify")
    before = load_average()
    for label, hasher in DJANGO_HASHERS.items():
        if smoke and label != "CHEAPEST":
            continue
        with override_settings(PASSWORD_HASHERS=[f"{__name__}.{hasher.__qualname__}"]):
            verifiers = _calls(label)
            _check(verifiers, label)
            calls = {
                name: functools.partial(verify, PASSWORD) for name, verify in verifiers.items()
            }
            timings = measure_group(calls, repeats=repeats, min_time=min_time)
            cpu = measure_group(
                calls, repeats=repeats, warmup=0, min_time=min_time, clock=time.process_time
            )
        for measure, measured in (("wall", timings), ("cpu", cpu)):
            bare = measured[BARE].median
            for name, timing in measured.items():
                report.record(
                    f"{label}/{measure}/{name}",
                    timing,
                    profile=label,
                    time=measure,
                    adapter=name,
                    overhead_us=round((timing.median - bare) * 1e6, 1),
                )
            for name in measured:
                if name != BARE:
                    report.ratio(
                        f"{label}, {measure} time: {name} / bare",
                        faster=f"{label}/{measure}/{BARE}",
                        slower=f"{label}/{measure}/{name}",
                    )
    after = load_average()
    report.notes.append(load_note(before, after))
    report.notes.append(
        "A ratio is the adapter's median time per call over the bare verify's (1.00x: no "
        "overhead), in wall-clock and in CPU time (both measured in rotation; the CPU time is the "
        "steadier on a loaded machine); overhead_us is the difference of the medians.  "
        "check_password also runs must_update, and verify_and_update check_needs_rehash, each "
        "decoding the stored string a second time."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/adapters.{json,md}."""
    return plain_suite(
        "adapters",
        __doc__,
        run,
        argv,
        repeats=7,
        min_time=0.2,
        smoke_help="one check, no result files",
    )


def smoke() -> int:
    """Check every adapter once at CHEAPEST; asserts no timing."""
    return plain_smoke(run)
