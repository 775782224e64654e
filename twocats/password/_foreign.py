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
an estimate may run high, never low (``tests/password/test_foreign_bounds.py`` measures it against
argon2-cffi's verification across the lanes).  This module imports neither library.

Lanes.  argon2-cffi, which Django, pwdlib and libpass verify argon2 with, starts one thread per
lane for each quarter of each pass, about 30 us of CPU per thread start, so a hash's lanes cost
work of their own (counted in the estimate) and threads: ``p=65536`` starts 65,536 threads at
once, which fails under any process limit.  A hash with more than :data:`ARGON2_MAX_LANES` (255)
lanes is refused: 255 is the most Go's ``x/crypto/argon2`` can make (it takes the lanes as a
byte) and twocats' own ``parallelism`` bound, far above what libraries make (argon2-cffi and
pwdlib 4, Django 8, PHP, libsodium and Spring 1; RFC 9106 recommends 4) and above the cores of
the machines such hashes are made for.

A malformed argon2 or bcrypt string is refused before any library sees it: one longer than
:data:`MAX_FOREIGN_LENGTH`, one with characters or fields that the format does not have (a
non-ASCII salt, a missing salt or output), or argon2 parameters out of argon2's own range (``t``
and ``p`` at least 1, ``m`` at least 8 KiB per lane, a salt of at least 8 bytes and an output of
at least 4).  The framework adapters answer such a stored hash, and one that the library then
fails to verify, as they answer a malformed twocats hash: like a wrong password (libpass raises
``ValueError``, as every passlib handler does for a malformed hash).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from twocats._units import format_size
from twocats.exceptions import HashLimitError, HashMemoryLimitError, InvalidHashError
from twocats.kdf.limits import StoredLimits, format_work

#: The most lanes (``p``) an argon2 hash may have: the most Go's x/crypto/argon2 can make, and
#: twocats' own parallelism bound (see the module documentation).
ARGON2_MAX_LANES: Final = 255

#: The longest foreign hash string read, in characters: an argon2 string with a 128-byte salt and
#: a 512-byte output fits.
MAX_FOREIGN_LENGTH: Final = 1024

# argon2: CPU per KiB and pass (1.52 us measured at m=64 MiB, t=3), and per KiB for the memory
# each verification allocates and touches afresh (the first pass measured 2.70 us per KiB).
_ARGON2_KIB_PASS_NS: Final = 1_600
_ARGON2_FRESH_KIB_NS: Final = 1_200
# argon2: CPU per lane and pass, four thread starts (98 to 143 us measured at p=16 to 255, t=1
# to 4, m=8 KiB per lane; up to 200 us while the machine was busy elsewhere), with a margin.
_ARGON2_LANE_PASS_NS: Final = 300_000
# argon2's own lower bounds: one pass, one lane, and two blocks of 1 KiB per lane and quarter.
_ARGON2_MIN_KIB_PER_LANE: Final = 8
# bcrypt: CPU per unit of 2**cost (78 us measured at cost 8 and 10), and its state (4 KiB).
_BCRYPT_ROUND_NS: Final = 80_000
_BCRYPT_MEMORY: Final = 4 << 10

# The scheme and cost parameters at the start of a string; the longest numbers read, so that a
# planted string cannot make a huge integer.
_ARGON2 = re.compile(
    r"\$(argon2(?:id|i|d))\$(?:v=\d{1,3}\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,8})(?:[$,]|\Z)"
)
_BCRYPT = re.compile(r"\$(2[abxy]?)\$(\d{2})\$")
# The whole string: argon2's salt and output in unpadded standard base64, bcrypt's 22 characters
# of salt and 31 of output in its own base64.
_ARGON2_WHOLE = re.compile(
    r"\$argon2(?:id|i|d)\$(?:v=\d{1,3}\$)?m=\d{1,10},t=\d{1,10},p=\d{1,8}"
    r"\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)"
)
_BCRYPT_WHOLE = re.compile(r"\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}")
# argon2's shortest salt and output, in bytes.
_ARGON2_MIN_SALT: Final = 8
_ARGON2_MIN_OUTPUT: Final = 4


@dataclasses.dataclass(frozen=True)
class ForeignCost:
    """The memory (bytes), estimated work (work units) and threads of verifying a foreign hash."""

    scheme: str
    memory: int
    work: int
    #: Its cost parameters as the string names them, e.g. ``m=65536, t=3, p=4``.
    settings: str
    #: The threads its verification runs at once (argon2: one per lane).
    threads: int = 1


def _text(hash: object) -> str | None:
    """`hash` as text; None for an object that is neither str nor bytes."""
    if isinstance(hash, bytes):
        return hash.decode("ascii", "replace")
    return hash if isinstance(hash, str) else None


def _argon2_cost(scheme: str, memory_kib: int, passes: int, lanes: int) -> ForeignCost:
    """The cost of an argon2 hash; raises InvalidHashError for parameters argon2 refuses."""
    settings = f"m={memory_kib}, t={passes}, p={lanes}"
    problem = None
    if passes < 1:
        problem = "t must be at least 1"
    elif lanes < 1:
        problem = "p must be at least 1"
    elif memory_kib < _ARGON2_MIN_KIB_PER_LANE * lanes:
        problem = f"m must be at least {_ARGON2_MIN_KIB_PER_LANE} KiB per lane"
    if problem is not None:
        raise InvalidHashError(f"the stored {scheme} hash is malformed: {settings} ({problem})")
    work = memory_kib * (passes * _ARGON2_KIB_PASS_NS + _ARGON2_FRESH_KIB_NS)
    work += lanes * passes * _ARGON2_LANE_PASS_NS
    return ForeignCost(scheme, memory_kib << 10, work, settings, lanes)


def _base64_bytes(text: str) -> int:
    """The number of bytes unpadded base64 `text` stands for; -1 for an impossible length."""
    return -1 if len(text) % 4 == 1 else len(text) * 3 // 4


def _argon2_problem(text: str) -> str | None:
    """What is wrong with the salt and output of the argon2 string `text`; None if nothing."""
    whole = _ARGON2_WHOLE.fullmatch(text)
    if whole is None:
        return "it is not $argon2id$v=19$m=...,t=...,p=...$salt$output, in base64 without padding"
    salt, output = map(_base64_bytes, whole.group(1, 2))
    if salt < _ARGON2_MIN_SALT:
        return f"its salt is not base64 of at least {_ARGON2_MIN_SALT} bytes"
    if output < _ARGON2_MIN_OUTPUT:
        return f"its output is not base64 of at least {_ARGON2_MIN_OUTPUT} bytes"
    return None


def _read(text: str) -> ForeignCost | None:
    """The cost of the argon2 or bcrypt string `text`; None for another string.

    Raises :class:`~twocats.exceptions.InvalidHashError` for an argon2 or bcrypt string that is
    malformed (see the module documentation).
    """
    head = text[:96]
    argon2, bcrypt = _ARGON2.match(head), _BCRYPT.match(head)
    scheme = argon2[1] if argon2 is not None else "bcrypt" if bcrypt is not None else None
    if scheme is None:
        return None
    malformed = f"the stored {scheme} hash is malformed"
    if len(text) > MAX_FOREIGN_LENGTH:
        raise InvalidHashError(f"{malformed}: longer than {MAX_FOREIGN_LENGTH} characters")
    if argon2 is not None:
        cost = _argon2_cost(scheme, *map(int, argon2.group(2, 3, 4)))
        problem = _argon2_problem(text)
        if problem is not None:
            raise InvalidHashError(f"{malformed}: {problem}")
        return cost
    assert bcrypt is not None
    rounds = int(bcrypt[2])
    if not 4 <= rounds <= 31:
        raise InvalidHashError(f"{malformed}: cost={rounds} (cost must be from 4 to 31)")
    if _BCRYPT_WHOLE.fullmatch(text) is None:
        raise InvalidHashError(
            f"{malformed}: it is not $2b$NN$ and 53 characters of bcrypt's base64"
        )
    return ForeignCost("bcrypt", _BCRYPT_MEMORY, _BCRYPT_ROUND_NS << rounds, f"cost={rounds}")


def foreign_cost(hash: str | bytes) -> ForeignCost | None:
    """Return what verifying the argon2 or bcrypt string `hash` costs; None for another string.

    The start of the string is read for its scheme and cost parameters, and the whole of it is
    checked to have the form of such a string, in at most :data:`MAX_FOREIGN_LENGTH`
    characters; the library that verifies it checks the rest.  A malformed argon2 or bcrypt
    string is another string here (:func:`check_foreign` says what is wrong with it).
    """
    text = _text(hash)
    if text is None:
        return None
    try:
        return _read(text)
    except InvalidHashError:
        return None


def check_foreign(hash: str | bytes, limits: StoredLimits) -> ForeignCost:
    """Return the cost of the argon2 or bcrypt string `hash` if `limits` allow it, else raise.

    Raises :class:`~twocats.exceptions.HashMemoryLimitError` for more memory than
    ``max_memory``, :class:`~twocats.exceptions.HashLimitError` for more work than ``max_work``
    or more than :data:`ARGON2_MAX_LANES` lanes, and :class:`~twocats.exceptions.InvalidHashError`
    for a string that is neither, or a malformed one.
    """
    text = _text(hash)
    cost = None if text is None else _read(text)
    if cost is None:
        raise InvalidHashError("the stored hash is neither an argon2 nor a bcrypt hash string")
    subject = f"the stored {cost.scheme} hash"
    if cost.threads > ARGON2_MAX_LANES:
        raise HashLimitError(
            f"{subject} is refused: {cost.settings} has {cost.threads} lanes, each a thread of "
            f"its verification; p must be from 1 to {ARGON2_MAX_LANES}"
        )
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
