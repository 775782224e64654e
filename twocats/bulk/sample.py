"""Upgrades in this process: loading the kernels once, and timing a sample for an estimate."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from twocats.exceptions import InvalidParametersError, TwoCatsError
from twocats.hasher import PasswordHasher
from twocats.params import Params

__all__ = ["time_upgrades", "warm_up"]


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


def time_upgrades(hasher: PasswordHasher, hashes: Sequence[str]) -> float | None:
    """Return the mean CPU seconds of one upgrade of `hashes` (None if none could be timed).

    The kernels are loaded first, so that their compilation does not count.
    """
    warm_up(hasher)
    seconds, timed = 0.0, 0
    for stored in hashes:
        started = time.process_time()
        try:
            hasher.upgrade(stored)
        except TwoCatsError:
            continue
        seconds += time.process_time() - started
        timed += 1
    return seconds / timed if timed else None
