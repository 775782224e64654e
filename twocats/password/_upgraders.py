"""The hashers that raise stored hashes to a target, one per family of parameters.

A full target needs one hasher; a memory cost alone (see :mod:`twocats.password._target`) one per
kind of stored hash, each at the target's memory cost.  All share one set of limits, relative to the
target's :attr:`~twocats.password.Target.reference`, never to the stored hashes' own parameters:
a planted value cannot raise the limits it is checked against.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from twocats import phc
from twocats.kdf.limits import StoredLimits
from twocats.params import Params
from twocats.password._hasher import PasswordHasher
from twocats.password._target import Target

#: Hashers kept at once, at most (one per family of parameters); the least recently used goes.
MAX_HASHERS: Final = 8


class Upgraders:
    """The hashers that upgrade stored hashes to `target`, built on first use; thread-safe.

    `prepare` is called on each new hasher (to load its kernels, say).
    """

    def __init__(
        self,
        target: Target,
        *,
        max_memory: int | None = None,
        max_work: int | None = None,
        backend: str | None = None,
        prepare: Callable[[PasswordHasher], None] | None = None,
    ) -> None:
        self.target = target
        self.limits = StoredLimits.relative_to(
            target.reference, max_memory=max_memory, max_work=max_work
        )
        self.backend = backend
        self._prepare = prepare
        self._hashers: dict[Params, PasswordHasher] = {}
        self._lock = threading.Lock()

    @property
    def families(self) -> tuple[Params, ...]:
        """The parameters of the hashers kept now."""
        with self._lock:
            return tuple(self._hashers)

    def __call__(self, params: Params) -> PasswordHasher:
        """Return the hasher for `params` (a :class:`~twocats.password.Standing`'s)."""
        with self._lock:
            hasher = self._hashers.pop(params, None)
            if hasher is None:
                hasher = PasswordHasher.from_params(
                    params,
                    max_memory=self.limits.max_memory,
                    max_work=self.limits.max_work,
                    backend=self.backend,
                )
                if self._prepare is not None:
                    self._prepare(hasher)
            self._hashers[params] = hasher
            while len(self._hashers) > MAX_HASHERS:
                self._hashers.pop(next(iter(self._hashers))).release()
        return hasher

    def upgrade(self, stored: str) -> str:
        """Return the PHC string `stored` raised to the target (unchanged if at or above it).

        Raises as :meth:`twocats.PasswordHasher.upgrade` does, for a hash that differs from a
        full target in another parameter too.
        """
        standing = self.target.standing(phc.decode(stored).params)
        return self(standing.params).upgrade(stored)

    def release(self) -> None:
        """Let go of the work memory every hasher keeps."""
        with self._lock:
            for hasher in self._hashers.values():
                hasher.release()
