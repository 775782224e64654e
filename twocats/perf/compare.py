"""TwoCats against argon2id and scrypt on this machine, at equal memory and at equal time.

Two comparisons, each as rows of time, memory and memory filled per second:

* **equal memory**: every algorithm hashes with the same memory; the time shows what each costs the
  defender for it;
* **equal time**: every algorithm gets the time TwoCats took, and uses as much memory as fits in it;
  the memory shows what each costs an attacker per guess for the same defender time.

Each library is used as a server would use it: TwoCats through :class:`~twocats.PasswordHasher`
(which reuses its work memory between calls; one more row shows TwoCats in fresh memory each call,
as the other two always run), and the peers of :mod:`twocats.perf.peers`: argon2id with one pass
and the same number of threads, scrypt with ``r=8, p=1``.  Every time is the median of ``runs``
calls after a warm-up call, with the fastest and slowest of those calls (the spread between
runs); the CPU time (all threads, user and system) stands beside the wall-clock time because on
a busy machine a multi-threaded hash can wait for cores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twocats.perf.peers import (
    PASSWORD,
    SALT,
    SCRYPT_MAX_MEMORY,
    SCRYPT_R,
    Timing,
    argon2id_at_time,
    argon2id_call,
    scrypt_at_time,
    scrypt_call,
    time_calls,
)
from twocats.perf.text_table import aligned_table
from twocats.perf.tune import start_params

if TYPE_CHECKING:
    from twocats.params import Params
    from twocats.perf.tradeoff.attacker import AttackerRow

__all__ = ["Row", "attacker_comparison", "compare_params", "format_table", "run_comparison"]


@dataclasses.dataclass(frozen=True)
class Row:
    """One measured configuration."""

    comparison: str
    algorithm: str
    parameters: str
    timing: Timing
    memory_bytes: int

    @property
    def seconds(self) -> float:
        """Median wall-clock seconds per hash."""
        return self.timing.wall.median

    @property
    def fill_rate(self) -> float:
        """Bytes of memory filled per second."""
        return self.memory_bytes / self.seconds

    def document(self) -> dict[str, Any]:
        """The row as a JSON-ready dict."""
        return {
            "comparison": self.comparison,
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "seconds": self.seconds,
            "fastest_seconds": self.timing.wall.fastest,
            "slowest_seconds": self.timing.wall.slowest,
            "cpu_seconds": self.timing.cpu.median,
            "memory_bytes": self.memory_bytes,
            "memory_filled_per_second": self.fill_rate,
        }


def compare_params(mem_cost: int, parallelism: int, isa: str) -> Params:
    """Return the TwoCats parameters compared: lanes from ``isa``'s vector width, ``mem_cost``."""
    start = start_params(isa, parallelism=parallelism)
    return dataclasses.replace(start, mem_cost=mem_cost, start_mem_cost=mem_cost)


def _twocats(params: Params, backend: str, runs: int) -> Timing:
    """Time verifications through a PasswordHasher, which reuses its work memory."""
    from twocats.hasher import PasswordHasher

    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes, backend=backend)
    encoded = hasher.hash(PASSWORD)
    return time_calls(lambda: hasher.verify(encoded, PASSWORD), runs)


def _twocats_fresh(params: Params, backend: str, runs: int) -> Timing:
    """Time derivations that each start from freshly allocated memory."""
    from twocats.kdf import Engine

    return time_calls(lambda: Engine(backend).derive(PASSWORD, SALT, params), runs)


def run_comparison(
    params: Params, backend: str, runs: int, report: Callable[[Row], None] = lambda row: None
) -> list[Row]:
    """Measure the rows of both comparisons for ``params``; ``report`` sees each row when done.

    The scrypt row of the equal-memory comparison is left out above :data:`SCRYPT_MAX_MEMORY`,
    which hashlib.scrypt refuses.
    """
    rows: list[Row] = []

    def add(comparison: str, algorithm: str, parameters: str, timing: Timing, size: int) -> None:
        rows.append(Row(comparison, algorithm, parameters, timing, size))
        report(rows[-1])

    size, threads = params.memory_bytes, params.parallelism
    label = f"m={params.mem_cost},l={params.lanes},p={threads},x={params.multiplies}"
    timing = _twocats(params, backend, runs)
    add("equal memory", "twocats", label, timing, size)
    # The same hash in fresh memory each time, as argon2-cffi and hashlib.scrypt always run: the
    # difference is the operating system's cost of mapping new pages.
    add("equal memory", "twocats-fresh-memory", label, _twocats_fresh(params, backend, runs), size)
    argon = time_calls(argon2id_call(size, threads), runs)
    add("equal memory", "argon2id", f"t=1,m={size // 1024},p={threads}", argon, size)
    if size <= SCRYPT_MAX_MEMORY:
        n = size // (128 * SCRYPT_R)
        scrypt = time_calls(scrypt_call(size), runs)
        add("equal memory", "scrypt", f"N=2^{n.bit_length() - 1},r=8,p=1", scrypt, size)
    add("equal time", "twocats", label, timing, size)
    memory, argon = argon2id_at_time(timing.wall.median, size, threads, runs)
    add("equal time", "argon2id", f"t=1,m={memory // 1024},p={threads}", argon, memory)
    n, scrypt = scrypt_at_time(timing.wall.median, runs)
    add("equal time", "scrypt", f"N=2^{n.bit_length() - 1},r=8,p=1", scrypt, 128 * SCRYPT_R * n)
    return rows


def attacker_comparison(
    params: Params,
    rows: list[Row],
    seeds: int = 2,
    report: Callable[[str], None] = lambda name: None,
) -> list[AttackerRow]:
    """The attacker's side of the equal-time rows: trade-off penalties at each measured memory.

    TwoCats (hybrid and side-channel-resistant) at ``params`` and argon2id and Argon2i at the
    memory argon2id filled in TwoCats' time (see :mod:`twocats.perf.tradeoff.attacker`).
    """
    from twocats.perf.tradeoff.attacker import attacker_rows

    equal_time = {row.algorithm: row for row in rows if row.comparison == "equal time"}
    return attacker_rows(
        params,
        equal_time["twocats"].memory_bytes,
        equal_time["argon2id"].memory_bytes,
        params.parallelism,
        range(seeds),
        report,
    )


def format_table(rows: list[Row], runs: int) -> str:
    """Return the rows as an aligned table: times in ms, memory in MiB, fill rates in GiB/s."""
    header = (
        "comparison",
        "algorithm",
        "parameters",
        "time ms",
        f"range of {runs} ms",
        "CPU ms",
        "memory MiB",
        "filled GiB/s",
    )
    table = [
        (
            row.comparison,
            row.algorithm,
            row.parameters,
            f"{row.seconds * 1000:.1f}",
            f"{row.timing.wall.fastest * 1000:.1f}-{row.timing.wall.slowest * 1000:.1f}",
            f"{row.timing.cpu.median * 1000:.1f}",
            f"{row.memory_bytes / (1 << 20):.1f}",
            f"{row.fill_rate / (1 << 30):.2f}",
        )
        for row in rows
    ]
    return aligned_table(header, table, left=3)
