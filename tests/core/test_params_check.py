"""The one integer validator, check_int, and the one parameter error, refuse."""

from __future__ import annotations

import pytest

from twocats import PasswordHasher
from twocats.exceptions import InvalidParametersError
from twocats.kdf.limits import StoredLimits
from twocats.params import Params, check_int, refuse
from twocats.password import Target
from twocats.profiles import CHEAPEST


def test_check_int_returns_a_value_in_range() -> None:
    """A value from low to high, the bounds included, is returned unchanged."""
    assert [check_int("n", value, 1, 3) for value in (1, 2, 3)] == [1, 2, 3]
    assert check_int("n", 1 << 80, 1) == 1 << 80


@pytest.mark.parametrize(
    ("value", "high", "message"),
    [
        (0, 3, "n must be an integer from 1 to 3; got 0"),
        (4, 3, "n must be an integer from 1 to 3; got 4"),
        (True, 3, "n must be an integer from 1 to 3; got True"),
        (2.0, 3, "n must be an integer from 1 to 3; got 2.0"),
        ("2", 3, "n must be an integer from 1 to 3; got '2'"),
        (None, None, "n must be an integer of at least 1; got None"),
        (-5, None, "n must be an integer of at least 1; got -5"),
    ],
)
def test_check_int_refuses_naming_the_range(value: object, high: int | None, message: str) -> None:
    """Anything but an int in range is refused with the name, the range and the value."""
    with pytest.raises(InvalidParametersError) as caught:
        check_int("n", value, 1, high)
    assert str(caught.value) == message


def test_check_int_takes_the_callers_wording() -> None:
    """``allowed`` replaces the wording of the range in the message."""
    with pytest.raises(InvalidParametersError) as caught:
        check_int("size", -1, 0, allowed="a number of bytes from 0 up")
    assert str(caught.value) == "size must be a number of bytes from 0 up; got -1"


def test_refuse_shortens_what_it_quotes() -> None:
    """A long value is cut to 60 characters and a huge integer is given by its size."""
    with pytest.raises(InvalidParametersError) as long:
        refuse("name", "short", "x" * 1000)
    assert str(long.value) == "name must be short; got '" + "x" * 56 + "..."
    with pytest.raises(InvalidParametersError) as huge:
        refuse("n", "small", 1 << 5000)
    assert str(huge.value) == "n must be small; got an integer of 5001 bits"


def test_callers_word_their_limits_alike() -> None:
    """The hasher, the stored limits, the upgrade target and Params word integer errors one way."""
    cases = [
        (lambda: PasswordHasher(max_concurrency=0), "max_concurrency", 0),
        (lambda: PasswordHasher(max_total_memory=True), "max_total_memory", True),
        (lambda: StoredLimits.relative_to(CHEAPEST, max_work=-1), "max_work", -1),
        (lambda: StoredLimits.relative_to(CHEAPEST, max_memory=0), "max_memory", 0),
    ]
    for call, name, value in cases:
        with pytest.raises(InvalidParametersError) as caught:
            call()
        assert str(caught.value) == f"{name} must be an integer of at least 1; got {value!r}"
    for salt_len in (7, "16"):
        with pytest.raises(InvalidParametersError) as salt:
            PasswordHasher(salt_len=salt_len)  # type: ignore[arg-type]
        assert str(salt.value) == f"salt_len must be an integer from 8 to 64; got {salt_len!r}"
    with pytest.raises(InvalidParametersError) as target:
        Target.memory(31)
    assert str(target.value) == "mem_cost must be an integer from 0 to 30; got 31"
    with pytest.raises(InvalidParametersError) as params:
        Params(parallelism=0)
    assert str(params.value) == "parallelism must be an integer from 1 to 255; got 0"
