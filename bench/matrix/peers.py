"""TwoCats's peers on this machine: argon2id, scrypt, and the memory bandwidth that bounds them all.

Every rate is GB/s of work memory (10**9 bytes per second, memory size times passes over time), the
measure the TwoCats paper and the Argon2 specification use.  The physical ceiling is the machine's
own memory bandwidth measured with numpy: a 1 GiB ``np.copyto`` (bytes copied per second, one thread
and two threads on the two halves) and ``ndarray.fill`` (bytes written per second).  Each figure is
also given as a fraction of the copy rate with the same number of threads, because a memory-hard
fill, like a copy, reads and writes every byte.

* argon2id (argon2-cffi, ``hash_secret_raw``) at equal memory (t=1, the given size, p=1 and p=2),
  and at equal time: the memory argon2id fills with t=1 and p=1 in the time TwoCats takes for 1 GiB.
  argon2 allocates and maps its memory on every call, so the fair TwoCats figure for that column is
  the one with fresh memory.
* ``hashlib.scrypt`` with r=8, p=1 and N chosen so that 128·r·N equals the memory.

The peers are called and timed by :mod:`twocats.perf.peers`, as ``twocats compare`` times them.
* The cost of one TwoCats state hash ``Hv`` (one compression of 36 or 68 bytes) through hashlib, for
  the "where the time goes" breakdown.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import numpy as np

from twocats._machine import usable_cpus
from twocats.perf.peers import SCRYPT_R, argon2id_at_time, argon2id_call, scrypt_call, time_calls

__all__ = [
    "argon2id",
    "argon2id_equal_time",
    "bandwidth",
    "fraction",
    "hv_seconds",
    "run_peers",
    "scrypt",
    "timed",
]

GIB: Final = 1 << 30


def timed(call: Callable[[], object], repeats: int, warmup: int = 1) -> dict[str, Any]:
    """Time ``call`` with :func:`twocats.perf.peers.time_calls` (one call per repetition).

    Returns the seconds of each call, their median, the fastest and slowest, and the spread.
    """
    return time_calls(call, repeats, warmup).document()


def _rate(entry: dict[str, Any], nbytes: int) -> dict[str, Any]:
    entry["memory_bytes"] = nbytes
    entry["gbps"] = nbytes / entry["median_s"] / 1e9
    return entry


def bandwidth(nbytes: int = GIB, repeats: int = 5) -> dict[str, dict[str, Any]]:
    """Measure numpy copy (1 and 2 threads), fill and read over ``nbytes``-byte arrays, in GB/s.

    ``fresh_fill_1t`` fills a newly allocated array each time, so it includes the page faults.
    """
    words = nbytes // 8
    source = np.full(words, 0x0123456789ABCDEF, dtype=np.uint64)
    target = np.zeros(words, dtype=np.uint64)
    target.fill(1)
    half = words // 2
    halves = [(source[:half], target[:half]), (source[half:], target[half:])]
    with ThreadPoolExecutor(max_workers=2) as pool:

        def copy2() -> None:
            list(pool.map(lambda pair: np.copyto(pair[1], pair[0]), halves))

        def fill2() -> None:
            list(pool.map(lambda pair: pair[1].fill(7), halves))

        return {
            "copy_1t": _rate(timed(lambda: np.copyto(target, source), repeats), nbytes),
            "copy_2t": _rate(timed(copy2, repeats), nbytes),
            "fill_1t": _rate(timed(lambda: target.fill(7), repeats), nbytes),
            "fill_2t": _rate(timed(fill2, repeats), nbytes),
            "read_1t": _rate(timed(lambda: np.bitwise_xor.reduce(source), repeats), nbytes),
            "fresh_fill_1t": _rate(timed(lambda: _fresh_fill(words), repeats), nbytes),
        }


def _fresh_fill(words: int) -> None:
    """Write a freshly allocated array once: the fill rate including its page faults."""
    np.zeros(words, dtype=np.uint64).fill(7)


def fraction(gbps: float, ceilings: dict[str, dict[str, Any]], threads: int) -> float:
    """Return ``gbps`` as a fraction of the copy rate with the same number of threads (1 or 2)."""
    key = "copy_2t" if threads > 1 else "copy_1t"
    return gbps / float(ceilings[key]["gbps"])


def argon2id(
    memory_bytes: int, parallelism: int, repeats: int, time_cost: int = 1
) -> dict[str, Any]:
    """Time argon2id (argon2-cffi) with ``memory_bytes`` of memory; rate is memory · t / time."""
    entry = timed(argon2id_call(memory_bytes, parallelism, time_cost), repeats)
    entry.update(parallelism=parallelism, time_cost=time_cost)
    entry = _rate(entry, memory_bytes)
    entry["gbps"] *= time_cost
    return entry


def argon2id_equal_time(target_s: float, repeats: int, probe: dict[str, Any]) -> dict[str, Any]:
    """Find the memory argon2id (t=1, p=1) fills in ``target_s`` seconds and time it there.

    ``probe`` is an argon2id result at some memory; the search
    (:func:`twocats.perf.peers.argon2id_at_time`) starts from its memory and time.
    """
    memory, timing = argon2id_at_time(
        target_s, probe["memory_bytes"], 1, repeats, seconds=probe["median_s"]
    )
    entry = _rate({**timing.document(), "parallelism": 1, "time_cost": 1}, memory)
    entry["target_s"] = target_s
    return entry


def scrypt(memory_bytes: int, repeats: int) -> dict[str, Any]:
    """Time ``hashlib.scrypt`` with r=8, p=1 and N = memory / 1 KiB (128 · r bytes per N)."""
    entry = timed(scrypt_call(memory_bytes), repeats, warmup=0)
    entry.update(n=memory_bytes // (128 * SCRYPT_R), r=SCRYPT_R, p=1)
    return _rate(entry, memory_bytes)


def hv_seconds(digest_size: int = 32, calls: int = 200_000) -> float:
    """Return the seconds of one state hash ``Hv`` (digest + 4 bytes in) through hashlib.

    The loop's own overhead (the same loop over a no-op) is subtracted.
    """
    message = bytes(digest_size + 4)
    hasher = hashlib.blake2s if digest_size == 32 else hashlib.blake2b
    started = time.perf_counter()
    for _ in range(calls):
        hasher(message).digest()
    hashing = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(calls):
        bytes(message)
    overhead = time.perf_counter() - started
    return max(hashing - overhead, 0.0) / calls


def run_peers(
    *,
    memory_bytes: int = GIB,
    small_bytes: int = 16 << 20,
    twocats_seconds: float | None = None,
    repeats: int = 3,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure every peer at ``memory_bytes`` (and ``small_bytes``); see the module documentation.

    ``twocats_seconds`` (the TwoCats time for ``memory_bytes``) enables the equal-time argon2id run.
    """
    say = progress or (lambda message: None)
    say("peers: memory bandwidth ...")
    ceilings = bandwidth(memory_bytes, max(repeats, 5))
    say("peers: argon2id ...")
    argon = {
        "p1": argon2id(memory_bytes, 1, repeats),
        "p2": argon2id(memory_bytes, 2, repeats),
        "p1_small": argon2id(small_bytes, 1, max(repeats, 10)),
    }
    if twocats_seconds is not None:
        say("peers: argon2id at equal time ...")
        argon["equal_time"] = argon2id_equal_time(twocats_seconds, repeats, argon["p1"])
    say("peers: scrypt ...")
    scrypts = {
        "large": scrypt(memory_bytes, max(1, repeats - 1)),
        "small": scrypt(small_bytes, max(repeats, 10)),
    }
    return {
        "memory_bytes": memory_bytes,
        "small_bytes": small_bytes,
        "bandwidth": ceilings,
        "argon2id": argon,
        "scrypt": scrypts,
        "hv_seconds": {"blake2s": hv_seconds(32), "blake2b": hv_seconds(64)},
        "cpus": usable_cpus(),
    }
