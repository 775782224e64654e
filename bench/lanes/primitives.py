"""Multi-buffer hashing against hashlib loops, and the simd backend against the scalar one.

``python -m bench primitives [--repeats N] [--min-time S] [--algorithms a,b] [--out DIR]`` measures,
side by side in one process (each row timed in rotation with the others of its group):

* a ``hashlib`` loop (``[hashlib.blake2s(m).digest() for m in messages]``, the fastest hashlib
  spelling) over 65,536 messages of 64 bytes and over 8,192 messages of 1 KiB;
* ``hash_many`` on the same list of bytes (simd backend, default lanes), everything included:
  joining the messages, the compiled lane scheduler, and building the list of digests;
* ``hash_many_fixed`` on the same messages as one 2-D uint8 array (digests as an array);
* both again with the batch split over two threads (the hashlib loop stays on one);
* the simd and the scalar backend at 16 lanes (through ``hash_many_fixed``).

Reported ratios: hash_many / hashlib, hash_many_fixed / hashlib and simd / scalar, with the goals
of issue 2 where it sets one.  ``--smoke`` runs tiny batches once and checks the digests only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from bench.harness import Report, measure_group, print_markdown, run_suite, suite_parser
from twocats.lanes import hash_many, hash_many_fixed

ALGORITHMS = ("blake2s", "sha256", "blake2b", "sha512")

#: Workload name -> (number of messages, message size in bytes).
WORKLOADS = {"64 B": (65536, 64), "1 KiB": (8192, 1024)}
SMOKE_WORKLOADS = {"64 B": (40, 64), "1 KiB": (5, 1024)}

#: Goals of issue 2: (workload, algorithm) -> minimum hash_many / hashlib ratio.
GOALS = {
    ("64 B", "blake2s"): 10.0,
    ("64 B", "sha256"): 5.0,
    ("1 KiB", "blake2s"): 5.0,
    ("1 KiB", "sha256"): 1.5,
}
#: Goal of issue 2 for simd over scalar at 16 lanes.
SIMD_GOAL = 3.0
COMPARE_LANES = 16
#: Thread count of the threaded rows (the hashlib loop stays on one thread).
THREADS = 2


def _messages(count: int, size: int, seed: int) -> tuple[list[bytes], np.ndarray]:
    rows = np.random.default_rng(seed).integers(0, 256, (count, size), dtype=np.uint8)
    return [row.tobytes() for row in rows], rows


def _calls(
    messages: list[bytes], rows: np.ndarray, algorithm: str
) -> dict[str, Callable[[], object]]:
    """The measured callables of one algorithm and workload."""
    constructor = getattr(hashlib, algorithm)

    def hashlib_loop() -> object:
        return [constructor(m).digest() for m in messages]

    def many() -> object:
        return hash_many(messages, algorithm)

    def fixed() -> object:
        return hash_many_fixed(rows, algorithm)

    def many_threads() -> object:
        return hash_many(messages, algorithm, threads=THREADS)

    def fixed_threads() -> object:
        return hash_many_fixed(rows, algorithm, threads=THREADS)

    def simd16() -> object:
        return hash_many_fixed(rows, algorithm, backend="simd", lanes=COMPARE_LANES)

    def scalar16() -> object:
        return hash_many_fixed(rows, algorithm, backend="scalar", lanes=COMPARE_LANES)

    return {
        "hashlib": hashlib_loop,
        "hash_many": many,
        "hash_many_fixed": fixed,
        f"hash_many_{THREADS}t": many_threads,
        f"hash_many_fixed_{THREADS}t": fixed_threads,
        "simd16": simd16,
        "scalar16": scalar16,
    }


def run(
    workloads: dict[str, tuple[int, int]],
    algorithms: Sequence[str],
    *,
    repeats: int,
    min_time: float,
    goals: bool = True,
) -> Report:
    """Measure every workload and algorithm; return the report (digests are checked first).

    ``goals`` attaches the issue's goals to the ratios (meaningless for smoke-sized batches).
    """
    report = Report("primitives", "Multi-buffer hashing: hash_many vs hashlib, simd vs scalar")
    for w, (workload, (count, size)) in enumerate(workloads.items()):
        messages, rows = _messages(count, size, seed=w)
        for algorithm in algorithms:
            expected = [hashlib.new(algorithm, m).digest() for m in messages]
            if hash_many(messages, algorithm) != expected:
                raise AssertionError(f"hash_many({algorithm}) disagrees with hashlib")
            fixed = hash_many_fixed(rows, algorithm)
            if [bytes(r) for r in fixed] != expected:
                raise AssertionError(f"hash_many_fixed({algorithm}) disagrees with hashlib")

            calls = _calls(messages, rows, algorithm)
            timings = measure_group(calls, repeats=repeats, min_time=min_time)
            report.record_group(
                timings,
                key=f"{workload}/{algorithm}",
                items=count,
                nbytes=count * size,
                workload=f"{count} x {workload}",
                algorithm=algorithm,
            )
            report.ratio_group(
                f"{algorithm} {count} x {workload}",
                f"{workload}/{algorithm}",
                [
                    (
                        "hash_many / hashlib loop",
                        "hash_many",
                        "hashlib",
                        GOALS.get((workload, algorithm)) if goals else None,
                    ),
                    ("hash_many_fixed / hashlib loop", "hash_many_fixed", "hashlib", None),
                    *(
                        (
                            f"{api} on {THREADS} threads / hashlib loop",
                            f"{api}_{THREADS}t",
                            "hashlib",
                            None,
                        )
                        for api in ("hash_many", "hash_many_fixed")
                    ),
                    (
                        f"simd / scalar at {COMPARE_LANES} lanes",
                        "simd16",
                        "scalar16",
                        SIMD_GOAL if goals else None,
                    ),
                ],
            )
    report.notes.append(
        "hash_many includes joining the message list, the compiled scheduler and building the "
        "list of digest bytes; hash_many_fixed takes and returns arrays."
    )
    report.notes.append(
        "All rows of one algorithm and workload were timed in rotation in one process; ratios "
        f"compare medians.  One thread, except the rows marked {THREADS}t (hashlib: one thread)."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/primitives.{json,md}."""
    parser = suite_parser("primitives", __doc__, repeats=7, min_time=0.05)
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    return run_suite(
        parser,
        argv,
        smoke,
        lambda args: run(
            WORKLOADS,
            [a for a in args.algorithms.split(",") if a],
            repeats=args.repeats,
            min_time=args.min_time,
        ),
    )


def smoke() -> int:
    """Run every measurement once on tiny batches; checks digests, asserts no timing."""
    return print_markdown(run(SMOKE_WORKLOADS, ALGORITHMS, repeats=1, min_time=0.0, goals=False))
