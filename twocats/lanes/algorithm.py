"""One row of the lane registry: an algorithm's multi-message function and its facts.

Each family module of :mod:`twocats.lanes.modes` declares its rows as ``ALGORITHMS``, a tuple of
:class:`Algorithm`; :mod:`twocats.lanes.registry` gathers them.  Importing this module imports
neither numpy nor numba.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Algorithm", "ManyFunction", "each"]

#: The signature of a multi-message function: messages and a backend in, digests out.
ManyFunction = Callable[..., list[bytes]]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of the table: its multi-message function and facts a front end needs."""

    name: str
    digest_size: int
    many: ManyFunction
    #: The ``hashlib.new`` name of the same function, for streaming large inputs, or None.
    hashlib_name: str | None
    summary: str
    #: True for SHA-1: integrity checks of old data only, never for passwords or new designs.
    legacy: bool = False
    #: True for the lane primitives, whose lane count and threads the caller may choose.
    primitive: bool = False
    #: Where hashlib has no such function: ``stream(backend=...)`` is a new streaming hasher
    #: (``update``, ``digest``) for inputs too long to hold; None: they are read whole.
    stream: Callable[..., Any] | None = None


def each(func: Callable[..., bytes], **fixed: object) -> ManyFunction:
    """Turn a one-message tree hash into a multi-message function (one tree per message)."""

    def many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
        from twocats.lanes.modes._common import check_messages

        return [func(m, backend=backend, **fixed) for m in check_messages(messages)]

    many.__doc__ = f"Apply {func.__qualname__} to each message."
    return many
