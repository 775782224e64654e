"""No exception raised by twocats carries a secret anywhere in its chain."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from twocats import kdf, phc
from twocats.exceptions import InvalidHashError, InvalidParametersError, TwoCatsError
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

#: A password that UTF-8 cannot encode (a lone surrogate), as in issue 10.
REFUSED = "s3cret-passw\udc80rd"
MARKER = "s3cret-passw"

HASHER = PasswordHasher.from_params(CHEAPEST)
STORED = HASHER.hash(b"pw")


def chain(error: BaseException) -> Iterator[BaseException]:
    """Every exception reachable from ``error`` through __context__ and __cause__."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [e for e in (current.__context__, current.__cause__) if e is not None]


def texts(error: BaseException) -> Iterator[str]:
    """The message, the args and every attribute of ``error``, as text."""
    yield str(error)
    yield repr(error.args)
    for name in dir(error):
        if name.startswith("__") or name == "with_traceback":
            continue
        value: Any = getattr(error, name, None)
        if isinstance(value, (bytes, bytearray)):
            yield bytes(value).decode("utf-8", "surrogateescape")
        else:
            yield repr(value)


def assert_clean(error: BaseException) -> None:
    """No exception of the chain holds the secret marker; the chain is the error alone."""
    links = list(chain(error))
    assert links == [error], [type(link).__name__ for link in links]
    for link in links:
        for text in texts(link):
            assert MARKER not in text, type(link).__name__


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


ENTRY_POINTS: dict[str, Callable[[], object]] = {
    "hash": lambda: HASHER.hash(REFUSED),
    "verify": lambda: HASHER.verify(STORED, REFUSED),
    "verify_unknown": lambda: HASHER.verify_unknown(REFUSED),
    "ahash": lambda: _run(HASHER.ahash(REFUSED)),
    "averify": lambda: _run(HASHER.averify(STORED, REFUSED)),
    "averify_unknown": lambda: _run(HASHER.averify_unknown(REFUSED)),
    "kdf.derive": lambda: kdf.derive(REFUSED, b"salt", CHEAPEST),  # type: ignore[arg-type]
    "kdf.client": lambda: kdf.client(REFUSED, b"salt", CHEAPEST),  # type: ignore[arg-type]
    "Engine.derive": lambda: kdf.Engine().derive(REFUSED, b"salt", CHEAPEST),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_a_refused_password_leaves_no_trace_in_the_chain(name: str) -> None:
    """Every public entry point refuses the password with an error whose chain is clean."""
    with pytest.raises(InvalidParametersError) as caught:
        ENTRY_POINTS[name]()
    assert_clean(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        b"my s3cret-password \xe9",
        "my s3cret-password \xe9",
        "$twocats$v=2015$m=0$s3cret-passw\udc80rd$AAAA",
        b"$twocats$v=2015$m=0$s3cret-passw$AAAA",
        "$twocats$v=2015$m=0,x=1,l=8,p=1,b=32,sb=32$AAAAAAAAAAAAAAAAAAAAAA$s3cret-passw==",
    ],
)
def test_undecodable_hash_strings_leave_no_trace_in_the_chain(text: str | bytes) -> None:
    """phc.decode and the hasher refuse a password pasted as a hash with a clean chain."""
    for call in (phc.decode, HASHER.check_hash, HASHER.needs_rehash, HASHER.upgrade):
        with pytest.raises(InvalidHashError) as caught:
            call(text)
        assert_clean(caught.value)
    with pytest.raises(TwoCatsError) as caught_verify:
        HASHER.verify(text, b"pw")
    assert_clean(caught_verify.value)
