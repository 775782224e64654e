"""The named profiles: valid, ordered by cost, reachable by name, and usable by the hasher."""

from __future__ import annotations

import twocats
from twocats import phc, profiles
from twocats.password import PasswordHasher


def test_profiles_by_name() -> None:
    """PROFILES maps the lower-case names to the module's constants; DEFAULT is MODERATE."""
    assert profiles.PROFILES == {
        "interactive": profiles.INTERACTIVE,
        "moderate": profiles.MODERATE,
        "sensitive": profiles.SENSITIVE,
        "cheapest": profiles.CHEAPEST,
    }
    assert profiles.DEFAULT is profiles.MODERATE
    assert profiles.get_default_params() is profiles.DEFAULT
    assert twocats.profiles is profiles


def test_profiles_grow_in_cost() -> None:
    """Each profile asks for more memory and at least as many multiplies as the one before."""
    ordered = [profiles.CHEAPEST, profiles.INTERACTIVE, profiles.MODERATE, profiles.SENSITIVE]
    memories = [params.memory_bytes for params in ordered]
    assert memories == sorted(memories)
    assert len(set(memories)) == len(memories)
    multiplies = [params.multiplies for params in ordered]
    assert multiplies == sorted(multiplies)


def test_profiles_encode_compactly() -> None:
    """The real profiles keep the reference's layout, so their strings carry only m and x."""
    assert phc.encode_params(profiles.INTERACTIVE) == "$twocats$v=2015$m=16"
    assert phc.encode_params(profiles.MODERATE) == "$twocats$v=2015$m=18,x=3"
    assert phc.encode_params(profiles.SENSITIVE) == "$twocats$v=2015$m=20,x=3"


def test_cheapest_still_fills_memory() -> None:
    """CHEAPEST is tiny but memory-hard: at least four blocks in its one region."""
    cheapest = profiles.CHEAPEST
    assert cheapest.memory_bytes == 1024
    assert cheapest.memory_bytes // (cheapest.parallelism * cheapest.block_size) >= 4


def test_interactive_round_trip() -> None:
    """The interactive profile hashes and verifies through the default hasher path."""
    hasher = PasswordHasher.from_params(profiles.INTERACTIVE)
    encoded = hasher.hash("correct horse battery staple")
    assert encoded.startswith("$twocats$v=2015$m=16$")
    assert hasher.verify(encoded, "correct horse battery staple")
    assert not hasher.needs_rehash(encoded)
    assert PasswordHasher().needs_rehash(encoded)
