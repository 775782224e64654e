"""Concurrent load: many threads hashing, verifying, deriving and lane hashing at once."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from twocats import kdf
from twocats.exceptions import VerifyMismatchError
from twocats.kdf.engine import Engine
from twocats.kdf.fill.family import fill_variants
from twocats.kdf.words import address as address_of
from twocats.lanes import PRIMITIVES, hash_many
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

THREADS = 8
CALLS = 200

#: CHEAPEST-sized parameter sets: every version, several hash types, one and two regions.
PARAM_SETS = (
    CHEAPEST,
    dataclasses.replace(CHEAPEST, variant="2014", time_cost=1, overwrite_cost=None),
    Params(variant="2014-03", mem_cost=1, multiplies=1, parallelism=1, hash_size=20),
    dataclasses.replace(CHEAPEST, hash_type="sha512", block_size=64, sub_block_size=64),
    dataclasses.replace(CHEAPEST, hash_type="sha256", mem_cost=3, multiplies=2, parallelism=2),
    Params(mem_cost=6, block_size=1024, parallelism=2, side_channel_resistant=True),
)
PASSWORDS = [f"password {i}".encode() for i in range(7)]
SALTS = [bytes([i]) * 16 for i in range(7)]


def _call(
    hashers: list[PasswordHasher], engine: Engine, stored: list[list[str]], serial: int
) -> object:
    """Run call number ``serial`` of the mixed workload and return a comparable result."""
    kind, k, j = serial % 6, serial % len(PARAM_SETS), serial % len(PASSWORDS)
    hasher, params = hashers[k], PARAM_SETS[k]
    if kind == 0:
        return hasher.hash(PASSWORDS[j], salt=SALTS[j])
    if kind == 1:
        return hasher.verify(stored[k][j], PASSWORDS[j])
    if kind == 2:
        try:
            hasher.verify(stored[k][j], PASSWORDS[(j + 1) % len(PASSWORDS)])
        except VerifyMismatchError:
            return "mismatch"
        return "wrong password accepted"
    if kind == 3:
        return kdf.derive(PASSWORDS[j], SALTS[j], params, data=bytes([k]))
    if kind == 4:
        return engine.derive(PASSWORDS[j], SALTS[j], params)
    algorithm = PRIMITIVES[serial % len(PRIMITIVES)]
    messages = [bytes([serial % 251]) * (n * 37 % 300) for n in range(serial % 40)]
    return hash_many(messages, algorithm, threads=1 + serial % 2)


def _spy_on_buffers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record any moment when two running derivations hold the same work buffer."""
    original = Engine._lease
    active: dict[int, int] = {}
    lock = threading.Lock()
    clashes: list[str] = []

    @contextmanager
    def spying(
        self: Engine, words: int, params: Params, limit: int | None, name: str
    ) -> Iterator[memoryview]:
        with original(self, words, params, limit, name) as mem:
            if len(mem) == 0:
                yield mem
                return
            address = address_of(mem)
            with lock:
                if address in active:
                    clashes.append(f"buffer {address:#x} held by two derivations")
                active[address] = threading.get_ident()
            try:
                yield mem
            finally:
                with lock:
                    del active[address]

    monkeypatch.setattr(Engine, "_lease", spying)
    return clashes


def _run_threads(work: Callable[[int], None]) -> list[str]:
    """Run ``work(worker)`` on THREADS threads released together; return their exceptions."""
    barrier = threading.Barrier(THREADS)
    errors: list[str] = []

    def body(worker: int) -> None:
        barrier.wait()
        try:
            work(worker)
        except Exception as exc:  # A thread's exception would otherwise vanish.
            errors.append(repr(exc))

    threads = [threading.Thread(target=body, args=(worker,)) for worker in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_mixed_calls_on_many_threads_equal_a_single_threaded_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """8 threads x 200 mixed hash/verify/derive/hash_many calls give the single-thread results."""
    hashers = [PasswordHasher.from_params(params) for params in PARAM_SETS]
    pairs = list(zip(PASSWORDS, SALTS, strict=True))
    stored = [[h.hash(pw, salt=salt) for pw, salt in pairs] for h in hashers]
    engine = Engine()
    serials = [[worker * CALLS + i for i in range(CALLS)] for worker in range(THREADS)]
    expected = {s: _call(hashers, engine, stored, s) for row in serials for s in row}
    assert "wrong password accepted" not in expected.values()
    results: dict[int, object] = {}

    def work(worker: int) -> None:
        for serial in serials[worker]:
            results[serial] = _call(hashers, engine, stored, serial)

    clashes = _spy_on_buffers(monkeypatch)
    assert _run_threads(work) == []
    assert clashes == []
    assert results == expected


def test_concurrent_verify_never_crosses_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads verifying right and wrong passwords on one hasher at once never swap outcomes."""
    params = Params(mem_cost=10, multiplies=1, parallelism=2, block_size=1024)
    hasher = PasswordHasher.from_params(params)
    passwords = [f"user {i} secret".encode() for i in range(THREADS)]
    stored = [hasher.hash(pw) for pw in passwords]
    outcomes: list[tuple[int, int, bool]] = []
    lock = threading.Lock()

    def work(worker: int) -> None:
        for round_ in range(12):
            target = (worker + round_) % THREADS
            try:
                ok = hasher.verify(stored[target], passwords[worker])
            except VerifyMismatchError:
                ok = False
            with lock:
                outcomes.append((worker, target, ok))

    clashes = _spy_on_buffers(monkeypatch)
    assert _run_threads(work) == []
    assert clashes == []
    assert len(outcomes) == THREADS * 12
    for worker, target, ok in outcomes:
        assert ok is (worker == target)


def test_hash_many_from_many_threads_equals_hashlib() -> None:
    """hash_many called from 8 threads at once (some splitting their batch) matches hashlib."""
    batches = {
        worker: [bytes([worker, n % 256]) * (n % 97) for n in range(300 + 50 * worker)]
        for worker in range(THREADS)
    }
    results: dict[int, list[bytes]] = {}

    def work(worker: int) -> None:
        algorithm = PRIMITIVES[worker % len(PRIMITIVES)]
        for repeat in range(5):
            results[worker] = hash_many(batches[worker], algorithm, threads=1 + repeat % 3)

    assert _run_threads(work) == []
    for worker, digests in results.items():
        algorithm = PRIMITIVES[worker % len(PRIMITIVES)]
        assert digests == [hashlib.new(algorithm, m).digest() for m in batches[worker]]


@pytest.mark.parametrize("backend", ["scalar", "simd"])
def test_compiled_kernels_release_the_gil(backend: str) -> None:
    """The fill and lane kernels are compiled nogil, so threads run them in parallel."""
    from twocats.lanes.scheduler import SCHEDULERS

    kernels: list[Any] = [fill_variants(8).get(backend), SCHEDULERS["sha256"].get(backend)]
    for kernel in kernels:
        assert kernel.targetoptions.get("nogil") is True
