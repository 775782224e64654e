"""libpass's HandlerCase, the suite every passlib handler is expected to pass, run on twocats.

The suite is libpass's own ``tests/utils.py``, taken at test time from the installed package or
the source distribution of the installed version (see ``tests/support/peers.py``); nothing of it
is copied here.  The known-correct hashes below are checked against the plain-Python reference as
well.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

pytest.importorskip("passlib", reason="the test extra installs libpass")

from tests.support.environment import NEEDS, in_ci
from tests.support.peers import PeerSuiteMissingError, libpass_test_utils
from twocats import kdf, phc, profiles
from twocats.integrations.passlib import TwoCatsHandler

try:
    utils = libpass_test_utils()
except PeerSuiteMissingError as missing:
    if in_ci():
        raise
    pytest.skip(NEEDS + str(missing), allow_module_level=True)

#: (secret, hash) pairs computed with the plain-Python reference: a str, 8-bit str and bytes
#: secret, an empty one at the cheapest set, and a value upgraded from mem_cost 1.
KNOWN_CORRECT = [
    (
        "test",
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$c2FsdHNhbHRzYWx0c2FsdA$"
            "wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4"
        ),
    ),
    (
        "\u20ac\u00a5$",
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$MDEyMzQ1Njc4OWFiY2RlZg$"
            "oZoKXGqVBZMwbj+7TAPoj0GChS6Q7gmIRE9O1h1XRag"
        ),
    ),
    (
        b"\xe2\x82\xac\xc2\xa5$",
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$MDEyMzQ1Njc4OWFiY2RlZg$"
            "oZoKXGqVBZMwbj+7TAPoj0GChS6Q7gmIRE9O1h1XRag"
        ),
    ),
    (
        "",
        (
            "$twocats$v=2015$m=0,x=1,p=1,b=32,sb=32$ZWlnaHQgYnk$"
            "4gpCJa/ZiLRaHTgpO0cr3QZCtWQ6AZxcWLzdUuxxSaw"
        ),
    ),
    (
        "too many secrets",
        (
            "$twocats$v=2015$m=3,s=1,x=1,p=1,b=32,sb=32$AP8A/wD/AP8A/wD/AP8A/w$"
            "Q3wcW1FvTVVEsOFIWYxiKSfCu7GtoRg+Oy9yG5AnAY4"
        ),
    ),
]


class TwoCatsHandlerTest(utils.HandlerCase):  # type: ignore[misc,name-defined]
    """HandlerCase for the twocats handler at the cheapest parameters."""

    handler = TwoCatsHandler.using(profile="cheapest")
    known_correct_hashes: ClassVar[list[tuple[str | bytes, str]]] = KNOWN_CORRECT
    known_unidentified_hashes: ClassVar[list[str]] = [
        "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$YC9+jJCrQhs5R6db7LlN8Q",
        "twocats$v=2015$m=3$c2FsdHNhbHRzYWx0c2FsdA$wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4",
        "$TWOCATS$v=2015$m=3$c2FsdHNhbHRzYWx0c2FsdA$wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4",
    ]
    known_malformed_hashes: ClassVar[list[str]] = [
        "$twocats$",
        "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32",
        "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$c2FsdHNhbHRzYWx0c2FsdA$",
        # A salt of 7 bytes: PHC strings hold 8 to 64.
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$c2Vhc2FsdA$"
            "wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4"
        ),
        # Not canonical: a default parameter written out, and base64 padding.
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32,r=0$c2FsdHNhbHRzYWx0c2FsdA$"
            "wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4"
        ),
        (
            "$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$c2FsdHNhbHRzYWx0c2FsdA==$"
            "wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4"
        ),
        "$twocats$v=9999$m=3$c2FsdHNhbHRzYWx0c2FsdA$wB/spzbd1i0YPdjj1gUBs52ZVCP4Ht5voqJrqXLwkv4",
    ]


@pytest.mark.parametrize(("secret", "encoded"), KNOWN_CORRECT)
def test_known_correct_hashes_follow_the_reference(secret: str | bytes, encoded: str) -> None:
    """Each known-correct hash is what the plain-Python reference computes."""
    stored = phc.decode(encoded)
    password = secret.encode() if isinstance(secret, str) else secret
    output = kdf.derive(password, stored.salt, stored.params, backend="reference")
    assert phc.encode(stored.params, stored.salt, output) == encoded


def test_the_suite_came_from_libpass() -> None:
    """HandlerCase is libpass's own class, not a stand-in."""
    assert utils.HandlerCase.__module__ == "tests.utils"
    assert TwoCatsHandlerTest.handler.params == profiles.CHEAPEST
