"""What every fuzz target shares: its limits, the stand-in secret, and the record of an outcome."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

#: A stand-in secret planted in inputs and passwords; no exception message may contain it.
MARKER = "Zq7SecretMarker"

#: The password of every ``verify`` seed.
PASSWORD = f"{MARKER}-password"

#: The longest input generated, in bytes.
MAX_INPUT = 1 << 20

#: Seconds one input may take before it counts as a hang.
TIME_LIMIT = 20.0

#: One ``checksum`` input in this many also runs through ``twocats sum --check``.
CLI_EVERY = 10

#: One ``vectors`` input in this many is also read from a file of raw bytes.
FILE_EVERY = 20

#: The memory limit of the ``verify`` hasher (its work limit follows from it and its parameters).
VERIFY_MAX_MEMORY = 1 << 20


class ContractError(AssertionError):
    """A target accepted or produced something its contract forbids."""


class CliRefusal(Exception):  # noqa: N818 - named for the report's "refused: CliRefusal" rows
    """A command refused its input with exit status 2 and one ``Error:`` line (documented)."""


class Hang(BaseException):
    """An input ran longer than :data:`TIME_LIMIT` seconds."""


@dataclass(frozen=True)
class Outcome:
    """What one input did: ``accepted``, ``refused`` (a documented exception) or a failure."""

    kind: str
    detail: str = ""


@dataclass
class Target:
    """A reader under test: its seeds, how to mutate them, and its contract."""

    name: str
    seeds: list[bytes]
    alphabet: bytes
    separators: bytes
    check: Callable[[bytes, int], str]
    documented: tuple[type[BaseException], ...]
    structured: Callable[[random.Random], bytes] | None = None
    quotes_input: bool = False
