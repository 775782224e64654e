"""``hash_many`` against a hashlib loop in memory, and the lane kernels' cycles per byte.

The in-memory half of ``python -m bench sum`` (:mod:`bench.lanes.sum` runs it after the file
trees): ``hash_many`` on the lognormal tree's contents and on 65,536 messages of 64 B with the
floor Python sets beside each list figure, and ``hash_many_fixed`` at 1 KiB and 8 KiB against
hashlib, the multi-buffer paper's figure and (at 8 KiB) the lane compression alone.  Everything
here runs on one thread and is timed in the process's CPU time, which other work on a shared
machine does not lengthen.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import numpy as np

from bench.harness import Report, clock_hz, measure_group
from twocats.hashes import by_name
from twocats.lanes import PRIMITIVES, hash_many, hash_many_array, hash_many_fixed
from twocats.lanes.primitives import DEFAULT_LANES

#: Seed of every generated file tree and message batch.
SEED: Final = 15

#: Goals of the issue in memory, one thread: (workload, algorithm, method) -> minimum ratio.
API_GOALS: Final = {
    ("lognormal", "sha256", "hash_many"): 1.5,
    **{("lognormal", name, "hash_many"): 3.0 for name in ("sha1", "sha512", "blake2s", "blake2b")},
    ("64 B", "sha256", "hash_many"): 3.0,
    ("64 B", "blake2s", "hash_many"): 3.0,
}

#: Algorithms timed in memory on the lognormal contents, and on 65,536 x 64 B.
LOGNORMAL_ALGORITHMS: Final = ("sha256", "sha1", "sha512", "blake2s", "blake2b")
SHORT_ALGORITHMS: Final = ("sha256", "blake2s")

#: The multi-buffer paper's 4-buffer SHA-256 figure, cycles per byte (2011 processor).
S_HASH_SHA256_CPB: Final = 5.2


def _floor(messages: list[bytes], size: int) -> list[bytes]:
    """What any list-returning call costs at least: a loop over the list building one bytes
    object of digest size per message."""
    return [message[:size] for message in messages]


def _api_group(
    report: Report,
    workload: str,
    messages: list[bytes],
    algorithm: str,
    calls: dict[str, Callable[[], object]],
    *,
    repeats: int,
    min_time: float,
    goals: bool,
) -> None:
    """Time a hashlib loop, the Python floor and ``calls`` in rotation; record their ratios."""
    constructor = getattr(hashlib, algorithm)
    expected = [constructor(m).digest() for m in messages]
    if hash_many(messages, algorithm) != expected:
        raise AssertionError(f"hash_many({algorithm}) disagrees with hashlib on {workload}")
    size = len(expected[0])
    group: dict[str, Callable[[], object]] = {
        "hashlib loop": lambda: [constructor(m).digest() for m in messages],
        "Python floor": partial(_floor, messages, size),
        **calls,
    }
    timings = measure_group(group, repeats=repeats, min_time=min_time, clock=time.process_time)
    nbytes = sum(map(len, messages))
    for method, timing in timings.items():
        report.record(
            f"{workload}/{algorithm}/{method}",
            timing,
            items=len(messages),
            nbytes=nbytes,
            workload=f"{workload}, {algorithm}",
            method=method,
            best_wall_s="",
            cpu_s="",
            cycles_per_byte="",
        )
    kind = "64 B" if workload.endswith("64 B") else "lognormal"
    for method in ("Python floor", *calls):
        report.ratio(
            f"{algorithm} {workload}, one thread: {method} / hashlib loop",
            faster=f"{workload}/{algorithm}/{method}",
            slower=f"{workload}/{algorithm}/hashlib loop",
            goal=API_GOALS.get((kind, algorithm, method)) if goals else None,
        )


def bench_api(
    report: Report,
    count: int,
    contents: list[bytes],
    repeats: int,
    min_time: float,
    goals: bool,
) -> None:
    """hash_many (and its array forms) against a hashlib loop and the Python floor, one thread,
    on ``contents`` (a tree's files) and on ``count`` messages of 64 B."""
    workload = f"{len(contents)} files' contents ({sum(map(len, contents)) / 1e6:.0f} MB)"
    for algorithm in LOGNORMAL_ALGORITHMS:
        _api_group(
            report,
            workload,
            contents,
            algorithm,
            {"hash_many": partial(hash_many, contents, algorithm)},
            repeats=repeats,
            min_time=min_time,
            goals=goals,
        )
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, 256, (count, 64), dtype=np.uint8)
    messages = [row.tobytes() for row in rows]
    for algorithm in SHORT_ALGORITHMS:
        expected = [hashlib.new(algorithm, m).digest() for m in messages]
        if [bytes(r) for r in hash_many_array(messages, algorithm)] != expected:
            raise AssertionError(f"hash_many_array({algorithm}) disagrees with hashlib")
        if [bytes(r) for r in hash_many_fixed(rows, algorithm)] != expected:
            raise AssertionError(f"hash_many_fixed({algorithm}) disagrees with hashlib")
        _api_group(
            report,
            f"{count} x 64 B",
            messages,
            algorithm,
            {
                "hash_many": partial(hash_many, messages, algorithm),
                "hash_many_array": partial(hash_many_array, messages, algorithm),
                "hash_many_fixed": partial(hash_many_fixed, rows, algorithm),
            },
            repeats=repeats,
            min_time=min_time,
            goals=goals,
        )


def _hashlib_each(constructor: Callable[[Any], Any], stream: bytes, size: int) -> None:
    """hashlib over ``stream`` cut into messages of ``size`` bytes, one by one."""
    view = memoryview(stream)
    for start in range(0, len(stream), size):
        constructor(view[start : start + size]).digest()


def _compression_alone(algorithm: str, nbytes: int) -> Callable[[], None]:
    """The simd lane compression alone on ``nbytes`` of blocks, every default lane busy on one
    block: beside ``hash_many_fixed``, the rest is what the scheduler adds (reading each block out
    of its message, padding, refilling lanes)."""
    from numba import njit

    facts = by_name(algorithm)
    lanes = DEFAULT_LANES[algorithm]
    module = importlib.import_module(f"twocats.lanes._generated.{algorithm}")
    compress = getattr(module, f"{algorithm}_lanes").get("simd")
    word = np.uint32 if facts.word_bits == 32 else np.uint64
    state = np.ones((8, lanes), dtype=word)
    block = np.arange(16 * lanes, dtype=word).reshape(16, lanes)
    counters = np.zeros(lanes, dtype=word)
    flags = np.zeros(lanes, dtype=word)
    steps = nbytes // (lanes * facts.block_bytes)

    @njit(nogil=True)
    def loop(H: Any, M: Any, T: Any, F: Any, n: int, count: int) -> None:
        for _ in range(count):
            compress(H, M, T, F, n)

    loop(state, block, counters, flags, lanes, 0)  # Compiled here, outside the timing.
    return partial(loop, state, block, counters, flags, lanes, steps)


def bench_cycles(report: Report, nbytes: int, repeats: int, min_time: float) -> None:
    """Cycles per byte per core at 1 KiB and 8 KiB: lanes against hashlib and the S-HASH figure."""
    hz = clock_hz()
    rng = np.random.default_rng(SEED)
    for size in (1024, 8192):
        rows = rng.integers(0, 256, (max(4, nbytes // size), size), dtype=np.uint8)
        stream = rows.tobytes()
        for algorithm in PRIMITIVES:
            constructor = getattr(hashlib, algorithm)
            if (
                bytes(hash_many_fixed(rows[:3], algorithm)[1])
                != constructor(rows[1].tobytes()).digest()
            ):
                raise AssertionError(f"hash_many_fixed({algorithm}) disagrees with hashlib")
            calls: dict[str, Callable[[], object]] = {
                "lanes (hash_many_fixed)": partial(hash_many_fixed, rows, algorithm),
                "hashlib, message by message": partial(_hashlib_each, constructor, stream, size),
            }
            if size == 8192:
                calls["lane compression alone"] = _compression_alone(algorithm, rows.size)
            timings = measure_group(
                calls, repeats=repeats, min_time=min_time, clock=time.process_time
            )
            cpb = {}
            for method, timing in timings.items():
                cpb[method] = None if hz is None else hz * timing.median / rows.size
                report.record(
                    f"cycles/{size}/{algorithm}/{method}",
                    timing,
                    nbytes=rows.size,
                    workload=f"{len(rows)} x {size // 1024} KiB, {algorithm}",
                    method=method,
                    best_wall_s="",
                    cpu_s="",
                    cycles_per_byte="" if hz is None else round(hz * timing.median / rows.size, 2),
                )
            report.ratio(
                f"{algorithm} {size // 1024} KiB, cycles per byte: hashlib / lanes",
                faster=f"cycles/{size}/{algorithm}/lanes (hash_many_fixed)",
                slower=f"cycles/{size}/{algorithm}/hashlib, message by message",
            )
            if "lane compression alone" in calls:
                report.ratio(
                    f"{algorithm} {size // 1024} KiB, cycles per byte: lanes / lane compression "
                    "alone (the scheduler's share is the rest)",
                    faster=f"cycles/{size}/{algorithm}/lane compression alone",
                    slower=f"cycles/{size}/{algorithm}/lanes (hash_many_fixed)",
                )
            lanes_cpb = cpb["lanes (hash_many_fixed)"]
            if lanes_cpb is not None:
                report.record_ratio(
                    f"{algorithm} {size // 1024} KiB, cycles per byte: S-HASH "
                    f"{S_HASH_SHA256_CPB} / lanes {lanes_cpb:.2f}",
                    S_HASH_SHA256_CPB / lanes_cpb,
                    faster=f"cycles/{size}/{algorithm}/lanes (hash_many_fixed)",
                    slower="S-HASH paper",
                    statistic="cycles per byte",
                )
    where = "unknown" if hz is None else f"{hz / 1e9:.2f} GHz"
    report.notes.append(
        f"Cycles per byte per core are seconds per byte times the clock rate /proc/cpuinfo "
        f"reports ({where}; a virtual machine may run faster or slower than it says).  The "
        f"multi-buffer (S-HASH) paper's 4-buffer SHA-256 reached about {S_HASH_SHA256_CPB} cycles "
        f"per byte on its 2011 processor; hashlib is OpenSSL (SHA-NI for SHA-256 and SHA-1 where "
        f"present)."
    )
