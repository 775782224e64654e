"""PasswordHasher under load: admission control, the memory budget, async calls, forks."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from twocats import phc
from twocats.exceptions import HasherBusyError, HashMemoryLimitError, VerifyMismatchError
from twocats.kdf import limits
from twocats.kdf.engine import Engine
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST, MODERATE

#: Two MiB in two regions: slices large enough for the shared fill threads.
SHARED = Params(mem_cost=11, multiplies=1, parallelism=2, block_size=1024)

PASSWORD = b"correct horse battery staple"
PASSWORDS = [f"password {i}".encode() for i in range(16)]
SALTS = [bytes([i]) * 16 for i in range(16)]

#: The password whose derivation blocks until the test lets it go.
HOLD = b"hold the slot"


class Probe:
    """Wraps Engine.derive and Engine.update: counts calls in flight and their work memory."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0
        self.memory = self.peak_memory = 0
        self.fill_threads = 0
        self.release = threading.Event()
        self.held = threading.Event()

    def wrap(self, original: Callable[..., bytes]) -> Callable[..., bytes]:
        """Return ``original`` counted (and held while its password is HOLD)."""
        probe = self
        derive = original.__name__ == "derive"

        def counted(engine: Engine, *args: Any, **kwargs: Any) -> bytes:
            # derive(password, salt, params) or update(stored, params, old_mem_cost).
            params: Params = args[2] if derive else args[1]
            old = None if derive else args[2]
            need = Engine.memory_required(params, old_mem_cost=old)
            with probe.lock:
                probe.in_flight += 1
                probe.memory += need
                probe.peak = max(probe.peak, probe.in_flight)
                probe.peak_memory = max(probe.peak_memory, probe.memory)
                fill = sum(t.name.startswith("twocats-fill") for t in threading.enumerate())
                probe.fill_threads = max(probe.fill_threads, fill)
            try:
                if args and args[0] == HOLD:
                    probe.held.set()
                    assert probe.release.wait(60)
                return original(engine, *args, **kwargs)
            finally:
                with probe.lock:
                    probe.in_flight -= 1
                    probe.memory -= need

        return counted


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[Probe]:
    """Count every derivation and update of every engine."""
    watcher = Probe()
    monkeypatch.setattr(Engine, "derive", watcher.wrap(Engine.derive))
    monkeypatch.setattr(Engine, "update", watcher.wrap(Engine.update))
    yield watcher
    watcher.release.set()


def run_threads(count: int, work: Callable[[int], None]) -> list[str]:
    """Run ``work(i)`` on ``count`` threads started together; return their failures."""
    failures: list[str] = []
    barrier = threading.Barrier(count)

    def main(index: int) -> None:
        barrier.wait()
        try:
            work(index)
        except Exception as error:  # A thread's exception would otherwise vanish.
            failures.append(repr(error))

    threads = [threading.Thread(target=main, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def holder(hasher: PasswordHasher, probe: Probe) -> threading.Thread:
    """Start a hash that holds one slot until ``probe.release`` is set."""
    thread = threading.Thread(target=hasher.hash, args=(HOLD,))
    thread.start()
    assert probe.held.wait(60)
    return thread


def wait_until(condition: Callable[[], bool]) -> None:
    """Wait (up to a minute) for ``condition``; the tests assert states, never durations."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.001)


# -- results do not depend on scheduling -----------------------------------------------------------


@pytest.mark.parametrize("callers", [8, 32])
def test_concurrent_callers_get_the_sequential_results(callers: int, probe: Probe) -> None:
    """8 and 32 threads hashing and verifying at once get exactly the sequential outputs."""
    hasher = PasswordHasher.from_params(SHARED)
    expected = [hasher.hash(pw, salt=salt) for pw, salt in zip(PASSWORDS, SALTS, strict=True)]
    results: dict[int, str] = {}

    def work(index: int) -> None:
        slot = index % 16
        results[index] = hasher.hash(PASSWORDS[slot], salt=SALTS[slot])
        hasher.verify(expected[slot], PASSWORDS[slot])
        with pytest.raises(VerifyMismatchError):
            hasher.verify(expected[slot], PASSWORDS[(slot + 1) % 16])

    assert run_threads(callers, work) == []
    assert results == {i: expected[i % 16] for i in range(callers)}
    assert probe.peak <= hasher.max_concurrency
    assert probe.fill_threads <= limits.usable_cpus()


def test_in_flight_calls_and_their_memory_stay_within_the_limits(probe: Probe) -> None:
    """A counter sees at most max_concurrency calls and max_total_memory of work areas."""
    own = SHARED.memory_bytes
    hasher = PasswordHasher.from_params(
        SHARED, max_concurrency=3, max_total_memory=5 * own, max_memory=2 * own
    )
    bigger = PasswordHasher.from_params(dataclasses.replace(SHARED, mem_cost=12))
    stored = [bigger.hash(pw) for pw in PASSWORDS[:4]]

    def work(index: int) -> None:
        if index % 3:
            hasher.hash(PASSWORDS[index % 16])
        else:
            hasher.verify(stored[index % 4], PASSWORDS[index % 4])

    assert run_threads(24, work) == []
    assert 1 <= probe.peak <= 3
    assert probe.peak_memory <= 5 * own
    assert hasher._pool.in_flight == 0
    assert hasher._pool.charged_bytes == 0
    assert hasher._pool.waiting == 0


def test_the_defaults_follow_the_cpus_and_the_machine() -> None:
    """Default concurrency is the usable CPUs over the parallelism; the budget half the memory."""
    hasher = PasswordHasher()
    cpus = limits.usable_cpus()
    assert hasher.max_concurrency == max(1, cpus // min(MODERATE.parallelism, cpus))
    machine = limits.machine_memory()
    assert machine is not None
    assert hasher.max_total_memory == machine // 2
    assert hasher.timeout is None


# -- giving up -------------------------------------------------------------------------------------


def test_a_waiting_caller_gives_up_with_hasher_busy_error(probe: Probe) -> None:
    """With the only slot held, a timeout raises HasherBusyError naming the limit."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1, timeout=0.05)
    thread = holder(hasher, probe)
    with pytest.raises(HasherBusyError) as caught:
        hasher.hash(b"another")
    assert str(caught.value).startswith(
        "the hasher is busy: waited 0.05 s (timeout) for max_concurrency=1 hashes running"
    )
    stored = phc.encode(CHEAPEST, bytes(16), bytes(32))
    with pytest.raises(HasherBusyError, match=r"waited 0\.01 s"):
        hasher.verify(stored, b"x", timeout=0.01)
    assert hasher._pool.waiting == 0
    probe.release.set()
    thread.join()
    assert hasher.verify(hasher.hash(b"pw", timeout=float("inf")), b"pw")


def test_the_memory_budget_is_named_when_it_holds_a_caller_back(probe: Probe) -> None:
    """A caller held back by max_total_memory is told so."""
    own = SHARED.memory_bytes
    hasher = PasswordHasher.from_params(SHARED, max_concurrency=4, max_total_memory=own)
    thread = holder(hasher, probe)
    with pytest.raises(HasherBusyError, match=r"for 2 MiB of max_total_memory \(2 MiB"):
        hasher.hash(b"another", timeout=0.01)
    probe.release.set()
    thread.join()


def test_without_a_timeout_callers_wait_in_order(probe: Probe) -> None:
    """Callers behind a held slot wait (no error) and are admitted first come, first served."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    thread = holder(hasher, probe)
    order: list[int] = []
    waiters = []
    for index in range(4):
        waiters.append(threading.Thread(target=_ordered(hasher, order, index)))
        waiters[-1].start()
        wait_until(lambda i=index: hasher._pool.waiting == i + 1)
    probe.release.set()
    for waiter in [thread, *waiters]:
        waiter.join()
    assert order == [0, 1, 2, 3]


def _ordered(hasher: PasswordHasher, order: list[int], index: int) -> Callable[[], None]:
    """Return a caller that records when the admission lets it in."""

    def run() -> None:
        with hasher._pool.slot(CHEAPEST.memory_bytes, None):
            order.append(index)

    return run


def test_keyboard_interrupt_inside_a_hash_frees_its_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt during the fill gives the slot back; the hasher keeps working."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    expected = hasher.hash(b"pw", salt=bytes(16))

    def interrupted(*args: object, **kwargs: object) -> bytes:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(Engine, "derive", interrupted)
        with pytest.raises(KeyboardInterrupt):
            hasher.hash(b"pw")
    assert (hasher._pool.in_flight, hasher._pool.charged_bytes) == (0, 0)
    assert hasher.hash(b"pw", salt=bytes(16), timeout=5) == expected


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_a_working_hasher(probe: Probe) -> None:
    """A child forked while the parent's only slot is held hashes normally."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    expected = hasher.hash(b"pw", salt=bytes(16))
    thread = holder(hasher, probe)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            code = 0 if hasher.hash(b"pw", salt=bytes(16), timeout=30) == expected else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    probe.release.set()
    thread.join()
    assert os.waitstatus_to_exitcode(status) == 0


# -- asyncio ---------------------------------------------------------------------------------------


def test_synchronous_calls_do_not_import_asyncio() -> None:
    """A program that only hashes and verifies synchronously never loads asyncio."""
    code = (
        "import sys\n"
        "from twocats import PasswordHasher, profiles\n"
        "hasher = PasswordHasher.from_params(profiles.CHEAPEST)\n"
        "hasher.verify(hasher.hash('pw'), 'pw')\n"
        "print('asyncio' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_async_calls_equal_the_sync_ones() -> None:
    """ahash, averify and aupgrade give the results of hash, verify and upgrade."""
    small = dataclasses.replace(SHARED, mem_cost=10, start_mem_cost=10)
    hasher = PasswordHasher.from_params(small)
    bigger = PasswordHasher.from_params(dataclasses.replace(small, mem_cost=11))

    async def main() -> None:
        hashes = await asyncio.gather(*(hasher.ahash(pw, salt=SALTS[0]) for pw in PASSWORDS))
        assert list(hashes) == [hasher.hash(pw, salt=SALTS[0]) for pw in PASSWORDS]
        assert all(await asyncio.gather(*map(hasher.averify, hashes, PASSWORDS)))
        with pytest.raises(VerifyMismatchError):
            await hasher.averify(hashes[0], PASSWORDS[1])
        assert await bigger.aupgrade(hashes[0]) == bigger.upgrade(hashes[0])

    asyncio.run(main())


def test_the_event_loop_keeps_running_while_averify_waits(probe: Probe) -> None:
    """Callbacks keep running while averify calls wait for a held slot."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    stored = hasher.hash(b"pw")
    thread = holder(hasher, probe)

    async def main() -> int:
        tasks = [asyncio.create_task(hasher.averify(stored, b"pw")) for _ in range(8)]
        ticks = 0
        while hasher._pool.waiting < 8:
            await asyncio.sleep(0)
        for _ in range(100):
            ticks += 1
            await asyncio.sleep(0)
        probe.release.set()
        assert all(await asyncio.gather(*tasks))
        return ticks

    assert asyncio.run(main()) == 100
    thread.join()


def test_cancelled_averify_tasks_leave_no_slot_or_engine_behind(probe: Probe) -> None:
    """Cancelling waiting and running averify tasks frees their slots; the hasher works on."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    stored = hasher.hash(b"pw")
    probe.release.set()
    held = hasher.hash(HOLD)
    probe.release.clear()
    probe.held.clear()

    async def main() -> None:
        running = asyncio.create_task(hasher.averify(held, HOLD))
        while not probe.held.is_set():
            await asyncio.sleep(0.001)
        waiting = [asyncio.create_task(hasher.averify(stored, b"pw")) for _ in range(6)]
        while hasher._pool.waiting < 6:
            await asyncio.sleep(0)
        for task in [running, *waiting]:
            task.cancel()
        results = await asyncio.gather(running, *waiting, return_exceptions=True)
        assert all(isinstance(result, asyncio.CancelledError) for result in results)
        assert hasher._pool.waiting == 0
        probe.release.set()
        while hasher._pool.in_flight:
            await asyncio.sleep(0.001)
        assert await hasher.averify(stored, b"pw", timeout=30)

    asyncio.run(main())
    assert (hasher._pool.in_flight, hasher._pool.charged_bytes) == (0, 0)
    assert hasher._pool.idle_engines == 1


def test_async_timeout_raises_hasher_busy_error(probe: Probe) -> None:
    """An averify that cannot be admitted in time raises HasherBusyError and leaves the queue."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    stored = hasher.hash(b"pw")
    thread = holder(hasher, probe)

    async def main() -> None:
        with pytest.raises(HasherBusyError, match="max_concurrency=1"):
            await hasher.averify(stored, b"pw", timeout=0.02)
        assert hasher._pool.waiting == 0

    asyncio.run(main())
    probe.release.set()
    thread.join()


# -- unknown users ---------------------------------------------------------------------------------


def test_verify_unknown_spends_a_verify_and_always_fails(probe: Probe) -> None:
    """verify_unknown runs one derivation of the hasher's own size and raises a mismatch."""
    hasher = PasswordHasher.from_params(SHARED)
    with pytest.raises(VerifyMismatchError, match="does not match"):
        hasher.verify_unknown("any password")
    assert probe.peak_memory == SHARED.memory_bytes

    async def main() -> None:
        with pytest.raises(VerifyMismatchError):
            await hasher.averify_unknown(b"any password")

    asyncio.run(main())


def test_verify_unknown_like_a_stored_hash_does_its_work_and_never_matches(probe: Probe) -> None:
    """With like=, the decoy verifies a hash of that shape and fails even for its password."""
    small = dataclasses.replace(SHARED, mem_cost=SHARED.mem_cost - 2, start_mem_cost=None)
    upgraded = PasswordHasher.from_params(SHARED).upgrade(
        PasswordHasher.from_params(small).hash("right password")
    )
    hasher = PasswordHasher.from_params(SHARED)
    assert hasher.verify(upgraded, "right password")
    with pytest.raises(VerifyMismatchError, match="does not match"):
        hasher.verify_unknown("right password", like=upgraded)
    assert probe.peak_memory == SHARED.memory_bytes
    planted = upgraded.replace(f"m={SHARED.mem_cost},", "m=30,", 1)
    with pytest.raises(HashMemoryLimitError):
        hasher.verify_unknown("right password", like=planted)


def test_a_planted_hash_is_refused_without_waiting(probe: Probe) -> None:
    """Limits are checked before admission: a refused hash never joins the queue."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_concurrency=1)
    thread = holder(hasher, probe)
    planted = phc.encode(dataclasses.replace(CHEAPEST, mem_cost=21), bytes(16), bytes(32))
    with pytest.raises(HashMemoryLimitError):
        hasher.verify(planted, b"pw", timeout=5)
    assert hasher._pool.waiting == 0
    probe.release.set()
    thread.join()


def test_hasher_busy_error_is_a_twocats_error() -> None:
    """HasherBusyError is exported by twocats and belongs to the one hierarchy."""
    import twocats

    assert twocats.HasherBusyError is HasherBusyError
    assert issubclass(HasherBusyError, twocats.TwoCatsError)


def test_async_callers_share_the_admission_with_threads(probe: Probe) -> None:
    """Tasks and threads together never run more than max_concurrency hashes at once."""
    hasher = PasswordHasher.from_params(SHARED, max_concurrency=2)
    stored = hasher.hash(PASSWORDS[0])

    async def main() -> None:
        calls = [hasher.averify(stored, PASSWORDS[0]) for _ in range(16)]
        assert all(await asyncio.gather(*calls))

    threads = [threading.Thread(target=hasher.hash, args=(pw,)) for pw in PASSWORDS[:8]]
    for thread in threads:
        thread.start()
    asyncio.run(main())
    for thread in threads:
        thread.join()
    assert 1 <= probe.peak <= 2
    assert (hasher._pool.in_flight, hasher._pool.waiting) == (0, 0)


def test_idle_work_areas_make_room_for_a_larger_call() -> None:
    """An idle engine's memory counts in the budget and is let go when a call needs it."""
    own = SHARED.memory_bytes
    hasher = PasswordHasher.from_params(
        SHARED, max_concurrency=2, max_total_memory=2 * own, max_work=10**9
    )
    hasher.hash(PASSWORD)
    assert [engine.buffer_bytes for engine in hasher._pool._free] == [own]
    bigger = PasswordHasher.from_params(dataclasses.replace(SHARED, mem_cost=12))
    assert hasher.verify(bigger.hash(PASSWORD), PASSWORD, timeout=30)
    assert all(engine.buffer_bytes <= own for engine in hasher._pool._free)
    assert hasher._pool.charged_bytes == 0
