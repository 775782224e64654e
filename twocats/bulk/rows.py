"""How a bulk upgrade treats one stored value, judged against the target hasher.

A TwoCats value is decoded once and its parameters are checked against the hasher's memory and
work limits (:meth:`~twocats.PasswordHasher.check_hash`) before anything else: a planted string
never reaches a worker.  It is then:

* ``upgrade``: same parameters as the target but a lower memory cost, so
  :meth:`~twocats.PasswordHasher.upgrade` can raise it without the password;
* ``current``: already at the target's memory cost (a rerun skips it);
* ``above_target``: at a higher memory cost than the target (a bulk upgrade never lowers one);
* ``needs_password``: other parameters differ (lanes, block size, hash type...), which only a
  rehash at the user's next login can change;
* ``refused``: over the limits, with the reason (one of :mod:`twocats.bulk.reasons`).

Values that are not TwoCats hashes get their kind from :func:`twocats.bulk.values.other_kind`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from twocats.bulk import reasons
from twocats.bulk.values import StoredValue, other_kind, split_twocats
from twocats.exceptions import HashLimitError, HashMemoryLimitError, InvalidHashError

if TYPE_CHECKING:
    from twocats.hasher import PasswordHasher
    from twocats.params import Params

__all__ = [
    "ABOVE_TARGET",
    "CURRENT",
    "NEEDS_PASSWORD",
    "REFUSED",
    "UPGRADE",
    "Verdict",
    "judge",
]

UPGRADE: Final = "upgrade"
CURRENT: Final = "current"
ABOVE_TARGET: Final = "above_target"
NEEDS_PASSWORD: Final = "needs_password"
REFUSED: Final = "refused"


@dataclass(frozen=True)
class Verdict:
    """What to do with one stored value.

    `stored` and `mem_cost` are set for TwoCats values that decoded; `reason` for refused ones.
    """

    kind: str
    stored: StoredValue | None = None
    mem_cost: int | None = None
    reason: str | None = None


def _same_family(stored: Params, target: Params) -> bool:
    """Return True if `stored` differs from `target` at most in its memory costs."""
    aligned = dataclasses.replace(
        stored, mem_cost=target.mem_cost, start_mem_cost=target.start_mem_cost
    )
    return aligned == target


def judge(value: object, hasher: PasswordHasher) -> Verdict:
    """Return the verdict on one stored `value` for an upgrade to `hasher`'s parameters."""
    stored = split_twocats(value)
    if stored is None:
        return Verdict(other_kind(value))
    try:
        params = hasher.check_hash(stored.phc)
    except HashMemoryLimitError:
        return Verdict(REFUSED, stored, reason=reasons.OVER_MEMORY_LIMIT)
    except HashLimitError:
        return Verdict(REFUSED, stored, reason=reasons.OVER_WORK_LIMIT)
    except InvalidHashError:
        return Verdict("malformed")
    target = hasher.params
    if not _same_family(params, target):
        return Verdict(NEEDS_PASSWORD, stored, params.mem_cost)
    if params.mem_cost < target.mem_cost:
        return Verdict(UPGRADE, stored, params.mem_cost)
    if params.mem_cost == target.mem_cost:
        return Verdict(CURRENT, stored, params.mem_cost)
    return Verdict(ABOVE_TARGET, stored, params.mem_cost)
