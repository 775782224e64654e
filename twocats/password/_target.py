"""What "raise stored hashes to a target" means, for every command and API that upgrades them.

A target is given in one of two ways, and means the same everywhere (``twocats upgrade``,
``needs-rehash``, ``upgrade-db``, :func:`twocats.bulk.upgrade_table` and Django's
``twocats_upgrade``):

* a memory cost alone (``--mem-cost N`` with no other parameter option, ``mem_cost=N``):
  :meth:`Target.memory`, each stored hash's own parameters at memory cost N.  Every hash below N
  can be raised without the password.
* a full parameter set (``--profile``, ``--params``, any other parameter option, a hasher's
  parameters): :meth:`Target.exactly`, that set.  A stored hash that differs from it in another
  parameter than the memory cost needs the password: it is rehashed at its user's next login.

A stored hash at or above the target's memory cost is current: an upgrade never lowers a cost.
This module only compares parameters; it computes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from twocats.params import BOUNDS, Params, check_int

#: A stored hash below the target's memory cost, otherwise at the target: raised without password.
UPGRADE: Final = "upgrade"
#: A stored hash at or above the target's memory cost, otherwise at the target.
CURRENT: Final = "current"
#: A stored hash that differs from the target in another parameter: only a rehash can change it.
NEEDS_PASSWORD: Final = "needs_password"

#: Kinds of differences counted apart, at most; further kinds are counted together, under ().
MAX_DIFFERENCE_KINDS: Final = 16

# The parameters an upgrade changes; every other one must already be the target's.
_MEMORY: Final = frozenset({"mem_cost", "start_mem_cost"})


@dataclass(frozen=True)
class Difference:
    """One parameter, other than the memory costs, in which a stored hash differs from a target."""

    name: str
    stored: object
    target: object

    def __str__(self) -> str:
        return f"{self.name} ({_shown(self.stored)}, target {_shown(self.target)})"


@dataclass(frozen=True)
class Standing:
    """Where one stored hash stands against a target.

    `kind` is :data:`UPGRADE`, :data:`CURRENT` or :data:`NEEDS_PASSWORD`; `params` are those of
    the hasher that upgrades it (for :data:`CURRENT`, the parameters it already has); `differences`
    are set for :data:`NEEDS_PASSWORD`.
    """

    kind: str
    params: Params
    differences: tuple[Difference, ...] = ()


@dataclass(frozen=True)
class Target:
    """The parameters stored hashes are raised to: a memory cost alone, or a full set.

    Build one with :meth:`memory` or :meth:`exactly`.
    """

    mem_cost: int
    params: Params | None = None

    @classmethod
    def memory(cls, mem_cost: int) -> Target:
        """Each stored hash's own parameters at memory cost `mem_cost`."""
        return cls(check_int("mem_cost", mem_cost, *BOUNDS["mem_cost"]))

    @classmethod
    def exactly(cls, params: Params) -> Target:
        """Exactly the parameter set `params`."""
        if not isinstance(params, Params):
            raise TypeError(f"the target must be a twocats.Params, not {type(params).__name__}")
        return cls(params.mem_cost, params)

    @property
    def memory_only(self) -> bool:
        """True if only the memory cost was given."""
        return self.params is None

    @property
    def reference(self) -> Params:
        """The parameters the limits on stored hashes are relative to.

        The full set; for a memory cost alone, the default profile, at that memory cost where it
        is higher: never the stored hashes' own parameters, which a planted value chooses.
        """
        if self.params is not None:
            return self.params
        # Imported here: the profiles are built from twocats.params, as this module is.
        from twocats.profiles import DEFAULT

        mem_cost = max(self.mem_cost, DEFAULT.mem_cost)
        return dataclasses.replace(DEFAULT, mem_cost=mem_cost, start_mem_cost=mem_cost)

    def standing(self, stored: Params) -> Standing:
        """Return where a stored hash with parameters `stored` stands against this target.

        Raises :class:`~twocats.exceptions.InvalidParametersError` if `stored`'s parameters at
        the target's memory cost are not a valid set (possible for some March 2014 sets).
        """
        if self.params is not None:
            found = differences(stored, self.params)
            if found:
                return Standing(NEEDS_PASSWORD, self.params, found)
            upgrader = self.params
        elif stored.mem_cost < self.mem_cost:
            upgrader = dataclasses.replace(
                stored, mem_cost=self.mem_cost, start_mem_cost=self.mem_cost
            )
        else:
            upgrader = stored
        if stored.mem_cost < self.mem_cost:
            return Standing(UPGRADE, upgrader)
        return Standing(CURRENT, stored if self.params is None else upgrader)

    def __str__(self) -> str:
        if self.params is None:
            return f"mem_cost {self.mem_cost} (each hash's other parameters kept)"
        # Imported here: twocats.phc imports twocats.params, as this module does.
        from twocats.phc import encode_params

        return f"exactly {encode_params(self.params)}"


def differences(stored: Params, target: Params) -> tuple[Difference, ...]:
    """Return the parameters other than the memory costs in which `stored` differs from `target`."""
    return tuple(
        Difference(item.name, getattr(stored, item.name), getattr(target, item.name))
        for item in dataclasses.fields(Params)
        if item.compare
        and item.name not in _MEMORY
        and getattr(stored, item.name) != getattr(target, item.name)
    )


def count_differences(
    counts: dict[tuple[Difference, ...], int], found: tuple[Difference, ...]
) -> None:
    """Count one hash differing in `found` into `counts`, in :data:`MAX_DIFFERENCE_KINDS` kinds."""
    if found not in counts and len(counts) >= MAX_DIFFERENCE_KINDS:
        found = ()
    counts[found] = counts.get(found, 0) + 1


def describe_differences(found: tuple[Difference, ...]) -> str:
    """Return ``"multiplies (1, target 3) and parallelism (1, target 2)"`` for `found`."""
    if not found:
        return "other parameters (more kinds than are listed)"
    parts = [str(difference) for difference in found]
    if len(parts) < 2:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
