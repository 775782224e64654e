"""TwoCats against argon2id and scrypt on this machine, at equal memory and at equal time.

Two comparisons, each as rows of time, memory and memory filled per second:

* **equal memory**: every algorithm hashes with the memory of TwoCats' parameters; the time shows
  what each costs the defender for it;
* **equal time**: every algorithm gets the time TwoCats takes, and uses as much memory as fits in
  it; the memory shows what each costs an attacker per guess for the same defender time.

Each library is used as a server would use it: TwoCats through :class:`~twocats.PasswordHasher`
with the parameters given (which reuses its work memory between calls; one more row shows
TwoCats in fresh memory each call, as the other two always run), and the peers of
:mod:`twocats.perf.peers`: argon2id with one pass and the same number of threads, scrypt with
``r=8, p=1``.

The measurement runs in two phases.  A calibration times TwoCats and finds the argon2id memory
and the scrypt ``N`` that take about its time.  Then every configuration is timed once per round,
in an order rotated from round to round, so that a disturbance of the machine during a round
hits all of them alike, by the wall clock and by the process's CPU time (all threads, user and
system: what a server pays per login, and what other jobs on a shared machine disturb least).
Each round gives one equal-time ratio, TwoCats' memory filled per CPU second over argon2id's,
which is the memory TwoCats fills over the memory argon2id fills in the same time; rounds go on
until that ratio's 95% confidence interval (:mod:`twocats.perf.interval`) is within
:data:`TARGET` of it, or until the time limit, which a busy machine may reach first.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from twocats._units import format_size
from twocats.exceptions import InvalidParametersError
from twocats.perf.interval import RatioInterval, ratio_interval
from twocats.perf.peers import (
    ARGON2_LEAST_KIB_PER_LANE,
    PASSWORD,
    SALT,
    SCRYPT_MAX_MEMORY,
    SCRYPT_R,
    Clock,
    Timing,
    argon2id_at_time,
    argon2id_call,
    scrypt_at_time,
    scrypt_call,
    time_call,
    time_calls,
)
from twocats.perf.samples import Samples
from twocats.perf.text_table import aligned_table

if TYPE_CHECKING:
    from twocats.params import Params
    from twocats.perf.tradeoff.attacker import Assumptions, AttackerRow

__all__ = [
    "CALIBRATION_RUNS",
    "MIN_ROUNDS",
    "TARGET",
    "TIME_LIMIT",
    "Comparison",
    "EqualTime",
    "Rounds",
    "Row",
    "attacker_comparison",
    "check_comparable",
    "format_equal_time",
    "format_table",
    "run_comparison",
    "run_rounds",
]

#: The equal-time ratio's 95% confidence interval is wanted within this share of it (±10%).
TARGET: Final = 0.10

#: The fewest rounds, whatever the interval.
MIN_ROUNDS: Final = 5

#: Seconds after which no further round starts, by default.
TIME_LIMIT: Final = 60.0

#: Timed calls of the calibration, per configuration tried.
CALIBRATION_RUNS: Final = 3

#: The clock the equal time is judged by (the wall clock's ratio is given beside it).
CLOCK: Final[Clock] = "cpu"


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
        """Bytes of memory filled per wall-clock second."""
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


@dataclasses.dataclass(frozen=True)
class EqualTime:
    """TwoCats' memory over the memory argon2id fills in the same time, on both clocks.

    ``cpu`` is the ratio the rounds ran for, ``wall`` the same rounds by the wall clock.
    """

    cpu: RatioInterval
    wall: RatioInterval
    twocats_memory: int
    target: float

    @property
    def argon2id_memory(self) -> int:
        """The memory argon2id fills in TwoCats' CPU time, in bytes (whole KiB)."""
        return max(1, round(self.twocats_memory / self.cpu.ratio / 1024)) * 1024

    @property
    def reached(self) -> bool:
        """Whether the interval came within the target."""
        return self.cpu.half_width <= self.target

    def document(self) -> dict[str, Any]:
        """The ratio as a JSON-ready dict."""
        return {
            "clock": CLOCK,
            **self.cpu.document(),
            "wall": self.wall.document(),
            "target": self.target,
            "reached": self.reached,
            "twocats_memory_bytes": self.twocats_memory,
            "argon2id_memory_bytes": self.argon2id_memory,
        }


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The rows of both comparisons and the equal-time ratio, from `rounds` rounds in `seconds`."""

    rows: list[Row]
    equal_time: EqualTime
    rounds: int
    seconds: float


@dataclasses.dataclass(frozen=True)
class _Contender:
    """A configuration timed in every round."""

    comparison: str
    algorithm: str
    parameters: str
    memory_bytes: int
    call: Callable[[], object]


def _label(params: Params) -> str:
    return (
        f"{params.hash_type},m={params.mem_cost},l={params.lanes},p={params.parallelism},"
        f"x={params.multiplies}"
    )


def _contenders(params: Params, backend: str) -> list[_Contender]:
    """TwoCats at `params` (reused and fresh memory), and the peers, calibrated to its time."""
    from twocats.kdf import Engine
    from twocats.password import PasswordHasher

    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes, backend=backend)
    encoded = hasher.hash(PASSWORD)

    def twocats() -> object:
        return hasher.verify(encoded, PASSWORD)

    def fresh() -> object:
        return Engine(backend).derive(PASSWORD, SALT, params)

    size, threads, label = params.memory_bytes, params.parallelism, _label(params)
    target = time_calls(twocats, CALIBRATION_RUNS).on(CLOCK).median
    argon_memory, _ = argon2id_at_time(target, size, threads, CALIBRATION_RUNS, clock=CLOCK)
    n, _ = scrypt_at_time(target, CALIBRATION_RUNS, clock=CLOCK)
    argon_label = f"t=1,m={{}},p={threads}"
    scrypt_label = "N=2^{},r=8,p=1"
    contenders = [
        _Contender("equal memory", "twocats", label, size, twocats),
        # The same hash in fresh memory each time, as argon2-cffi and hashlib.scrypt always run:
        # the difference is the operating system's cost of mapping new pages.
        _Contender("equal memory", "twocats-fresh-memory", label, size, fresh),
        _Contender(
            "equal memory",
            "argon2id",
            argon_label.format(size // 1024),
            size,
            argon2id_call(size, threads),
        ),
    ]
    if size <= SCRYPT_MAX_MEMORY:
        bits = (size // (128 * SCRYPT_R)).bit_length() - 1
        contenders.append(
            _Contender("equal memory", "scrypt", scrypt_label.format(bits), size, scrypt_call(size))
        )
    contenders += [
        _Contender(
            "equal time",
            "argon2id",
            argon_label.format(argon_memory // 1024),
            argon_memory,
            argon2id_call(argon_memory, threads),
        ),
        _Contender(
            "equal time",
            "scrypt",
            scrypt_label.format(n.bit_length() - 1),
            128 * SCRYPT_R * n,
            scrypt_call(128 * SCRYPT_R * n),
        ),
    ]
    return contenders


#: The shortest time a call is taken to last (a clock's resolution), so that no ratio divides by 0.
_TICK: Final = 1e-9


def _equal_time(
    mine: list[tuple[float, float]],
    theirs: list[tuple[float, float]],
    memory: tuple[int, int],
    target: float,
) -> EqualTime:
    """The equal-time ratio of the rounds so far: in each, TwoCats' fill rate over argon2id's.

    `mine` and `theirs` are the (wall, CPU) seconds of each round's TwoCats and argon2id calls,
    `memory` their memory in bytes.
    """
    wall, cpu = (
        ratio_interval(
            [
                (memory[0] / max(own[clock], _TICK)) / (memory[1] / max(peer[clock], _TICK))
                for own, peer in zip(mine, theirs, strict=True)
            ]
        )
        for clock in (0, 1)
    )
    return EqualTime(cpu, wall, memory[0], target)


@dataclasses.dataclass(frozen=True)
class Rounds:
    """When the rounds stop: `min_rounds`, `target` and `time_limit` (see :func:`run_rounds`)."""

    min_rounds: int = MIN_ROUNDS
    time_limit: float = TIME_LIMIT
    target: float = TARGET


def run_rounds(
    calls: Sequence[Callable[[], object]],
    pair: tuple[int, int],
    memory: tuple[int, int],
    rounds: Rounds,
    *,
    started: float,
    report: Callable[[EqualTime], None] = lambda equal_time: None,
    timer: Callable[[Callable[[], object]], tuple[float, float]] = time_call,
    now: Callable[[], float] = time.perf_counter,
) -> tuple[list[list[tuple[float, float]]], EqualTime]:
    """Time every call once per round, in an order rotated each round, until the rounds stop.

    `pair` indexes TwoCats' call and argon2id's equal-time call, and `memory` gives their memory
    in bytes.  Rounds go on while fewer than ``rounds.min_rounds`` (at least 2) have run or the
    equal-time ratio's interval is wider than ``rounds.target``, and stop before one that would
    end more than ``rounds.time_limit`` seconds after `started` (as `now` tells), though never
    before 2.  `report` sees the ratio after each round from the second on.  Returns the
    (wall, CPU) seconds of every call of every round, and the ratio.
    """
    times: list[list[tuple[float, float]]] = [[] for _ in calls]
    count = 0
    while True:
        began = now()
        for offset in range(len(calls)):
            index = (count + offset) % len(calls)
            times[index].append(timer(calls[index]))
        count += 1
        last_round = now() - began
        if count < 2:
            continue
        equal_time = _equal_time(times[pair[0]], times[pair[1]], memory, rounds.target)
        report(equal_time)
        if count >= rounds.min_rounds and equal_time.reached:
            return times, equal_time
        if now() + last_round - started > rounds.time_limit:
            return times, equal_time


def check_comparable(params: Params) -> None:
    """Refuse `params` whose memory is below argon2id's least at their parallelism."""
    least = ARGON2_LEAST_KIB_PER_LANE * 1024 * params.parallelism
    if params.memory_bytes < least:
        raise InvalidParametersError(
            f"compare needs at least {format_size(least)} of memory for {params.parallelism} "
            f"thread(s), argon2id's least at that parallelism; these parameters take "
            f"{format_size(params.memory_bytes)}"
        )


def run_comparison(
    params: Params,
    backend: str,
    rounds: Rounds = Rounds(),
    report: Callable[[EqualTime], None] = lambda equal_time: None,
) -> Comparison:
    """Measure both comparisons for `params` in rounds; `report` sees the ratio after each round.

    The rounds' time limit counts from the start of the calibration.  The scrypt row of the
    equal-memory comparison is left out above :data:`SCRYPT_MAX_MEMORY`, which hashlib.scrypt
    refuses.
    """
    check_comparable(params)
    started = time.perf_counter()
    contenders = _contenders(params, backend)
    argon = next(
        index
        for index, item in enumerate(contenders)
        if (item.comparison, item.algorithm) == ("equal time", "argon2id")
    )
    for contender in contenders:
        contender.call()
    times, equal_time = run_rounds(
        [item.call for item in contenders],
        (0, argon),
        (contenders[0].memory_bytes, contenders[argon].memory_bytes),
        rounds,
        started=started,
        report=report,
    )
    rows = [
        Row(
            item.comparison,
            item.algorithm,
            item.parameters,
            Timing(*(Samples(clock) for clock in zip(*measured, strict=True))),
            item.memory_bytes,
        )
        for item, measured in zip(contenders, times, strict=True)
    ]
    # TwoCats' own row opens the equal-time comparison too: the time the others are given.
    rows.insert(argon, dataclasses.replace(rows[0], comparison="equal time"))
    return Comparison(rows, equal_time, len(times[0]), time.perf_counter() - started)


def attacker_comparison(
    params: Params,
    equal_time: EqualTime,
    seeds: int = 2,
    report: Callable[[str], None] = lambda name: None,
    *,
    assumptions: Assumptions | None = None,
    seconds: float | None = None,
) -> list[AttackerRow]:
    """The attacker's side of the equal-time comparison: the best attack at each memory.

    TwoCats (hybrid and side-channel-resistant) at ``params`` and argon2id and Argon2i at the
    memory argon2id fills in TwoCats' time, from the rounds' ratio; ``assumptions`` about the
    attacker's hardware, and TwoCats' ``seconds`` for the multiply chain's bound (see
    :mod:`twocats.perf.tradeoff.attacker`).
    """
    from twocats.perf.tradeoff.attacker import attacker_rows

    return attacker_rows(
        params,
        equal_time.twocats_memory,
        equal_time.argon2id_memory,
        params.parallelism,
        range(seeds),
        report,
        assumptions=assumptions,
        seconds=seconds,
    )


def format_table(rows: list[Row], rounds: int) -> str:
    """Return the rows as an aligned table: times in ms, memory in MiB, fill rates in GiB/s."""
    header = (
        "comparison",
        "algorithm",
        "parameters",
        "time ms",
        f"range of {rounds} ms",
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


def format_equal_time(comparison: Comparison) -> list[str]:
    """Say what the equal-time ratio is, with its interval, in two lines."""
    ratio = comparison.equal_time
    cpu, wall = ratio.cpu, ratio.wall
    first = (
        f"Equal time: TwoCats fills {cpu.ratio:.2f}x the memory argon2id fills in the same CPU "
        f"time (95% interval {cpu.low:.2f}-{cpu.high:.2f}, ±{cpu.half_width:.1%}; "
        f"{comparison.rounds} interleaved rounds in {comparison.seconds:.1f} s)"
    )
    second = (
        f"            by the wall clock {wall.ratio:.2f}x ({wall.low:.2f}-{wall.high:.2f}); "
        f"argon2id fills {ratio.argon2id_memory / (1 << 20):.1f} MiB in TwoCats' time, TwoCats "
        f"{ratio.twocats_memory / (1 << 20):.1f} MiB"
    )
    return [first, second]
