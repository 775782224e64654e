"""How a bulk upgrade treats one stored value, judged against the target.

A TwoCats value is decoded once and placed by :meth:`twocats.password.Target.standing`:

* ``upgrade``: below the target's memory cost, otherwise at the target, so
  :meth:`~twocats.PasswordHasher.upgrade` can raise it without the password;
* ``current``: at or above the target's memory cost (a rerun skips it; a cost is never lowered);
* ``needs_password``: other parameters differ from a full target (with the differences), which
  only a rehash at the user's next login can change;
* ``refused``: over the limits of the hasher that would upgrade it, or otherwise unusable by it
  (with the reason, one of :mod:`twocats.bulk.reasons`).  Only values to upgrade are checked
  against the limits, before anything else is done with them: a planted string never reaches a
  worker.

Values that are not TwoCats hashes get their kind from :func:`twocats.bulk.values.other_kind`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from twocats import phc
from twocats.bulk import reasons
from twocats.bulk.values import StoredValue, other_kind, split_twocats
from twocats.exceptions import (
    HashLimitError,
    HashMemoryLimitError,
    InvalidHashError,
    InvalidParametersError,
)
from twocats.password import CURRENT, NEEDS_PASSWORD, UPGRADE, Difference, Upgraders

if TYPE_CHECKING:
    from twocats.params import Params

__all__ = [
    "CURRENT",
    "NEEDS_PASSWORD",
    "REFUSED",
    "UPGRADE",
    "Verdict",
    "judge",
]

REFUSED: Final = "refused"


@dataclass(frozen=True)
class Verdict:
    """What to do with one stored value.

    `stored` and `mem_cost` are set for TwoCats values that decoded; `reason` for refused ones;
    `upgrader` (the parameters of the hasher that upgrades it) for values to upgrade, and
    `differences` for values that need the password; `decoded` (the stored PHC string decoded,
    so that a worker's result is checked against it without decoding it again) for values to
    upgrade.
    """

    kind: str
    stored: StoredValue | None = None
    mem_cost: int | None = None
    reason: str | None = None
    upgrader: Params | None = None
    differences: tuple[Difference, ...] = ()
    decoded: phc.PHCHash | None = None


def judge(value: object, upgraders: Upgraders) -> Verdict:
    """Return the verdict on one stored `value` for an upgrade to the target of `upgraders`.

    A value to upgrade is checked against their limits, and so is its upgrade.
    """
    stored = split_twocats(value)
    if stored is None:
        return Verdict(other_kind(value))
    try:
        decoded = phc.decode(stored.phc)
    except InvalidHashError:
        return Verdict("malformed")
    params = decoded.params
    try:
        standing = upgraders.target.standing(params)
    except InvalidParametersError:
        return Verdict(REFUSED, stored, params.mem_cost, reason=reasons.UPGRADE_FAILED)
    if standing.kind != UPGRADE:
        return Verdict(standing.kind, stored, params.mem_cost, differences=standing.differences)
    try:
        upgraders.limits.check(params)
        upgraded = dataclasses.replace(params, mem_cost=standing.params.mem_cost)
        upgraders.limits.check(upgraded, old_mem_cost=params.mem_cost, subject="the upgrade")
        upgraders(standing.params)
    except HashMemoryLimitError:
        return Verdict(REFUSED, stored, params.mem_cost, reason=reasons.OVER_MEMORY_LIMIT)
    except HashLimitError:
        return Verdict(REFUSED, stored, params.mem_cost, reason=reasons.OVER_WORK_LIMIT)
    except InvalidParametersError:
        return Verdict(REFUSED, stored, params.mem_cost, reason=reasons.UPGRADE_FAILED)
    return Verdict(UPGRADE, stored, params.mem_cost, upgrader=standing.params, decoded=decoded)
