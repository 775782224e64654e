"""How a bulk upgrade treats one stored value, judged against the target.

A TwoCats value is decoded once and placed by :meth:`twocats.target.Target.standing`:

* ``upgrade``: below the target's memory cost, otherwise at the target, so
  :meth:`~twocats.PasswordHasher.upgrade` can raise it without the password;
* ``current``: at or above the target's memory cost (a rerun skips it; a cost is never lowered);
* ``needs_password``: other parameters differ from a full target (with the differences), which
  only a rehash at the user's next login can change;
* ``refused``: over the limits of the hasher that would upgrade it, or otherwise unusable by it
  (with the reason).  Only values to upgrade are checked against the limits, before anything
  else is done with them: a planted string never reaches a worker.

Values that are not TwoCats hashes get their kind from :func:`twocats.bulk.values.other_kind`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from twocats import phc
from twocats.bulk.values import StoredValue, other_kind, split_twocats
from twocats.exceptions import HashLimitError, InvalidHashError, InvalidParametersError
from twocats.hasher import PasswordHasher
from twocats.kdf.limits import StoredLimits
from twocats.params import Params
from twocats.target import CURRENT, NEEDS_PASSWORD, UPGRADE, Difference, Target

__all__ = [
    "CURRENT",
    "MAX_HASHERS",
    "NEEDS_PASSWORD",
    "REFUSED",
    "UPGRADE",
    "Hashers",
    "Verdict",
    "judge",
]

REFUSED: Final = "refused"

#: Hashers kept at once, at most (one per family of parameters); the oldest goes first.
MAX_HASHERS: Final = 8


@dataclass(frozen=True)
class Verdict:
    """What to do with one stored value.

    `stored` and `mem_cost` are set for TwoCats values that decoded; `reason` for refused ones;
    `upgrader` (the parameters of the hasher that upgrades it) for values to upgrade, and
    `differences` for values that need the password.
    """

    kind: str
    stored: StoredValue | None = None
    mem_cost: int | None = None
    reason: str | None = None
    upgrader: Params | None = None
    differences: tuple[Difference, ...] = ()


class Hashers:
    """The hashers that upgrade to the target, one per family of parameters, built on first use.

    All have the same limits, relative to the target's reference (see
    :attr:`twocats.target.Target.reference`).  This process uses them for their limits only; at
    most :data:`MAX_HASHERS` are kept.
    """

    def __init__(self, target: Target, max_memory: int | None, backend: str | None) -> None:
        limits = StoredLimits.relative_to(target.reference, max_memory=max_memory)
        self.limits = limits
        self.max_memory = limits.max_memory
        self.max_work = limits.max_work
        self.backend = backend
        self.hashers: dict[Params, PasswordHasher] = {}

    def __call__(self, params: Params) -> PasswordHasher:
        hasher = self.hashers.pop(params, None)
        if hasher is None:
            hasher = PasswordHasher.from_params(
                params, max_memory=self.max_memory, max_work=self.max_work, backend=self.backend
            )
        self.hashers[params] = hasher
        while len(self.hashers) > MAX_HASHERS:
            del self.hashers[next(iter(self.hashers))]
        return hasher


def judge(value: object, target: Target, hashers: Hashers) -> Verdict:
    """Return the verdict on one stored `value` for an upgrade to `target`.

    A value to upgrade is checked against the limits of `hashers`, and so is its upgrade.
    """
    stored = split_twocats(value)
    if stored is None:
        return Verdict(other_kind(value))
    try:
        params = phc.decode(stored.phc).params
    except InvalidHashError:
        return Verdict("malformed")
    try:
        standing = target.standing(params)
    except InvalidParametersError as error:
        return Verdict(REFUSED, stored, params.mem_cost, reason=str(error))
    if standing.kind != UPGRADE:
        return Verdict(standing.kind, stored, params.mem_cost, differences=standing.differences)
    try:
        hashers.limits.check(params)
        upgraded = dataclasses.replace(params, mem_cost=standing.params.mem_cost)
        hashers.limits.check(upgraded, old_mem_cost=params.mem_cost, subject="the upgrade")
        hashers(standing.params)
    except (HashLimitError, InvalidParametersError) as error:
        return Verdict(REFUSED, stored, params.mem_cost, reason=str(error))
    return Verdict(UPGRADE, stored, params.mem_cost, upgrader=standing.params)
