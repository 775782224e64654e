"""What a stored value is: a TwoCats hash (bare or behind a framework prefix) or another kind.

A value is a TwoCats hash when it is a PHC string ``$twocats$...``, or one behind a framework's
algorithm prefix such as Django's (``twocats$twocats$...`` or ``twocats$$twocats$...``: the
algorithm's name, then the PHC string).  The prefix is kept as found when the value is rewritten.
Every other value is put in one of :data:`OTHER_KINDS` by its shape alone; nothing here decodes
or checks a TwoCats string (see :mod:`twocats.bulk.rows` for that).

A value that cannot be a TwoCats one because it is longer than :data:`MAX_VALUE_LENGTH` or is not
UTF-8 text is never read in full: the table reads at most that many characters of each value and
gives such a value as :class:`Unreadable`, a ``malformed`` one that holds none of its content.

This module imports neither SQLAlchemy nor Dask.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from twocats.phc import MAX_ENCODED_LENGTH, MAX_PREFIX_LENGTH, split_prefix

__all__ = [
    "MAX_VALUE_LENGTH",
    "OTHER_KINDS",
    "StoredValue",
    "Unreadable",
    "other_kind",
    "split_twocats",
]

#: The kinds of values a bulk upgrade leaves untouched, besides TwoCats hashes.
OTHER_KINDS: Final = ("argon2", "bcrypt", "pbkdf2", "scrypt", "empty", "malformed")

#: The longest TwoCats value, prefix included; longer values are not read (all of it is ASCII).
MAX_VALUE_LENGTH: Final = MAX_PREFIX_LENGTH + MAX_ENCODED_LENGTH

# The shapes of the other algorithms' values, bare or behind Django's and passlib's names.
_SHAPES: Final = (
    ("argon2", re.compile(r"(argon2)?\$argon2(id|i|d)\$")),
    ("bcrypt", re.compile(r"(bcrypt(_sha256)?\$)?\$2[abxy]?\$")),
    ("pbkdf2", re.compile(r"pbkdf2_sha(1|256)\$|\$pbkdf2(-sha(1|256|512))?\$")),
    ("scrypt", re.compile(r"scrypt\$|\$scrypt\$|\$7\$")),
)


@dataclass(frozen=True)
class StoredValue:
    """A stored TwoCats value split into its framework prefix (often empty) and its PHC string."""

    prefix: str
    phc: str

    def with_phc(self, phc: str) -> str:
        """Return the value to store for a new PHC string, behind the same prefix."""
        return self.prefix + phc


@dataclass(frozen=True)
class Unreadable:
    """A stored value that was not read: too long to be a TwoCats one, or not UTF-8 text."""

    why: str


def split_twocats(value: object) -> StoredValue | None:
    """Return the parts of a TwoCats value, or None if `value` is not one."""
    if not isinstance(value, str):
        return None
    parts = split_prefix(value)
    return None if parts is None else StoredValue(*parts)


def other_kind(value: object) -> str:
    """Return the kind of a value that is not a usable TwoCats hash (one of :data:`OTHER_KINDS`)."""
    if value is None or value == "" or value == b"":
        return "empty"
    if isinstance(value, str):
        for kind, shape in _SHAPES:
            if shape.match(value):
                return kind
    return "malformed"
