"""Digests of many files for ``twocats sum``: bounded reads, hashlib first, lanes where they pay.

Files are read with a cap checked while reading (never a size from ``stat``): a file that ends
within :data:`SMALL_FILE` bytes is read straight into an arena, a reused buffer, where hashlib or
the lane kernels read it (no copy, no object per file); a longer one is streamed through hashlib
in :data:`CHUNK` pieces, so ``/dev/zero`` or an endless FIFO runs in constant memory.  A lane
mode that hashlib lacks streams through its registry row's stream (KangarooTwelve and
ParallelHash hash their leaves in lanes as they are read); one with no streaming form reads a
file whole, up to :data:`WHOLE_FILE_LIMIT` and refusing more, and hashes it before the next file
is read, so that one such file is in memory at a time.  Jobs of :data:`BATCH_FILES` consecutive
files are read and hashed on :data:`THREADS` worker threads (the reads, hashlib and the lane
kernels release the GIL, so the threads share the cores), each job in an arena of its own, with
at most :data:`PENDING` jobs ahead of the outcomes handed out.  File data in memory therefore
stays under THREADS arenas of BATCH_BYTES + SMALL_FILE bytes, 18 MiB, whatever the inputs.

A job is hashed by hashlib (OpenSSL's SHA-NI code, nothing to load) until the lane kernels are
loaded.  They are loaded on a background thread only when the work looks large enough to repay
their loading time (:data:`LANES_PAY_BYTES`, or :data:`LANES_PAY_BYTES_BUILT` where the
scheduler was built ahead of time); jobs are handed to them from then on.
``--backend`` asks for the lanes from the first job.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
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
    "Coreutils",
    "LaneLoader",
    "Method",
    "Slices",
    "file_digests",
    "method_for",
    "stdin_reader",
]


@dataclass(frozen=True)
class Coreutils:
    """A name ``twocats sum`` shares with a coreutils tool: its lane algorithm (None: hashlib
    only), its hashlib constructor, the tool, and the tag of its ``--tag`` lines."""

    lanes: str | None
    new: Callable[[], Any]
    tool: str
    tag: str


def _blake2b_256() -> Any:
    return hashlib.blake2b(digest_size=32)


#: The names of the coreutils tools, resolved without the lane registry; every other name of
#: ``twocats sum`` is a row of :data:`twocats.lanes.registry.ALGORITHMS` (:func:`method_for`).
COREUTILS: Final = {
    "sha256": Coreutils("sha256", hashlib.sha256, "sha256sum", "SHA256"),
    "sha512": Coreutils("sha512", hashlib.sha512, "sha512sum", "SHA512"),
    "blake2b": Coreutils("blake2b", hashlib.blake2b, "b2sum", "BLAKE2b"),
    # SHA-1 for old checksum files only (legacy); named here, its start-up skips the lane registry.
    "sha1": Coreutils("sha1", hashlib.sha1, "sha1sum", "SHA1"),
    # BLAKE2b with a 32-byte digest is a different function from BLAKE2b-512 cut short (the digest
    # length is hashed in); the lane kernels produce standard lengths only, so hashlib computes it.
    "blake2b-256": Coreutils(None, _blake2b_256, "b2sum -l 256", "BLAKE2b-256"),
    # BLAKE2s has no coreutils tool; the BLAKE2 reference b2sum checks it with -a blake2s.
    "blake2s": Coreutils(
        "blake2s", hashlib.blake2s, "b2sum -a blake2s (BLAKE2 reference tool)", "BLAKE2s"
    ),
}

#: Files that end within this many bytes are batched; longer ones are streamed.
SMALL_FILE: Final = 1 << 20

#: Read size for streamed files.
CHUNK: Final = 1 << 20

#: The file data an arena gathers before the lanes hash it (a job may fill its arena several
#: times), and the files of one job.
BATCH_BYTES: Final = 8 << 20
BATCH_FILES: Final = 512

#: The files of the first job, which tells how large the files are.
FIRST_FILES: Final = 64

#: The most jobs read but not yet handed out.
PENDING: Final = 4

#: Worker threads reading and hashing jobs of files.
THREADS: Final = 2

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

#: The same where the primitive's scheduler was built ahead of time (:mod:`twocats.simd.family`):
#: loading it imports neither numba nor numpy and costs about 11 ms of CPU (the artefact's checks
#: and its known-answer sample included; on a background thread).  In memory, one thread, on the
#: lognormal files' contents (``python -m bench sum``, 2-vCPU AMD EPYC with AVX-512 and SHA-NI), a
#: hashlib loop / ``hash_many`` take 142 / 23 ms for BLAKE2s, 82 / 27 for BLAKE2b, 59 / 32 for
#: SHA-256 (SHA-NI), 98 / 39 for SHA-512 and 55 / 19 for SHA-1 (SHA-NI): the lanes save 1.07,
#: 0.50, 0.24, 0.53 and 0.32 ns per byte and repay their loading from about 10, 22, 46, 21 and 34
#: MB; each threshold is about 1.5 times that.
LANES_PAY_BYTES_BUILT: Final = {
    "blake2s": 16 << 20,
    "blake2b": 32 << 20,
    "sha256": 64 << 20,
    "sha512": 32 << 20,
    "sha1": 48 << 20,
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
    #: What its ``--tag`` lines start with.
    tag: str = ""


def method_for(algorithm: str, backend: str | None = None) -> Method:
    """Resolve a name of :data:`COREUTILS` or of the lane registry (``twocats.lanes``), the
    names ``twocats sum`` takes.  A registry row streams a long input through hashlib where
    hashlib has it, else through the row's own stream, else reads it whole."""
    coreutils = COREUTILS.get(algorithm)
    if coreutils is not None:
        new = coreutils.new
        return Method(algorithm, coreutils.lanes, new, new().digest_size, new, coreutils.tag)
    from twocats.lanes.registry import ALGORITHMS

    mode = ALGORITHMS[algorithm]
    tag = mode.name.upper()
    if mode.hashlib_name is not None:
        new = partial(hashlib.new, mode.hashlib_name)
        return Method(mode.name, mode.name, new, mode.digest_size, new, tag)
    stream = None if mode.stream is None else partial(mode.stream, backend=backend)
    return Method(mode.name, mode.name, stream, mode.digest_size, None, tag)


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


def _hashlib_digest(stream: Callable[[], Any], message: memoryview) -> bytes:
    hasher = stream()
    hasher.update(message)
    digest: bytes = hasher.digest()
    return digest


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


#: hashlib hashes at least this many blocks in the time the lanes take for one step of a vector
#: of lanes (about 2 for BLAKE2b and SHA-512, 4 to 8 for SHA-1 and SHA-256 with SHA-NI).
HASHLIB_BLOCKS_PER_STEP: Final = 2


def _outlasting(lengths: Sequence[int], lanes: int, block: int) -> set[int]:
    """The indices of the messages to hand to hashlib rather than to ``lanes`` lanes.

    The lanes take as many steps as the longest message has blocks, or the blocks of all over
    the lanes where that is more.  Handing the k longest messages to hashlib saves steps and
    costs their blocks, at HASHLIB_BLOCKS_PER_STEP blocks of hashlib a step; the k that gains
    most is chosen (none, where nothing gains).
    """
    blocks = [length // block + 1 for length in lengths]
    order = sorted(range(len(blocks)), key=blocks.__getitem__, reverse=True)
    rest = sum(blocks)
    steps = max(blocks[order[0]], -(-rest // lanes)) if blocks else 0
    best, chosen, handed = 0, 0, 0
    for k, index in enumerate(order, start=1):
        handed += blocks[index]
        if handed >= steps * HASHLIB_BLOCKS_PER_STEP:
            break
        after = blocks[order[k]] if k < len(order) else 0
        saved = steps - max(after, -(-(rest - handed) // lanes))
        gain = saved * HASHLIB_BLOCKS_PER_STEP - handed
        if gain > best:
            best, chosen = gain, k
    return set(order[:chosen])


class _Waiting:
    """The files of a job whose contents wait in its arena for the lanes: the place of each
    among the job's outcomes, where it starts in the arena, and its length."""

    __slots__ = ("arena", "files")

    def __init__(self, arena: _Arena) -> None:
        self.arena = arena
        self.files: list[tuple[int, int, int]] = []

    def keep(self, place: int, length: int) -> None:
        """Keep the ``length`` bytes just read into the arena after its used part."""
        self.files.append((place, self.arena.used, length))
        self.arena.used += length

    def outlasting(self, lanes: int, block: int) -> list[tuple[int, int, int]]:
        """Stop waiting for the files that hashlib hashes in less time than they would hold the
        lanes up (see :func:`_outlasting`); return them."""
        chosen = _outlasting([length for _, _, length in self.files], lanes, block)
        handed = [entry for index, entry in enumerate(self.files) if index in chosen]
        self.files = [entry for index, entry in enumerate(self.files) if index not in chosen]
        return handed

    def slices(self) -> Slices:
        """The contents waiting in the arena."""
        starts = [start for _, start, _ in self.files]
        return Slices(self.arena.buffer, starts, [length for _, _, length in self.files])

    def settle(self, outcomes: list[bytes | OSError | None], hashed: list[bytes]) -> None:
        """Put the digests of the waiting contents in their places; empty the arena."""
        for (place, _, _), digest in zip(self.files, hashed, strict=True):
            outcomes[place] = digest
        self.files = []
        self.arena.used = 0


def _too_large(name: str) -> OSError:
    from twocats._units import format_size

    limit = format_size(WHOLE_FILE_LIMIT)
    reason = f"File too large: this algorithm has no streaming form (limit {limit})"
    return OSError(errno.EFBIG, reason, name)


#: Reads into a buffer and returns the count of bytes read (0 at the end of the input).
ReadInto = Callable[[memoryview], int]


def _read_entry(
    readinto: ReadInto,
    read: Callable[[int], bytes],
    arena: _Arena,
    name: str,
    method: Method,
    size: int = 0,
) -> int | bytes | _Done:
    """Read one input into ``arena`` after its used part, with a cap checked while reading
    (``size`` bytes of it are there already).

    Returns the input's length if it ends within SMALL_FILE bytes (its contents stay in the
    arena, which is not advanced); otherwise its bytes, for a lane mode without a streaming
    form, or its streamed digest.
    """
    view = arena.view
    start = arena.used
    end = start + SMALL_FILE + 1
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
        # A regular file that fits is read in one call; the next, empty one confirms its end.
        start = arena.used
        end = start + SMALL_FILE + 1
        got = os.readv(descriptor, (arena.view[start:end],))
        if got and start + got < end:
            more = os.readv(descriptor, (arena.view[start + got : end],))
            if not more:
                return got
            got += more
        if not got:
            return 0
        return _read_entry(
            lambda view: os.readv(descriptor, (view,)),
            partial(os.read, descriptor),
            arena,
            name,
            method,
            got,
        )
    finally:
        os.close(descriptor)


def _error(exc: OSError, name: str) -> OSError:
    """The error with the file name a message needs (os.read errors carry none)."""
    if exc.filename is None:
        exc.filename = name
    # The traceback would keep the reading frames, and the data they hold, alive.
    return exc.with_traceback(None)


class _JobHasher:
    """Reads and hashes jobs of consecutive files on the worker threads, each job in an arena of
    its own, and chooses hashlib or the lanes for each job."""

    def __init__(
        self, method: Method, backend: str | None, loader: LaneLoader | None, threads: int
    ) -> None:
        self._method = method
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="twocats-sum")
        # The free arenas; a job takes one (there are never more than threads of them).
        self._arenas: list[_Arena] = []
        self._arenas_lock = threading.Lock()
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

    def submit(self, names: Sequence[str]) -> Future[tuple[list[bytes | OSError], int]]:
        """Read and hash ``names`` on a worker thread: their outcomes, and the bytes of the
        files read into the arena."""
        return self._pool.submit(self._job, names)

    def _job(self, names: Sequence[str]) -> tuple[list[bytes | OSError], int]:
        method = self._method
        with self._arenas_lock:
            arena = self._arenas.pop() if self._arenas else _Arena()
        try:
            lanes = self.lanes_active()
            waiting = _Waiting(arena)
            outcomes: list[bytes | OSError | None] = []
            read = 0
            for name in names:
                try:
                    entry = _read_name(name, arena, method)
                except OSError as exc:
                    outcomes.append(_error(exc, name))
                    continue
                if isinstance(entry, int):
                    read += entry
                    # Once the lanes are loaded they take the rest of the job.
                    lanes = lanes or self.lanes_active()
                    if lanes:
                        waiting.keep(len(outcomes), entry)
                        outcomes.append(None)
                        if arena.used >= BATCH_BYTES:
                            self._lanes(waiting, outcomes)
                    else:
                        assert method.batch is not None
                        view = arena.view[arena.used : arena.used + entry]
                        outcomes.append(_hashlib_digest(method.batch, view))
                elif isinstance(entry, bytes):
                    outcomes.append(self._whole(entry))
                else:
                    outcomes.append(entry.outcome)
            if waiting.files:
                self._lanes(waiting, outcomes)
            # Every place kept for the lanes holds its digest by now.
            return outcomes, read  # type: ignore[return-value]
        finally:
            arena.used = 0
            with self._arenas_lock:
                self._arenas.append(arena)

    def _lanes(self, waiting: _Waiting, outcomes: list[bytes | OSError | None]) -> None:
        """Hash the contents waiting in the arena in lanes, and empty it.

        A file much longer than the lanes' fair share of the batch would run alone on one lane
        at the end, slower than hashlib runs it: hashlib hashes such files, the lanes the others.
        """
        from twocats.hashes import by_name
        from twocats.lanes.primitives import DEFAULT_LANES

        assert self._loader is not None
        stream, name = self._method.batch, self._method.lanes
        if stream is not None and name in DEFAULT_LANES:
            view = waiting.arena.view
            block = by_name(name).block_bytes
            for place, start, length in waiting.outlasting(DEFAULT_LANES[name], block):
                outcomes[place] = _hashlib_digest(stream, view[start : start + length])
        waiting.settle(outcomes, self._loader.hash(waiting.slices()) if waiting.files else [])

    def _whole(self, data: bytes) -> bytes:
        """The digest of a file read whole (a lane mode without a streaming form), hashed before
        the next file is read, so that at most one such file is held."""
        assert self._loader is not None
        return self._loader.hash(Slices(data, (0,), (len(data),)))[0]

    def close(self) -> None:
        """Stop the worker threads (pending jobs are abandoned)."""
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
    batches until ``loader`` (default: a :class:`LaneLoader`) has loaded the lanes.  Jobs of
    BATCH_FILES consecutive names are read and hashed on THREADS worker threads, at most
    PENDING of them ahead of the names yielded.  Standard input named more than once, and lane
    modes that read files whole, take one thread: the first ``-`` gets the input, and one whole
    file is held at a time.
    """
    method = method_for(algorithm, backend)
    threads = THREADS if method.stream is not None and names.count("-") <= 1 else 1
    scheduler = _JobHasher(method, backend, loader, threads)
    pending: deque[tuple[Sequence[str], Future[tuple[list[bytes | OSError], int]]]] = deque()
    read = files = 0
    # The first job is short, so that the files it read soon tell whether the lanes repay.
    cuts = [0, *range(min(FIRST_FILES, BATCH_FILES), len(names), BATCH_FILES), len(names)]
    try:
        for first, end in itertools.pairwise(cuts):
            job = names[first:end]
            pending.append((job, scheduler.submit(job)))
            # Write out whatever is complete, and wait while too much is in flight.
            while pending and (pending[0][1].done() or len(pending) > PENDING):
                done, future = pending.popleft()
                outcomes, nbytes = future.result()
                read, files = read + nbytes, files + len(done)
                scheduler.consider_lanes(read, files, len(names))
                yield from zip(done, outcomes, strict=True)
        while pending:
            done, future = pending.popleft()
            yield from zip(done, future.result()[0], strict=True)
    finally:
        scheduler.close()
