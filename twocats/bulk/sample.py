"""Loading the kernels an upgrade uses, once, before any real upgrade."""

from __future__ import annotations

import dataclasses

from twocats.exceptions import InvalidParametersError
from twocats.params import Params
from twocats.password import PasswordHasher

__all__ = ["warm_up"]


def _lowest(target: Params) -> Params | None:
    """Return the target's parameters at the lowest valid memory cost below its own, if any."""
    for mem_cost in range(target.mem_cost):
        try:
            return dataclasses.replace(target, mem_cost=mem_cost, start_mem_cost=mem_cost)
        except InvalidParametersError:
            continue
    return None


def warm_up(hasher: PasswordHasher) -> None:
    """Compile or load the kernels `hasher` upgrades with, by upgrading one throwaway hash."""
    low = _lowest(hasher.params)
    if low is None:
        return
    maker = PasswordHasher.from_params(low, backend=hasher.backend)
    hasher.upgrade(maker.hash(b"kernel warm-up"))
