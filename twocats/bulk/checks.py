"""The checks on a worker's results before anything is written: nothing from a worker is trusted.

Every result must be the canonical PHC string of the stored hash's upgrade: the same salt, the
same output length and the same parameters apart from the raised memory cost
(:func:`is_upgrade_of`).  A few results of each batch, chosen with :mod:`secrets`, are also
computed again in this process and compared (:func:`recomputed_equal`): one of each worker's, so
that no worker's results hide among another's, and a worker cannot tell which.
"""

from __future__ import annotations

import dataclasses
import hmac
import secrets
from collections.abc import Hashable, Sequence
from typing import Final, TypeGuard

from twocats import phc
from twocats.exceptions import InvalidHashError, TwoCatsError
from twocats.password import PasswordHasher

__all__ = ["RECOMPUTED_PER_BATCH", "is_upgrade_of", "recomputed_equal"]

#: Results of each batch computed again in this process.
RECOMPUTED_PER_BATCH: Final = 2


def is_upgrade_of(new: object, before: phc.PHCHash, mem_cost: int) -> TypeGuard[str]:
    """Return True if `new` has the shape of the upgrade of the decoded hash `before` to
    `mem_cost`."""
    if type(new) is not str or len(new) > phc.MAX_ENCODED_LENGTH:
        return False
    try:
        after = phc.decode(new)
    except InvalidHashError:
        return False
    return (
        after.encode() == new
        and after.salt == before.salt
        and len(after.digest) == len(before.digest)
        and after.params == dataclasses.replace(before.params, mem_cost=mem_cost)
    )


def recomputed_equal(
    upgrades: Sequence[tuple[PasswordHasher, str, str]], workers: Sequence[Hashable] = ()
) -> bool:
    """Return True if a random few of the (hasher, old, new) `upgrades` are what each hasher
    computes too: one of each worker's (`workers` names the worker of each upgrade), and at least
    RECOMPUTED_PER_BATCH in all."""
    chooser = secrets.SystemRandom()
    by_worker: dict[Hashable, list[int]] = {}
    for index, worker in zip(range(len(upgrades)), workers, strict=False):
        by_worker.setdefault(worker, []).append(index)
    chosen = {chooser.choice(indices) for indices in by_worker.values()}
    rest = [index for index in range(len(upgrades)) if index not in chosen]
    more = min(RECOMPUTED_PER_BATCH, len(upgrades)) - len(chosen)
    chosen.update(chooser.sample(rest, max(0, more)))
    for index in chosen:
        hasher, old, new = upgrades[index]
        try:
            again = hasher.upgrade(old)
        except TwoCatsError:
            return False
        if not hmac.compare_digest(again.encode(), new.encode()):
            return False
    return True
