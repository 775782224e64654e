"""What another library's stored hash costs: argon2 and bcrypt strings, read without verifying.

A server that switched to twocats still verifies its older users' argon2 or bcrypt hashes with
those libraries (the framework adapters), and a planted one is as untrusted as a planted twocats
hash: ``$argon2id$v=19$m=1048576,t=1,p=1$...`` asks for 1 GiB, ``$2b$31$...`` for days of CPU.
:func:`foreign_cost` reads the memory and the estimated work such a string asks for, and
:func:`check_foreign` refuses, with the errors and limits of twocats' own stored hashes
(:class:`~twocats.kdf.limits.StoredLimits`), one that costs more than a verifier allows.
:meth:`twocats.PasswordHasher.verify_foreign` runs the other library's verification under the
hasher's admission control, its memory counted against ``max_total_memory``.

The work is in the work units of :func:`twocats.kdf.limits.estimated_work` (about a nanosecond of
CPU each), from CPU times measured with argon2-cffi 25.1 and bcrypt 5.0 on the project machine;
an estimate may run high, never low.  This module imports neither library.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from twocats._units import format_size
from twocats.exceptions import HashLimitError, HashMemoryLimitError, InvalidHashError
from twocats.kdf.limits import StoredLimits, format_work

__all__ = ["ForeignCost", "check_foreign", "foreign_cost"]

# argon2: CPU per KiB and pass (1.52 us measured at m=64 MiB, t=3), and per KiB for the memory
# each verification allocates and touches afresh (the first pass measured 2.70 us per KiB).
_ARGON2_KIB_PASS_NS: Final = 1_600
_ARGON2_FRESH_KIB_NS: Final = 1_200
# bcrypt: CPU per unit of 2**cost (78 us measured at cost 8 and 10), and its state (4 KiB).
_BCRYPT_ROUND_NS: Final = 80_000
_BCRYPT_MEMORY: Final = 4 << 10

# The longest numbers read, so that a planted string cannot make a huge integer.
_ARGON2 = re.compile(
    r"\$(argon2(?:id|i|d))\$(?:v=\d{1,3}\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,8})(?:[$,]|\Z)"
)
_BCRYPT = re.compile(r"\$(2[abxy]?)\$(\d{2})\$")


@dataclasses.dataclass(frozen=True)
class ForeignCost:
    """The memory (bytes) and estimated work (work units) of verifying a foreign hash."""

    scheme: str
    memory: int
    work: int
    #: Its cost parameters as the string names them, e.g. ``m=65536, t=3, p=4``.
    settings: str


def foreign_cost(hash: str | bytes) -> ForeignCost | None:
    """Return what verifying the argon2 or bcrypt string `hash` costs; None for another string.

    Only the start of the string is read (its scheme and cost parameters); the rest is left to
    the library that verifies it.
    """
    text = hash.decode("ascii", "replace") if isinstance(hash, bytes) else hash
    if not isinstance(text, str):
        return None
    head = text[:96]
    found = _ARGON2.match(head)
    if found is not None:
        scheme, memory_kib, passes, lanes = found[1], *map(int, found.group(2, 3, 4))
        work = memory_kib * (passes * _ARGON2_KIB_PASS_NS + _ARGON2_FRESH_KIB_NS)
        return ForeignCost(scheme, memory_kib << 10, work, f"m={memory_kib}, t={passes}, p={lanes}")
    found = _BCRYPT.match(head)
    if found is not None:
        cost = int(found[2])
        if not 4 <= cost <= 31:
            return None
        return ForeignCost("bcrypt", _BCRYPT_MEMORY, _BCRYPT_ROUND_NS << cost, f"cost={cost}")
    return None


def check_foreign(hash: str | bytes, limits: StoredLimits) -> ForeignCost:
    """Return the cost of the argon2 or bcrypt string `hash` if `limits` allow it, else raise.

    Raises :class:`~twocats.exceptions.HashMemoryLimitError` for more memory than
    ``max_memory``, :class:`~twocats.exceptions.HashLimitError` for more work than ``max_work``
    and :class:`~twocats.exceptions.InvalidHashError` for a string that is neither.
    """
    cost = foreign_cost(hash)
    if cost is None:
        raise InvalidHashError("the stored hash is neither an argon2 nor a bcrypt hash string")
    subject = f"the stored {cost.scheme} hash"
    if cost.memory > limits.max_memory:
        raise HashMemoryLimitError(
            f"{subject} is refused: {cost.settings} needs {format_size(cost.memory)} of memory, "
            f"more than {limits.memory_name} ({format_size(limits.max_memory)})"
        )
    if cost.work > limits.max_work:
        raise HashLimitError(
            f"{subject} is refused: its work is estimated at {format_work(cost.work)} of CPU "
            f"({cost.settings}), more than max_work ({format_work(limits.max_work)}, "
            f"{limits.work_basis})"
        )
    return cost
