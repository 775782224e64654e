"""twocats.perf.compare: the interleaved rounds and when they stop, on a model machine's timer."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from twocats.perf.compare import EqualTime, Rounds, run_rounds


class ModelMachine:
    """A timer and a clock: each call takes its seconds (both clocks), times a noise factor.

    The clock advances by every timed call, so time limits apply as on a real machine.
    """

    def __init__(self, seconds: dict[Callable[[], object], float], noise: Iterator[float]) -> None:
        self.seconds = seconds
        self.noise = noise
        self.clock = 0.0
        self.order: list[Callable[[], object]] = []

    def timer(self, call: Callable[[], object]) -> tuple[float, float]:
        took = self.seconds[call] * next(self.noise)
        self.clock += took
        self.order.append(call)
        return took, took

    def now(self) -> float:
        return self.clock


def _calls(count: int) -> list[Callable[[], object]]:
    return [lambda: None for _ in range(count)]


def _steady() -> Iterator[float]:
    while True:
        yield 1.0


def _noisy() -> Iterator[float]:
    while True:
        yield from (1.0, 1.6, 0.7, 1.3)


def test_steady_rounds_stop_at_the_fewest_with_the_exact_ratio() -> None:
    """Without noise the interval is exact at once: min_rounds rounds, and the model's ratio."""
    calls = _calls(3)
    machine = ModelMachine({calls[0]: 0.1, calls[1]: 0.5, calls[2]: 0.2}, _steady())
    seen: list[int] = []
    times, equal_time = run_rounds(
        calls,
        (0, 2),
        (256 << 10, 128 << 10),
        Rounds(min_rounds=4, time_limit=100.0),
        started=0.0,
        report=lambda ratio: seen.append(ratio.cpu.rounds),
        timer=machine.timer,
        now=machine.now,
    )
    assert [len(series) for series in times] == [4, 4, 4]
    assert seen == [2, 3, 4]
    # TwoCats fills 256 in 0.1 s, argon2id 128 in 0.2 s: 4 times the rate, and so the memory.
    assert equal_time.cpu.ratio == pytest.approx(4.0)
    assert equal_time.reached
    assert equal_time.argon2id_memory == 64 << 10


def test_the_order_rotates_from_round_to_round() -> None:
    """Each round starts one call later than the last, so no call always follows another."""
    calls = _calls(3)
    machine = ModelMachine(dict.fromkeys(calls, 0.1), _steady())
    run_rounds(
        calls, (0, 1), (1, 1), Rounds(min_rounds=3), started=0.0,
        timer=machine.timer, now=machine.now,
    )  # fmt: skip
    firsts = [machine.order[index] for index in range(0, 9, 3)]
    assert firsts == calls


def _noisy_pair(
    rounds: Rounds, report: Callable[[EqualTime], None] = lambda ratio: None
) -> tuple[list[list[tuple[float, float]]], EqualTime, ModelMachine]:
    """Rounds of two calls of equal cost on a noisy model machine."""
    calls = _calls(2)
    machine = ModelMachine({calls[0]: 0.1, calls[1]: 0.1}, _noisy())
    times, equal_time = run_rounds(
        calls, (0, 1), (1024, 1024), rounds, started=0.0, report=report,
        timer=machine.timer, now=machine.now,
    )  # fmt: skip
    return times, equal_time, machine


def test_noise_keeps_the_rounds_going_until_the_interval_is_narrow() -> None:
    """Noisy rounds go on past min_rounds until the interval is within the target."""
    seen: list[float] = []
    times, equal_time, _ = _noisy_pair(
        Rounds(min_rounds=2, time_limit=1e9), lambda ratio: seen.append(ratio.cpu.half_width)
    )
    assert len(times[0]) > 2
    assert equal_time.reached
    assert equal_time.cpu.half_width <= 0.1
    # One round fewer was not within the target yet.
    assert seen[-1] <= 0.1 < seen[-2]


def test_the_time_limit_stops_a_noisy_run_after_two_rounds_at_least() -> None:
    """A limit already passed still gives two rounds, and an interval wider than the target."""
    times, equal_time, _ = _noisy_pair(Rounds(min_rounds=5, time_limit=0.0))
    assert len(times[0]) == 2
    assert not equal_time.reached


def test_the_time_limit_starts_no_round_that_would_end_after_it() -> None:
    """With 1 s of rounds of 0.2 s each, the rounds stop before one would end past the limit."""
    times, _, machine = _noisy_pair(Rounds(min_rounds=100, time_limit=1.0))
    assert machine.clock <= 1.0 + 0.4
    assert len(times[0]) >= 2
