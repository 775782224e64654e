"""Child process of ``python -m bench compile``: compiles or times kernels of one source tree.

Run as a file (``python bench/startup/compile_worker.py MODE``), never as ``-m``, so that the
``twocats`` it imports is the tree on ``PYTHONPATH``: the suite runs one worker on the checked-out
tree and one on an exported older commit, side by side.  It uses only the public API that every
commit has (``twocats.kdf.derive`` and ``hash_many_fixed``, from ``twocats.lanes`` or, in commits
older than that package, ``twocats.simd``), so the same worker measures old and new code alike.

Modes:

``cold``
    Compile the kernels of :data:`COLD_STEPS` one after another into the (empty) cache of
    ``$TWOCATS_CACHE_DIR`` and print one JSON document: per step the seconds of its first call less
    its second (the compile time a user meets in that order), and per compiled numba function the
    seconds spent in its own compilation (its callees' compilations excluded).
``serve``
    Read cell names from stdin, one per line; time one repetition of each and answer one JSON line
    ``{"cpu": seconds, "wall": seconds}`` per call (see :data:`HOT_CELLS`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

#: The compile steps of a cold run, in the order a user meets them: the default profile's fill,
#: the other lane counts and hash types, the 2014-03 variant, then the lane hashes.
COLD_STEPS: tuple[str, ...] = (
    "fill:2015:blake2s:8",
    "fill:2015:blake2s:1",
    "fill:2015:blake2s:2",
    "fill:2015:blake2s:4",
    "fill:2015:blake2b:16",
    "fill:2015:blake2b:8",
    "fill:2015:sha256:8",
    "fill:2015:sha512:16",
    "fill:2014-03:blake2s:8",
    "many:blake2s",
    "many:blake2b",
    "many:sha256",
    "many:sha512",
)

#: The headline cells timed side by side: fill 1 GiB (derive on a reused buffer, multiplies 2)
#: and ``hash_many_fixed`` of 65,536 messages of 64 bytes.
HOT_CELLS: tuple[str, ...] = (
    "fill:blake2s:8:1",
    "fill:blake2s:8:2",
    "fill:blake2b:16:1",
    "fill:blake2b:16:2",
    "many:blake2s",
    "many:sha256",
)

# Each hash_many repetition loops for at least this long (one fill of 1 GiB is longer).
_MIN_SECONDS = 0.25


def _fill_call(variant: str, hash_type: str, lanes: int, mem_cost: int, parallelism: int) -> Any:
    from twocats import kdf
    from twocats.params import Params

    options: dict[str, Any] = {}
    if variant == "2014-03":
        options["sub_block_size"] = 32 * lanes
    params = Params(
        variant=variant,
        hash_type=hash_type,
        lanes=lanes,
        mem_cost=mem_cost,
        parallelism=parallelism,
        multiplies=2,
        **options,
    )
    return lambda: kdf.derive(b"password", b"salt", params)


def _many_call(algorithm: str, count: int) -> Callable[[], object]:
    import numpy as np

    try:
        from twocats.lanes import hash_many_fixed
    except ImportError:  # a commit older than twocats.lanes
        from twocats.simd import hash_many_fixed

    rows = np.random.default_rng(1).integers(0, 256, (count, 64), dtype=np.uint8)
    return lambda: hash_many_fixed(rows, algorithm)


def _cold_call(step: str) -> Callable[[], object]:
    kind, *rest = step.split(":")
    if kind == "fill":
        variant, hash_type, lanes = rest
        return _fill_call(variant, hash_type, int(lanes), 8, 1)
    return _many_call(rest[0], 4)


def _profile_compiles(log: dict[str, float]) -> None:
    """Record each numba function's own compile seconds (callees excluded) into ``log``."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.compile
    stack: list[float] = []

    def compile_timed(self: Any, sig: Any) -> Any:
        start = time.perf_counter()
        stack.append(0.0)
        try:
            return original(self, sig)
        finally:
            took = time.perf_counter() - start
            inner = stack.pop()
            if stack:
                stack[-1] += took
            name = getattr(self.py_func, "__qualname__", str(self.py_func))
            log[name] = log.get(name, 0.0) + took - inner

    Dispatcher.compile = compile_timed  # type: ignore[method-assign]


def cold() -> dict[str, Any]:
    """Compile every step of :data:`COLD_STEPS` in order; see the module documentation."""
    started = time.perf_counter()
    import twocats.kdf  # noqa: F401  (the import itself is not a compile)

    functions: dict[str, float] = {}
    _profile_compiles(functions)
    steps = []
    for step in COLD_STEPS:
        call = _cold_call(step)
        cpu, wall = time.process_time(), time.perf_counter()
        call()
        first_cpu, first_wall = time.process_time() - cpu, time.perf_counter() - wall
        cpu, wall = time.process_time(), time.perf_counter()
        call()
        again_cpu, again_wall = time.process_time() - cpu, time.perf_counter() - wall
        steps.append(
            {
                "step": step,
                "wall_s": max(0.0, first_wall - again_wall),
                "cpu_s": max(0.0, first_cpu - again_cpu),
            }
        )
    return {
        "steps": steps,
        "functions": dict(sorted(functions.items(), key=lambda item: -item[1])),
        "total_s": time.perf_counter() - started,
    }


def _hot_call(cell: str) -> Callable[[], object]:
    kind, *rest = cell.split(":")
    if kind == "fill":
        hash_type, lanes, parallelism = rest
        return _fill_call("2015", hash_type, int(lanes), 20, int(parallelism))
    return _many_call(rest[0], 65536)


def serve() -> None:
    """Answer timing requests from stdin; see the module documentation."""
    calls: dict[str, Callable[[], object]] = {}
    for line in sys.stdin:
        cell = line.strip()
        if not cell:
            continue
        call = calls.get(cell)
        if call is None:
            call = calls[cell] = _hot_call(cell)
            call()
        runs = 0
        cpu, wall = time.process_time(), time.perf_counter()
        while True:
            call()
            runs += 1
            if time.perf_counter() - wall >= _MIN_SECONDS:
                break
        answer = {
            "cpu": (time.process_time() - cpu) / runs,
            "wall": (time.perf_counter() - wall) / runs,
        }
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Run the mode named by ``argv[0]``."""
    if argv[:1] == ["cold"]:
        sys.stdout.write(json.dumps(cold()) + "\n")
        return 0
    if argv[:1] == ["serve"]:
        serve()
        return 0
    sys.stderr.write("usage: compile_worker.py cold | serve\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
