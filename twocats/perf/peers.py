"""Timing calls, and TwoCats's peers argon2id and scrypt called the way a server calls them.

:func:`time_calls` is the one timing loop of ``twocats compare`` and of the repository's peer
benchmark (``bench/matrix/peers.py``): untimed warm-up calls, then one call per run, each timed by
the wall clock and by the process's CPU time (all threads, user and system).

The peers: argon2id through argon2-cffi's ``hash_secret_raw`` (``t=1`` by default, the setting of
RFC 9106's first recommendation), scrypt through :func:`hashlib.scrypt` with ``r=8, p=1`` and
``N`` such that ``128 * r * N`` is the memory.  Both allocate their memory on every call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from typing import Any, Final, Literal

from twocats._machine import load_average, usable_cpus
from twocats.perf.samples import Samples

__all__ = [
    "ARGON2_LEAST_KIB_PER_LANE",
    "PASSWORD",
    "SALT",
    "SCRYPT_MAX_MEMORY",
    "SCRYPT_R",
    "Clock",
    "Timing",
    "argon2id_at_time",
    "argon2id_call",
    "busy_note",
    "scrypt_at_time",
    "scrypt_call",
    "time_call",
    "time_calls",
]

#: argon2's least memory, in KiB per lane (argon2-cffi refuses less).
ARGON2_LEAST_KIB_PER_LANE: Final = 8

#: hashlib.scrypt refuses a maxmem of 2**31 - 1 bytes or more (the call allows 1 MiB above N's).
SCRYPT_MAX_MEMORY: Final = (1 << 31) - (1 << 21)

#: scrypt's block-size parameter: the memory is 128 * r * N bytes.
SCRYPT_R: Final = 8

#: The two clocks a call is timed by: the wall clock, and the process's CPU time (all threads).
Clock = Literal["wall", "cpu"]

#: The public password and 16-byte salt every timed call hashes.
PASSWORD: Final = b"correct horse battery staple"
SALT: Final = b"twocats compare!"


@dataclasses.dataclass(frozen=True)
class Timing:
    """The wall-clock and CPU seconds of each timed call, in order."""

    wall: Samples
    cpu: Samples

    def on(self, clock: Clock) -> Samples:
        """The samples of `clock`."""
        return self.wall if clock == "wall" else self.cpu

    def document(self) -> dict[str, Any]:
        """The wall-clock figures as a JSON-ready dict (``times_s``, ``median_s``, ...)."""
        return {
            "times_s": list(self.wall.values),
            "median_s": self.wall.median,
            "min_s": self.wall.fastest,
            "max_s": self.wall.slowest,
            "spread": self.wall.spread,
        }


def time_call(call: Callable[[], object]) -> tuple[float, float]:
    """Time one call of ``call``: its wall-clock and CPU seconds."""
    started, cpu_started = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - started, time.process_time() - cpu_started


def time_calls(call: Callable[[], object], runs: int, warmup: int = 1) -> Timing:
    """Time ``runs`` calls of ``call``, one at a time, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        call()
    walls, cpus = zip(*(time_call(call) for _ in range(runs)), strict=True)
    return Timing(Samples(walls), Samples(cpus))


def busy_note() -> str | None:
    """Say that the machine is busy (load above its usable CPUs), or None when it is not."""
    load, cpus = load_average(), usable_cpus()
    if load is None or load <= cpus:
        return None
    return f"busy machine (load {load:.1f} on {cpus} usable CPUs)"


def argon2id_call(memory_bytes: int, parallelism: int, time_cost: int = 1) -> Callable[[], bytes]:
    """Return one argon2id hash (argon2-cffi) of ``memory_bytes`` on ``parallelism`` threads."""
    from argon2.low_level import Type, hash_secret_raw

    def call() -> bytes:
        return bytes(
            hash_secret_raw(
                PASSWORD,
                SALT,
                time_cost=time_cost,
                memory_cost=memory_bytes // 1024,
                parallelism=parallelism,
                hash_len=32,
                type=Type.ID,
            )
        )

    return call


def scrypt_call(memory_bytes: int) -> Callable[[], bytes]:
    """Return one ``hashlib.scrypt`` hash with r=8, p=1 and N = memory / (128 * r)."""
    n = memory_bytes // (128 * SCRYPT_R)

    def call() -> bytes:
        return hashlib.scrypt(
            PASSWORD, salt=SALT, n=n, r=SCRYPT_R, p=1, maxmem=memory_bytes + (1 << 20), dklen=32
        )

    return call


def argon2id_at_time(
    target: float,
    memory_bytes: int,
    parallelism: int,
    runs: int,
    seconds: float | None = None,
    clock: Clock = "wall",
) -> tuple[int, Timing]:
    """Return the memory (bytes, whole KiB) argon2id t=1 fills in ``target`` seconds, timed.

    The search starts from ``memory_bytes`` (corrected at once by ``seconds``, a time already
    measured there) and corrects the memory by the ratio of the measured time (the median on
    ``clock``) to the target, the time growing linearly with the memory, until it moves by 2% or
    less (three corrections at most after the first timing).
    """
    kib = memory_bytes // 1024
    if seconds is not None:
        kib = max(ARGON2_LEAST_KIB_PER_LANE * parallelism, int(kib * target / seconds))
    timing = time_calls(argon2id_call(kib * 1024, parallelism), runs)
    for _ in range(3):
        least = ARGON2_LEAST_KIB_PER_LANE * parallelism
        scaled = max(least, int(kib * target / timing.on(clock).median))
        if abs(scaled - kib) <= kib // 50:
            break
        kib = scaled
        timing = time_calls(argon2id_call(kib * 1024, parallelism), runs)
    return kib * 1024, timing


def scrypt_at_time(target: float, runs: int, clock: Clock = "wall") -> tuple[int, Timing]:
    """Return (N, timing) for the largest power-of-two N whose scrypt time fits in ``target``.

    The time is the median on ``clock``.
    """
    n = 1 << 10
    timing = time_calls(scrypt_call(128 * SCRYPT_R * n), runs)
    while (
        128 * SCRYPT_R * 2 * n <= SCRYPT_MAX_MEMORY and 2 * timing.on(clock).median <= 1.3 * target
    ):
        doubled = time_calls(scrypt_call(128 * SCRYPT_R * 2 * n), runs)
        if doubled.on(clock).median > target:
            break
        n, timing = 2 * n, doubled
    return n, timing
