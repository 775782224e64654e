"""Digests of many files for ``twocats sum``: bounded reads, hashlib first, lanes where they pay.

Files are read on the calling thread with a cap checked while reading (never a size from
``stat``): a file that ends within :data:`SMALL_FILE` bytes is read straight into its batch's
arena, a reused buffer, where hashlib or the lane kernels read it (no copy, no object per file);
a longer one is streamed through hashlib in :data:`CHUNK` pieces, so ``/dev/zero`` or an endless
FIFO runs in constant memory.  KangarooTwelve and ParallelHash stream through
:mod:`twocats.lanes.modes.keccak_stream` (their leaves hashed in lanes as they are read); a lane
mode with no streaming form reads a file whole, up to :data:`WHOLE_FILE_LIMIT` and refusing more,
and hashes it before the next file is read, so that one such file is in memory at a time.
Batches are hashed on :data:`HASH_THREADS` worker threads while the next files are read (hashlib
and the lane kernels release the GIL), with at most :data:`PENDING` batches in flight; files
under :data:`HASHLIB_GIL_BYTES` are hashed by the reading thread while hashlib is in charge.
File data in memory therefore stays under (PENDING + 2) arenas of BATCH_BYTES + SMALL_FILE
bytes (in flight, and the batch being filled), 54 MiB, whatever the inputs.

A batch is hashed by hashlib (OpenSSL's SHA-NI code, nothing to load) until the lane kernels are
loaded.  They are loaded on a background thread only when the job looks large enough to repay
their loading time (:data:`LANES_PAY_BYTES`, or :data:`LANES_PAY_BYTES_BUILT` where the
scheduler was built ahead of time); batches are handed to them from then on.
``--backend`` asks for the lanes from the first batch.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

__all__ = [
    "CHUNK",
    "COREUTILS",
    "LANES_PAY_BYTES",
    "LANES_PAY_BYTES_BUILT",
    "SMALL_FILE",
    "WHOLE_FILE_LIMIT",
    "LaneLoader",
    "Method",
    "Slices",
    "file_digests",
    "method_for",
    "stdin_reader",
]

#: Algorithm name -> (multi-buffer algorithm or None, hashlib constructor, the coreutils tool).
COREUTILS: Final[dict[str, tuple[str | None, Callable[[], Any], str]]] = {
    "sha256": ("sha256", hashlib.sha256, "sha256sum"),
    "sha512": ("sha512", hashlib.sha512, "sha512sum"),
    "blake2b": ("blake2b", hashlib.blake2b, "b2sum"),
    # SHA-1 for old checksum files only (legacy); named here, its start-up skips the lane registry.
    "sha1": ("sha1", hashlib.sha1, "sha1sum"),
    # BLAKE2b with a 32-byte digest is a different function from BLAKE2b-512 cut short (the digest
    # length is hashed in); the lane kernels produce standard lengths only, so hashlib computes it.
    "blake2b-256": (None, lambda: hashlib.blake2b(digest_size=32), "b2sum -l 256"),
    # BLAKE2s has no coreutils tool; the BLAKE2 reference b2sum checks it with -a blake2s.
    "blake2s": ("blake2s", hashlib.blake2s, "b2sum -a blake2s (BLAKE2 reference tool)"),
}

#: Files that end within this many bytes are batched; longer ones are streamed.
SMALL_FILE: Final = 1 << 20

#: Read size for streamed files.
CHUNK: Final = 1 << 20

#: The most file data, and the most files, one batch holds.
BATCH_BYTES: Final = 8 << 20
BATCH_FILES: Final = 2048

#: The most batches, and batches' worth of file data, read but not yet written out.
PENDING: Final = 4

#: Worker threads hashing batches while the calling thread reads.
HASH_THREADS: Final = 2

#: hashlib releases the GIL only for inputs of at least this many bytes; shorter files are
#: hashed by the reading thread itself while hashlib is in charge.
HASHLIB_GIL_BYTES: Final = 2048

#: Lane modes without a streaming implementation read a whole file into memory, up to this size;
#: a longer file fails with a clear message instead of exhausting the machine.
WHOLE_FILE_LIMIT: Final = 1 << 30

#: Job size (bytes) from which loading the lane kernels (about 0.45 s of CPU for the numba import
#: and the kernel cache) is repaid by their speed, measured with ``python -m bench sum`` on the
#: 10,000 lognormal files (112 MB; AVX-512 and SHA-NI host): in memory, one thread, a hashlib
#: loop / ``hash_many`` take 203 / 50 ms for BLAKE2s, 131 / 42 for BLAKE2b, 111 / 64 for SHA-256
#: (SHA-NI), 153 / 60 for SHA-512 and 93 / 40 for SHA-1 (SHA-NI), so the lanes save 1.4, 0.8,
#: 0.4, 0.8 and 0.5 ns per byte and break even at about 0.35, 0.57, 1.7, 0.58 and 0.96 GB.
#: Loading on a background thread competes with the reading and leaves the first batches to
#: hashlib, so each threshold is about 1.5 times the break-even size.
LANES_PAY_BYTES: Final = {
    "blake2s": 512 << 20,
    "blake2b": 832 << 20,
    "sha256": 2560 << 20,
    "sha512": 832 << 20,
    "sha1": 1408 << 20,
}

#: The same where the primitive's scheduler was built ahead of time (:mod:`twocats.simd.aot`):
#: loading it imports neither numba nor numpy and costs about 28 ms of a process's start-up
#: (``twocats sum --backend simd`` on one small file against the default, one core, AVX-512 and
#: SHA-NI host).  At the savings per byte above that is repaid from about 20 MB (BLAKE2s), 35 MB
#: (BLAKE2b, SHA-512), 60 MB (SHA-1) and 70 MB (SHA-256), and each threshold is again about 1.5
#: times that.
#: SHA-256 keeps a higher one: on the 112 MB lognormal tree ``--backend simd`` matched the
#: default (OpenSSL's SHA-NI code) rather than beat it.
LANES_PAY_BYTES_BUILT: Final = {
    "blake2s": 32 << 20,
    "blake2b": 48 << 20,
    "sha256": 512 << 20,
    "sha512": 48 << 20,
    "sha1": 96 << 20,
}


@dataclass(frozen=True)
class Method:
    """How one algorithm is computed: a hashlib constructor, lane kernels, or both."""

    name: str
    lanes: str | None
    #: A new hasher (``update``, ``digest``) for inputs longer than SMALL_FILE, or None.
    stream: Callable[[], Any] | None
    digest_size: int
    #: A new hashlib hasher for batches of short inputs, or None (they go to the lanes).
    batch: Callable[[], Any] | None = None


class _FixedLength:
    """A hashlib SHAKE hasher whose ``digest()`` has a fixed length."""

    def __init__(self, hasher: Any, length: int) -> None:
        self._hasher = hasher
        self._length = length

    def update(self, data: bytes) -> None:
        self._hasher.update(data)

    def digest(self) -> bytes:
        return bytes(self._hasher.digest(self._length))


def method_for(algorithm: str, backend: str | None = None) -> Method:
    """Resolve a coreutils-style name or a name of the lane registry (``twocats.lanes``)."""
    if algorithm in COREUTILS:
        lanes, stream, _ = COREUTILS[algorithm]
        return Method(algorithm, lanes, stream, stream().digest_size, stream)
    from twocats.lanes.registry import ALGORITHMS

    mode = ALGORITHMS[algorithm]
    name = mode.hashlib_name
    if name is not None:
        hashlib_stream = partial(hashlib.new, name)
        return Method(mode.name, mode.name, hashlib_stream, mode.digest_size, hashlib_stream)
    return Method(mode.name, mode.name, _lane_stream(mode.name, backend), mode.digest_size)


def _lane_stream(name: str, backend: str | None) -> Callable[[], Any] | None:
    """A streaming hasher of a lane mode that hashlib lacks, or None if it has no such form."""
    if name in ("shake128", "shake256"):
        shake = hashlib.shake_128 if name == "shake128" else hashlib.shake_256
        return partial(_FixedLength, shake(), 32 if name == "shake128" else 64)
    from twocats.lanes.modes.keccak_stream import STREAMS

    factory = STREAMS.get(name)
    return None if factory is None else partial(factory, backend)


@dataclass(frozen=True)
class Slices:
    """Messages that lie in one buffer: message i is buffer[starts[i]:starts[i] + lengths[i]]."""

    buffer: bytes | bytearray
    starts: Sequence[int]
    lengths: Sequence[int]

    def views(self) -> Iterator[memoryview]:
        """Each message as a view into the buffer (no copy)."""
        view = memoryview(self.buffer)
        for start, length in zip(self.starts, self.lengths, strict=True):
            yield view[start : start + length]


class LaneLoader:
    """Loads the lane kernels of one method on a background thread, once asked to."""

    def __init__(self, method: Method, backend: str | None) -> None:
        self._method = method
        self._backend = backend
        self._ready = threading.Event()
        self._started = False

    def start(self) -> None:
        """Begin loading (once); batches keep going to hashlib until :meth:`ready`."""
        if not self._started:
            self._started = True
            threading.Thread(target=self._load, name="twocats-lanes", daemon=True).start()

    def _load(self) -> None:
        # One empty message imports numba and loads (or compiles) the kernel.  If that fails
        # (no numba, a broken kernel cache), hashlib simply keeps every batch.
        try:
            self.hash(Slices(bytes(1), (0,), (0,)))
        except Exception:
            return
        self._ready.set()

    def ready(self) -> bool:
        """Return True once batches may go to the lanes."""
        return self._ready.is_set()

    def built(self) -> bool:
        """Whether the lanes load from an ahead-of-time artefact (no numba import to repay)."""
        from twocats.lanes.primitives import FAMILY
        from twocats.simd.family import KernelKey, ready_now
        from twocats.simd.registry import resolve_backend

        name = self._method.lanes
        backend = resolve_backend(self._backend)
        if name is None or backend == "reference":
            return False
        return ready_now(FAMILY, KernelKey(f"lanes_{name}", backend))

    def hash(self, messages: Slices) -> list[bytes]:
        """Hash a batch in lanes (loading the kernels on first use)."""
        assert self._method.lanes is not None
        from twocats.lanes.many import hash_slices

        return hash_slices(
            messages.buffer,
            messages.starts,
            messages.lengths,
            self._method.lanes,
            backend=self._backend,
        )


def _hashlib_batch(stream: Callable[[], Any], messages: Iterable[memoryview]) -> list[bytes]:
    out = []
    for message in messages:
        hasher = stream()
        hasher.update(message)
        out.append(hasher.digest())
    return out


class _Done:
    """A batch entry already settled while reading: a streamed digest or a read error."""

    __slots__ = ("outcome",)

    def __init__(self, outcome: bytes | OSError) -> None:
        self.outcome = outcome


class _Arena:
    """A reused buffer that the small files of one batch are read into, one after another.

    Its room (BATCH_BYTES + SMALL_FILE + 1 bytes) holds a batch below BATCH_BYTES and one more
    read of SMALL_FILE + 1 bytes, the read that tells a small file from a long one.
    """

    __slots__ = ("buffer", "used", "view")

    def __init__(self) -> None:
        self.buffer = bytearray(BATCH_BYTES + SMALL_FILE + 1)
        self.view = memoryview(self.buffer)
        self.used = 0


class _Batch:
    """The files of one batch: their names, the outcomes settled while reading, and the slices
    of its arena that hold the others' contents."""

    __slots__ = ("arena", "lengths", "names", "outcomes", "starts")

    def __init__(self, arena: _Arena) -> None:
        self.arena = arena
        self.names: list[str] = []
        # None where the file's contents wait in the arena.
        self.outcomes: list[bytes | OSError | None] = []
        self.starts: list[int] = []
        self.lengths: list[int] = []

    def settled(self, name: str, outcome: bytes | OSError) -> None:
        """Add a file whose digest (or error) is known."""
        self.names.append(name)
        self.outcomes.append(outcome)

    def kept(self, name: str, length: int) -> None:
        """Add a file whose ``length`` bytes were just read into the arena after its used part."""
        self.names.append(name)
        self.outcomes.append(None)
        self.starts.append(self.arena.used)
        self.lengths.append(length)
        self.arena.used += length

    def slices(self) -> Slices:
        """The contents waiting in the arena."""
        return Slices(self.arena.buffer, self.starts, self.lengths)

    def settle(self, hashed: list[bytes]) -> list[bytes | OSError]:
        """Every file's outcome, the digests of the contents in the arena put in their place."""
        digests = iter(hashed)
        return [next(digests) if outcome is None else outcome for outcome in self.outcomes]


def _too_large(name: str) -> OSError:
    from twocats._units import format_size

    limit = format_size(WHOLE_FILE_LIMIT)
    reason = f"File too large: this algorithm has no streaming form (limit {limit})"
    return OSError(errno.EFBIG, reason, name)


#: Reads into a buffer and returns the count of bytes read (0 at the end of the input).
ReadInto = Callable[[memoryview], int]


def _read_entry(
    readinto: ReadInto, read: Callable[[int], bytes], arena: _Arena, name: str, method: Method
) -> int | bytes | _Done:
    """Read one input into ``arena`` after its used part, with a cap checked while reading.

    Returns the input's length if it ends within SMALL_FILE bytes (its contents stay in the
    arena, which is not advanced); otherwise its bytes, for a lane mode without a streaming
    form, or its streamed digest.
    """
    view = arena.view
    start = arena.used
    end = start + SMALL_FILE + 1
    size = 0
    # A regular file that fits is read in one call; the next, empty one confirms its end.
    while start + size < end:
        got = readinto(view[start + size : end])
        if not got:
            return size
        size += got
    head = view[start:end]
    if method.stream is None:
        return _read_whole(bytes(head), read, name)
    hasher = method.stream()
    hasher.update(head)
    while piece := read(CHUNK):
        hasher.update(piece)
    return _Done(bytes(hasher.digest()))


def _read_whole(head: bytes, read: Callable[[int], bytes], name: str) -> bytes:
    """The rest of an input after ``head``, joined to it, up to WHOLE_FILE_LIMIT bytes."""
    pieces = [head]
    size = len(head)
    while size <= WHOLE_FILE_LIMIT:
        piece = read(CHUNK)
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        size += len(piece)
    # Drop the data before raising: the traceback would keep this frame, and it, alive.
    del pieces
    raise _too_large(name)


_OPEN_FLAGS: Final = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


def stdin_reader() -> Callable[[int], bytes]:
    """Read up to n bytes of standard input with at most one system call (``read1``)."""
    stream = sys.stdin.buffer
    read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)
    return read


def _read_name(name: str, arena: _Arena, method: Method) -> int | bytes | _Done:
    """Read a named file, or standard input for ``-``, as :func:`_read_entry` does."""
    if name == "-":
        stream: Any = sys.stdin.buffer
        readinto: ReadInto = getattr(stream, "readinto1", stream.readinto)
        return _read_entry(readinto, stdin_reader(), arena, name, method)
    descriptor = os.open(name, _OPEN_FLAGS)
    try:
        return _read_entry(
            lambda view: os.readv(descriptor, (view,)),
            partial(os.read, descriptor),
            arena,
            name,
            method,
        )
    finally:
        os.close(descriptor)


def _error(exc: OSError, name: str) -> OSError:
    """The error with the file name a message needs (os.read errors carry none)."""
    if exc.filename is None:
        exc.filename = name
    # The traceback would keep the reading frames, and the data they hold, alive.
    return exc.with_traceback(None)


class _Scheduler:
    """Chooses hashlib or lanes for each batch and runs it on the worker threads."""

    def __init__(self, method: Method, backend: str | None, loader: LaneLoader | None) -> None:
        self._method = method
        self._pool = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="twocats-sum")
        if method.lanes is None:
            self._loader = None
        elif loader is not None:
            self._loader = loader
        else:
            self._loader = LaneLoader(method, backend)
        # Whether the lanes load from an artefact, found on first need.
        self._artefact: bool | None = None
        # Lanes from the first batch when asked for, or when hashlib cannot compute the method.
        self._lanes_now = method.lanes is not None and (backend is not None or not method.batch)

    def consider_lanes(self, bytes_done: int, files_done: int, files_total: int) -> None:
        """Start loading the lanes if the job, extrapolated from the files read, repays them."""
        if self._loader is None or files_done == 0:
            return
        name = self._method.name
        low, high = LANES_PAY_BYTES_BUILT.get(name), LANES_PAY_BYTES.get(name)
        if low is None or high is None:
            return
        projected = bytes_done * files_total
        # Whether an artefact exists is asked only of a job that it would repay: the answer
        # loads and checks the artefact.
        if projected >= high * files_done or (projected >= low * files_done and self._built()):
            self._loader.start()

    def _built(self) -> bool:
        if self._artefact is None:
            self._artefact = self._loader is not None and self._loader.built()
        return self._artefact

    def lanes_active(self) -> bool:
        """True if batches go to the lanes now."""
        return self._loader is not None and (self._lanes_now or self._loader.ready())

    def whole(self, data: bytes) -> bytes:
        """The digest of a file read whole (a lane mode without a streaming form), hashed before
        the next file is read, so that at most one such file is held."""
        assert self._loader is not None
        return self._loader.hash(Slices(data, (0,), (len(data),)))[0]

    def now(self, view: memoryview) -> bytes | None:
        """The digest of a short input, hashed at once, where waiting for a batch would cost:
        while hashlib is in charge, hashlib keeps the GIL for inputs under HASHLIB_GIL_BYTES, so
        a worker thread would only hold up the reading.  None when it should wait."""
        if len(view) >= HASHLIB_GIL_BYTES or self.lanes_active():
            return None
        assert self._method.batch is not None
        return _hashlib_batch(self._method.batch, (view,))[0]

    def submit(self, batch: _Batch) -> Future[list[bytes | OSError]]:
        """Hash the arena's contents of one batch on a worker thread (none if all are settled)."""
        if not batch.lengths:
            settled: Future[list[bytes | OSError]] = Future()
            settled.set_result(batch.settle([]))
            return settled
        return self._pool.submit(self._hash, batch, self.lanes_active())

    def _hash(self, batch: _Batch, lanes: bool) -> list[bytes | OSError]:
        if lanes:
            assert self._loader is not None
            return batch.settle(self._loader.hash(batch.slices()))
        assert self._method.batch is not None
        return batch.settle(_hashlib_batch(self._method.batch, batch.slices().views()))

    def close(self) -> None:
        """Stop the worker threads (pending batches are abandoned)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def file_digests(
    names: Sequence[str],
    algorithm: str,
    backend: str | None = None,
    *,
    loader: LaneLoader | None = None,
) -> Iterator[tuple[str, bytes | OSError]]:
    """Yield (name, digest or the error that stopped reading it) in the order of `names`.

    ``backend`` (given on the command line) sends every batch to the lanes; else hashlib hashes
    batches until ``loader`` (default: a :class:`LaneLoader`) has loaded the lanes.  Small files
    are read into reused arenas, one a batch, at most PENDING + 2 of them.
    """
    method = method_for(algorithm, backend)
    scheduler = _Scheduler(method, backend, loader)
    pending: deque[tuple[_Batch, Future[list[bytes | OSError]]]] = deque()
    free: list[_Arena] = []
    batch = _Batch(_Arena())
    bytes_read = 0
    try:
        for index, name in enumerate(names):
            try:
                entry = _read_name(name, batch.arena, method)
            except OSError as exc:
                entry = _Done(_error(exc, name))
            if isinstance(entry, _Done):
                batch.settled(name, entry.outcome)
            elif isinstance(entry, bytes):
                batch.settled(name, scheduler.whole(entry))
            else:
                bytes_read += entry
                start = batch.arena.used
                digest = scheduler.now(batch.arena.view[start : start + entry])
                if digest is None:
                    batch.kept(name, entry)
                else:
                    batch.settled(name, digest)
            if batch.arena.used >= BATCH_BYTES or len(batch.names) >= BATCH_FILES:
                scheduler.consider_lanes(bytes_read, index + 1, len(names))
                pending.append((batch, scheduler.submit(batch)))
                # Write out whatever is complete, and wait while too much is in flight.
                while pending and (pending[0][1].done() or len(pending) > PENDING):
                    done, future = pending.popleft()
                    yield from zip(done.names, future.result(), strict=True)
                    done.arena.used = 0
                    free.append(done.arena)
                batch = _Batch(free.pop() if free else _Arena())
        if batch.names:
            pending.append((batch, scheduler.submit(batch)))
        while pending:
            done, future = pending.popleft()
            yield from zip(done.names, future.result(), strict=True)
    finally:
        scheduler.close()
