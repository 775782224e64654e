"""``twocats compare``: TwoCats against argon2id and scrypt on this machine.

Two comparisons, each as rows of time, memory and memory filled per second:

* **equal memory**: every algorithm hashes with the same memory; the time shows what each costs the
  defender for it;
* **equal time**: every algorithm gets the time TwoCats took, and uses as much memory as fits in it;
  the memory shows what each costs an attacker per guess for the same defender time.

Each library is used as a server would use it: TwoCats through :class:`~twocats.PasswordHasher`
(which reuses its work memory between calls; one more row shows TwoCats in fresh memory each call,
as the other two always run), argon2id through argon2-cffi's ``hash_secret_raw``
with one pass (``t=1``, the setting of RFC 9106's first recommendation) and the same number of
threads, scrypt through :func:`hashlib.scrypt` with ``r=8, p=1``.  Every time is the median of
``--runs`` calls after a warm-up call, shown with the fastest and slowest of those calls (the spread
between runs); the CPU time (all threads, user and system) is shown beside the wall-clock time
because on a busy machine a multi-threaded hash can wait for cores.  Every option, ``--plot``'s
need for matplotlib included, is checked before anything is measured.
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import click

from twocats.cli._common import UsageFailure, emit_json, info, progress_wanted
from twocats.cli._compare_plot import check_plot_target, plot_rows
from twocats.cli._options import SIZE, backend_option, json_option

if TYPE_CHECKING:
    from twocats.params import Params

__all__ = ["compare_command"]

_SALT: Final = b"twocats compare!"
_PASSWORD: Final = b"correct horse battery staple"

#: hashlib.scrypt refuses a maxmem of 2**31 - 1 bytes or more.
SCRYPT_MAX_MEMORY: Final = (1 << 31) - (1 << 21)

#: scrypt's block-size parameter: the memory is 128 * r * N bytes.
SCRYPT_R: Final = 8


@dataclasses.dataclass(frozen=True)
class Timing:
    """Median wall-clock and CPU seconds (all threads of the process, user and system) of a call.

    ``fastest`` and ``slowest`` are the extremes of the wall-clock times: the spread between runs.
    """

    seconds: float
    cpu_seconds: float
    fastest: float
    slowest: float


@dataclasses.dataclass
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
        return self.timing.seconds

    @property
    def fill_rate(self) -> float:
        """Bytes of memory filled per second."""
        return self.memory_bytes / self.seconds

    def document(self) -> dict[str, Any]:
        return {
            "comparison": self.comparison,
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "seconds": self.seconds,
            "fastest_seconds": self.timing.fastest,
            "slowest_seconds": self.timing.slowest,
            "cpu_seconds": self.timing.cpu_seconds,
            "memory_bytes": self.memory_bytes,
            "memory_filled_per_second": self.fill_rate,
        }


def _median_time(call: Callable[[], object], runs: int) -> Timing:
    """Time `runs` calls after one warm-up call; return the medians."""
    call()
    walls = []
    cpus = []
    for _ in range(runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu_started)
    return Timing(statistics.median(walls), statistics.median(cpus), min(walls), max(walls))


def _twocats(params: Params, backend: str, runs: int) -> Timing:
    """Time verifications through a PasswordHasher, which reuses its work memory."""
    from twocats.hasher import PasswordHasher

    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes, backend=backend)
    encoded = hasher.hash(_PASSWORD)
    return _median_time(lambda: hasher.verify(encoded, _PASSWORD), runs)


def _twocats_fresh(params: Params, backend: str, runs: int) -> Timing:
    """Time derivations that each start from freshly allocated memory."""
    from twocats.kdf import Engine

    def call() -> object:
        return Engine(backend).derive(_PASSWORD, _SALT, params)

    return _median_time(call, runs)


def _argon2(memory_kib: int, parallelism: int, runs: int) -> Timing:
    from argon2.low_level import Type, hash_secret_raw

    def call() -> object:
        return hash_secret_raw(
            _PASSWORD,
            _SALT,
            time_cost=1,
            memory_cost=memory_kib,
            parallelism=parallelism,
            hash_len=32,
            type=Type.ID,
        )

    return _median_time(call, runs)


def _scrypt(n: int, runs: int) -> Timing:
    memory = 128 * SCRYPT_R * n

    def call() -> object:
        return hashlib.scrypt(
            _PASSWORD, salt=_SALT, n=n, r=SCRYPT_R, p=1, maxmem=memory + (1 << 20), dklen=32
        )

    return _median_time(call, runs)


def _argon2_at_time(
    target: float, start_kib: int, parallelism: int, runs: int
) -> tuple[int, Timing]:
    """Return (memory KiB, timing) of argon2id t=1 taking about `target` seconds."""
    memory = start_kib
    timing = _argon2(memory, parallelism, runs)
    for _ in range(3):
        # The time grows linearly with memory; correct the memory by the ratio of the times.
        scaled = max(8 * parallelism, int(memory * target / timing.seconds))
        if abs(scaled - memory) <= memory // 50:
            break
        memory = scaled
        timing = _argon2(memory, parallelism, runs)
    return memory, timing


def _scrypt_at_time(target: float, runs: int) -> tuple[int, Timing]:
    """Return (N, timing) for the largest power-of-two N whose scrypt time fits in `target`."""
    n = 1 << 10
    timing = _scrypt(n, runs)
    while 128 * SCRYPT_R * 2 * n <= SCRYPT_MAX_MEMORY and 2 * timing.seconds <= 1.3 * target:
        doubled = _scrypt(2 * n, runs)
        if doubled.seconds > target:
            break
        n, timing = 2 * n, doubled
    return n, timing


@click.command("compare")
@click.option(
    "--memory",
    type=SIZE,
    default="256MiB",
    show_default=True,
    help="Memory of the equal-memory comparison (rounded down to a power of two KiB).",
)
@click.option(
    "--parallelism",
    type=click.IntRange(1, 255),
    default=2,
    show_default=True,
    help="Threads for TwoCats and argon2id (scrypt's hashlib runs its p serially; p=1 is used).",
)
@click.option(
    "--runs", type=click.IntRange(1, 50), default=3, show_default=True, help="Timed runs per row."
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also draw the two comparisons into this PNG file (needs matplotlib).",
)
@backend_option
@json_option
def compare_command(
    memory: int,
    parallelism: int,
    runs: int,
    plot: str | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Compare TwoCats with argon2id and scrypt at equal memory and at equal time."""
    from twocats.cli._machine import busy_note, cpu_count, lanes_for_isa, load_average
    from twocats.params import Params
    from twocats.simd.registry import resolve_backend, simd_isa

    mem_cost = (memory // 1024).bit_length() - 1
    if mem_cost < 10:
        raise UsageFailure("--memory must be at least 1MiB")
    if plot is not None:
        check_plot_target(plot)
    resolved = resolve_backend(backend)
    lanes = lanes_for_isa(simd_isa()) if resolved == "simd" else 8
    params = Params(
        hash_type="blake2b" if lanes > 8 else "blake2s",
        mem_cost=mem_cost,
        lanes=lanes,
        parallelism=parallelism,
    )
    size = params.memory_bytes
    verbose = progress_wanted()
    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        if verbose:
            milliseconds = row.seconds * 1000
            info(f"  {row.comparison}: {row.algorithm} {row.parameters}: {milliseconds:.1f} ms")

    twocats_label = f"m={mem_cost},l={lanes},p={parallelism},x={params.multiplies}"
    timing = _twocats(params, resolved, runs)
    add(Row("equal memory", "twocats", twocats_label, timing, size))
    # The same hash in fresh memory each time, as argon2-cffi and hashlib.scrypt always run: the
    # difference is the operating system's cost of mapping new pages.
    add(
        Row(
            "equal memory",
            "twocats-fresh-memory",
            twocats_label,
            _twocats_fresh(params, resolved, runs),
            size,
        )
    )
    add(
        Row(
            "equal memory",
            "argon2id",
            f"t=1,m={size // 1024},p={parallelism}",
            _argon2(size // 1024, parallelism, runs),
            size,
        )
    )
    if size <= SCRYPT_MAX_MEMORY:
        n = size // (128 * SCRYPT_R)
        label = f"N=2^{n.bit_length() - 1},r=8,p=1"
        add(Row("equal memory", "scrypt", label, _scrypt(n, runs), size))
    elif verbose:
        info("  equal memory: scrypt skipped (hashlib.scrypt allows less than 2 GiB)")
    add(Row("equal time", "twocats", twocats_label, timing, size))
    kib, argon_timing = _argon2_at_time(timing.seconds, size // 1024, parallelism, runs)
    add(Row("equal time", "argon2id", f"t=1,m={kib},p={parallelism}", argon_timing, kib * 1024))
    n, scrypt_timing = _scrypt_at_time(timing.seconds, runs)
    add(
        Row(
            "equal time",
            "scrypt",
            f"N=2^{n.bit_length() - 1},r=8,p=1",
            scrypt_timing,
            128 * SCRYPT_R * n,
        )
    )
    load = load_average()
    if plot is not None:
        plot_rows(rows, plot, runs, load)
    if as_json:
        emit_json(
            {
                "backend": resolved,
                "runs": runs,
                "load_average": load,
                "rows": [row.document() for row in rows],
            }
        )
        return
    _print_table(rows, runs)
    if load is not None and load > cpu_count():
        info(f"note: {busy_note(load)}")
    if plot is not None:
        info(f"plot written to {plot}")


def _print_table(rows: list[Row], runs: int) -> None:
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
            f"{row.timing.fastest * 1000:.1f}-{row.timing.slowest * 1000:.1f}",
            f"{row.timing.cpu_seconds * 1000:.1f}",
            f"{row.memory_bytes / (1 << 20):.1f}",
            f"{row.fill_rate / (1 << 30):.2f}",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *table)) for i in range(len(header))]
    for line in (header, *table):
        cells = [
            cell.ljust(width) if index < 3 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        click.echo("  ".join(cells).rstrip())
