"""The limits the command line applies to stored and file-supplied parameters, and the options
that raise them.
"""

from __future__ import annotations

from typing import Final

from twocats.kdf.limits import StoredLimits
from twocats.params import Params

_MIB: Final = 1 << 20
_NS_PER_MS: Final = 1_000_000


def verify_limits(max_memory: int | None, max_work: int | None = None) -> StoredLimits:
    """Return the limits ``twocats verify`` applies to stored or file-supplied parameters.

    They are exactly those of a :class:`~twocats.PasswordHasher` with the default profile and
    `max_memory` and `max_work` (None: its defaults), so that the command line accepts what such a
    server accepts, with the same messages.
    """
    from twocats.profiles import BUILT_IN, DEFAULT

    return StoredLimits.relative_to(
        DEFAULT, previous=BUILT_IN, max_memory=max_memory, max_work=max_work
    )


def verify_options(params: Params) -> list[str]:
    """Return the options ``twocats verify`` needs for hashes of `params` ([] if none).

    The options come from :func:`twocats.password.verify_limits_for`, rounded up to what the
    options accept; ``--max-work`` is named only where ``--max-memory`` alone is not enough.
    """
    from twocats.exceptions import HashLimitError, HashMemoryLimitError
    from twocats.password import verify_limits_for

    memory, work = verify_limits_for(params)
    options: list[str] = []
    max_memory = None
    if memory > verify_limits(None).max_memory:
        options += ["--max-memory", size_argument(memory)]
        max_memory = _MIB * -(-memory // _MIB)
    try:
        verify_limits(max_memory).check(params)
    except HashMemoryLimitError:
        # More than this machine can give: no option helps here.
        pass
    except HashLimitError:
        options += ["--max-work", work_argument(work)]
    return options


def size_argument(nbytes: int) -> str:
    """Return `nbytes` as a ``--max-memory`` argument, rounded up to whole MiB."""
    return f"{-(-nbytes // _MIB)}MiB"


def work_argument(units: int) -> str:
    """Return work `units` (CPU nanoseconds) as a ``--max-work`` argument, rounded up to ms."""
    return f"{-(-units // _NS_PER_MS)}ms"
