"""Raise the memory cost of every stored twocats hash of the user table, without the passwords.

The target is the configured hasher's parameters, exactly, or a memory cost alone (``mem_cost``:
each stored value's own parameters at that cost), as :class:`twocats.password.Target` says.
:func:`upgrade_users` reads the users whose value belongs to the twocats hasher in batches, in
primary-key order, computes each upgrade outside any transaction (that is the long part), then
writes the batch in one transaction, each row only if its value is still the one read: a login or
password change that happened meanwhile wins, and the row is counted as ``changed``.  A crash or
kill leaves every row old or new.

Django's session hash is an HMAC of the stored value, so a user whose value is upgraded is signed
out of their sessions and signs in again once.  ``inactive_before`` limits the run to users who
have not logged in since then (or never), who have no recent session to lose; the others are
rehashed by Django itself at their next login, because their value must be updated.  (A session
outlives its login by up to ``SESSION_COOKIE_AGE``, more where the application saves sessions on
every request; choose the cut-off accordingly.)
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet

from twocats import phc
from twocats.exceptions import InvalidHashError, TwoCatsError
from twocats.integrations.django.hashers import MAX_STORED_LENGTH, TwoCatsPasswordHasher
from twocats.password import (
    NEEDS_PASSWORD,
    UPGRADE,
    Difference,
    Standing,
    Target,
    Upgraders,
    count_differences,
)

__all__ = ["UpgradeSummary", "upgrade_users"]


@dataclass
class UpgradeSummary:
    """What a run did (or, in a dry run, would do) with the twocats values it read."""

    mem_cost: int
    """The memory cost values are raised to."""
    total: int = 0
    """Values to examine, counted at the start."""
    examined: int = 0
    """Values read so far."""
    upgraded: int = 0
    """Rows written with the upgraded value (in a dry run: rows that would be)."""
    current: int = 0
    """Values already at the configured memory cost."""
    stale: int = 0
    """Values that differ in another parameter, or are unusable: Django rehashes them at login."""
    differing: dict[tuple[Difference, ...], int] = field(default_factory=dict)
    """The values of `stale` that differ from a full target in other parameters, by difference."""
    changed: int = 0
    """Rows whose value changed between the read and the write; they were left alone."""
    lowest_start: int | None = None
    """The lowest start level of the values upgraded (None: none was)."""

    @property
    def attention(self) -> int:
        """Values left below the target: to be rehashed at their next login, or changed."""
        return self.stale + self.changed


def upgrade_users(
    hasher: TwoCatsPasswordHasher,
    *,
    mem_cost: int | None = None,
    batch_size: int = 200,
    dry_run: bool = False,
    inactive_before: datetime.datetime | None = None,
    progress: Callable[[UpgradeSummary], None] | None = None,
) -> UpgradeSummary:
    """Upgrade the twocats values of the user model to `hasher`'s parameters, or to `mem_cost`.

    `progress` is called after each batch with the running summary.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    # Reading the configured hasher checks the configuration before any row is read.
    configured = hasher.hasher
    if mem_cost is None:
        target = Target.exactly(configured.params)
        upgraders = None
    else:
        target = Target.memory(mem_cost)
        upgraders = Upgraders(target)
    summary = UpgradeSummary(mem_cost=target.mem_cost)
    users = _candidates(hasher, inactive_before)
    summary.total = users.count()
    last_pk = None
    while True:
        batch = users if last_pk is None else users.filter(pk__gt=last_pk)
        rows = list(batch.order_by("pk").values_list("pk", "password")[:batch_size])
        if not rows:
            return summary
        last_pk = rows[-1][0]
        upgradable = []
        for pk, value in rows:
            summary.examined += 1
            standing = _standing(target, value)
            if standing is not None and standing.kind == UPGRADE:
                upgradable.append((pk, value))
                start = hasher.decode(value)["params"].start_mem_cost
                if summary.lowest_start is None or start < summary.lowest_start:
                    summary.lowest_start = start
            elif standing is not None and standing.kind == NEEDS_PASSWORD:
                summary.stale += 1
                count_differences(summary.differing, standing.differences)
            elif standing is None or (upgraders is None and hasher.must_update(value)):
                summary.stale += 1
            else:
                summary.current += 1
        if dry_run:
            summary.upgraded += len(upgradable)
        else:
            writes = []
            for pk, value in upgradable:
                try:
                    writes.append((pk, value, _upgraded(hasher, upgraders, value)))
                except TwoCatsError:
                    # Upgraded, the value would not fit the column (or is over the limits):
                    # Django rehashes it at the user's next login instead.
                    summary.stale += 1
            _write(users, writes, summary)
        if progress is not None:
            progress(summary)


def _standing(target: Target, value: str) -> Standing | None:
    """Return where a stored value stands against `target` (None if it is unusable)."""
    parts = phc.split_prefix(value)
    if parts is None:
        return None
    try:
        return target.standing(phc.decode(parts[1]).params)
    except TwoCatsError:
        return None


def _upgraded(hasher: TwoCatsPasswordHasher, upgraders: Upgraders | None, value: str) -> str:
    """Return `value` upgraded: by the configured hasher, or to a memory cost alone."""
    if upgraders is None:
        return hasher.upgrade(value)
    parts = phc.split_prefix(value)
    if parts is None:
        raise InvalidHashError(f"not a value of the {hasher.algorithm!r} hasher")
    new = parts[0] + upgraders.upgrade(parts[1])
    if len(new) > MAX_STORED_LENGTH:
        raise InvalidHashError(
            f"the upgraded value would be {len(new)} characters, more than the "
            f"{MAX_STORED_LENGTH} of Django's password column"
        )
    return new


def _candidates(
    hasher: TwoCatsPasswordHasher, inactive_before: datetime.datetime | None
) -> QuerySet:
    """Return the users whose stored value belongs to `hasher`."""
    model = get_user_model()
    users = model._default_manager.filter(password__startswith=f"{hasher.algorithm}$")
    if inactive_before is not None:
        users = users.filter(Q(last_login__lt=inactive_before) | Q(last_login__isnull=True))
    return users


def _write(
    users: QuerySet,
    writes: list[tuple[object, str, str]],
    summary: UpgradeSummary,
) -> None:
    """Write one batch in one transaction, each row only if it still holds the value read."""
    with transaction.atomic(using=users.db):
        for pk, old, new in writes:
            if users.filter(pk=pk, password=old).update(password=new):
                summary.upgraded += 1
            else:
                summary.changed += 1
