"""The passlib handler's bounds: max_concurrency, max_total_memory and timeout, as ini text too."""

from __future__ import annotations

import pytest

pytest.importorskip("passlib", reason="the test extra installs libpass")

from passlib.context import CryptContext

from twocats import InvalidParametersError, phc, profiles
from twocats.integrations.passlib import TwoCatsHandler

CHEAPEST = phc.encode_params(profiles.CHEAPEST)


def test_the_bounds_reach_the_hasher_from_an_ini_file() -> None:
    """Settings read as text from an ini file configure the hasher's bounds."""
    from passlib.registry import register_crypt_handler

    register_crypt_handler(TwoCatsHandler, force=True)
    ini = (
        "[passlib]\n"
        "schemes = twocats\n"
        f"twocats__profile = {CHEAPEST}\n"
        "twocats__max_concurrency = 3\n"
        "twocats__max_total_memory = 1048576\n"
        "twocats__timeout = 0.25\n"
    )
    context = CryptContext.from_string(ini)
    core = context.handler("twocats").hasher()
    assert (core.max_concurrency, core.max_total_memory, core.timeout) == (3, 1 << 20, 0.25)


def test_the_bounds_given_in_code() -> None:
    """using() takes numbers as well."""
    handler = TwoCatsHandler.using(profile="cheapest", max_concurrency=2, timeout=1)
    core = handler.hasher()
    assert (core.max_concurrency, core.timeout) == (2, 1.0)


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("timeout", "soon", "twocats setting timeout must be a number of seconds above 0"),
        ("timeout", "0", "twocats setting timeout must be a number of seconds above 0"),
        ("timeout", True, "twocats setting timeout must be a number of seconds above 0"),
        ("max_concurrency", "many", "twocats setting max_concurrency must be an integer"),
        ("max_concurrency", 0, "max_concurrency must be an integer of at least 1; got 0"),
    ],
)
def test_a_bad_bound_is_refused_naming_it(setting: str, value: object, message: str) -> None:
    """A bound that is not a number in range is refused when the context is built."""
    with pytest.raises(InvalidParametersError, match=message):
        TwoCatsHandler.using(profile="cheapest", **{setting: value})
