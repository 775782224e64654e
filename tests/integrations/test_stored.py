"""twocats.integrations.stored: Django's stored length, known without importing Django."""

from __future__ import annotations

import subprocess
import sys

import pytest

from twocats import profiles
from twocats.integrations.stored import (
    DJANGO_ALGORITHM,
    DJANGO_SALT_LENGTH,
    MAX_STORED_LENGTH,
    longest_stored,
)
from twocats.params import Params


def test_the_facts_are_djangos() -> None:
    """The salt length and the algorithm name are those of the Django hasher."""
    pytest.importorskip("django", reason="the test extra installs Django")
    from twocats.integrations.django import TwoCatsPasswordHasher

    assert len(TwoCatsPasswordHasher().salt()) == DJANGO_SALT_LENGTH
    assert TwoCatsPasswordHasher.algorithm == DJANGO_ALGORITHM


def test_tune_reads_it_without_django() -> None:
    """Importing the module and measuring a profile's stored length imports no Django."""
    code = (
        "import sys\n"
        "from twocats import profiles\n"
        "from twocats.integrations.stored import longest_stored\n"
        "print(longest_stored(profiles.MODERATE), 'django' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert shown.stdout.split() == [str(longest_stored(profiles.MODERATE)), "False"]


def test_every_profile_fits_and_a_64_byte_output_does_not() -> None:
    """The built-in profiles fit the 128-character column; blake2b's 64-byte output never does."""
    assert all(longest_stored(params) <= MAX_STORED_LENGTH for params in profiles.BUILT_IN)
    wide = Params(mem_cost=10, hash_type="blake2b", lanes=16)
    assert longest_stored(wide) > MAX_STORED_LENGTH
