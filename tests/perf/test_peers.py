"""twocats.perf.peers: the one timing loop of compare and bench, and the peers' calls."""

from __future__ import annotations

import hashlib

from argon2.low_level import Type, hash_secret_raw

from twocats.perf.peers import (
    PASSWORD,
    SALT,
    Timing,
    argon2id_at_time,
    argon2id_call,
    scrypt_call,
    time_call,
    time_calls,
)
from twocats.perf.samples import Samples


def test_time_calls_warms_up_then_times_one_call_per_run() -> None:
    """time_calls makes the warm-up calls untimed, then one timed call per run."""
    calls: list[int] = []
    timing = time_calls(lambda: calls.append(1), runs=4, warmup=2)
    assert len(calls) == 6
    assert len(timing.wall.values) == len(timing.cpu.values) == 4


def test_timing_figures_are_medians_and_extremes() -> None:
    """The wall-clock and CPU medians, the wall-clock extremes, and the document of them."""
    timing = Timing(wall=Samples((0.3, 0.1, 0.2)), cpu=Samples((0.5, 0.4, 0.6)))
    assert (timing.wall.median, timing.cpu.median) == (0.2, 0.5)
    assert (timing.wall.fastest, timing.wall.slowest) == (0.1, 0.3)
    assert timing.document() == {
        "times_s": [0.3, 0.1, 0.2], "median_s": 0.2, "min_s": 0.1, "max_s": 0.3,
        "spread": (0.3 - 0.1) / 0.2,
    }  # fmt: skip


def test_the_peer_calls_hash_as_the_libraries_do() -> None:
    """argon2id_call and scrypt_call give the libraries' own outputs for their parameters."""
    argon = hash_secret_raw(
        PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=2, hash_len=32, type=Type.ID
    )
    assert argon2id_call(64 * 1024, 2)() == argon
    scrypt = hashlib.scrypt(PASSWORD, salt=SALT, n=128, r=8, p=1, dklen=32)
    assert scrypt_call(128 * 1024)() == scrypt


def test_argon2id_at_time_returns_whole_kib_and_its_timing() -> None:
    """The equal-time search answers a whole number of KiB, at least 8 per thread, with runs."""
    memory, timing = argon2id_at_time(1e-9, 1 << 20, 2, runs=2, seconds=0.01)
    assert memory == 16 * 1024
    assert len(timing.wall.values) == 2


def test_a_timing_is_read_on_either_clock() -> None:
    """on("wall") and on("cpu") are the two series, and time_call gives one of each."""
    timing = Timing(wall=Samples((0.3,)), cpu=Samples((0.5,)))
    assert (timing.on("wall"), timing.on("cpu")) == (timing.wall, timing.cpu)
    wall, cpu = time_call(lambda: sum(range(1000)))
    assert wall > 0
    assert cpu >= 0


def test_argon2id_at_time_follows_the_clock_asked_for() -> None:
    """On the CPU clock the search corrects by the CPU median, to a whole number of KiB."""
    memory, timing = argon2id_at_time(1e-9, 1 << 20, 2, runs=2, seconds=0.01, clock="cpu")
    assert memory == 16 * 1024
    assert len(timing.cpu.values) == 2
