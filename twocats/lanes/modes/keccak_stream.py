"""KangarooTwelve and ParallelHash as streams: leaves hashed as they arrive, the final node last.

Both modes are trees of Keccak sponges: the leaves (KangarooTwelve's 8 KiB chunks, ParallelHash's
blocks) are independent sponges, and the final node is one sponge over their chaining values.  A
stream hashes every leaf that is complete in lanes (:func:`twocats.lanes.modes.keccak._leaves`)
and absorbs its chaining value into the final node's sponge at once, so that memory stays within
one leaf plus one ``update`` whatever the input's length::

    from twocats.lanes.modes.keccak_stream import KangarooTwelveStream

    stream = KangarooTwelveStream(128, 32)
    for piece in pieces:
        stream.update(piece)
    stream.digest()            # == keccak.kt128(b"".join(pieces), 32)

The final node's sponge advances one state through the compiled Keccak permutation (the first
column of a 4-state kernel), or through the plain-Python permutation on the reference backend.
Importing this module imports neither numpy nor numba.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from twocats.exceptions import InvalidParametersError
from twocats.lanes.algorithm import Algorithm, each
from twocats.lanes.modes import keccak
from twocats.lanes.modes._common import check_bytes, check_int
from twocats.lanes.modes.keccak import MAX_OUTPUT, _cshake_input, _leaves
from twocats.lanes.reference import keccak as ref
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ALGORITHMS", "LEAF_BATCH", "KangarooTwelveStream", "ParallelHashStream", "Sponge"]

#: Complete leaves are hashed in lanes once this many bytes of them have arrived.
LEAF_BATCH: Final = 1 << 20

# The state is 25 lanes of 64 bits; a 4-state kernel keeps lane i of state k at 4 * i + k.
_STATES: Final = 4


class Sponge:
    """One Keccak sponge absorbed piece by piece: ``absorb`` any bytes, then ``finish`` once."""

    def __init__(self, rate: int, rounds: int, backend: str) -> None:
        self._rate = rate
        self._rounds = rounds
        self._pending = bytearray()
        self._reference = backend == "reference"
        self._words: list[int] = [0] * 25
        self._state: npt.NDArray[np.uint64] | None = None
        self._permute: Any = None
        if not self._reference:
            import numpy as np

            from twocats.lanes.modes.keccak import _kernel

            self._state = np.zeros(25 * _STATES, dtype=np.uint64)
            self._permute = _kernel("keccak_x4", backend)

    def absorb(self, data: bytes) -> None:
        """Absorb ``data``; whole blocks go into the state, the rest waits for more."""
        self._pending += data
        whole = len(self._pending) - len(self._pending) % self._rate
        if whole:
            self._blocks(self._pending[:whole])
            del self._pending[:whole]

    def _blocks(self, data: bytes | bytearray) -> None:
        """XOR each ``rate``-byte block of ``data`` into the state and permute after each."""
        rate, words = self._rate, self._rate // 8
        if self._reference:
            for start in range(0, len(data), rate):
                for w in range(words):
                    lane = data[start + 8 * w : start + 8 * w + 8]
                    self._words[w] ^= int.from_bytes(lane, "little")
                ref.keccak_p1600(self._words, self._rounds)
            return
        import numpy as np

        state = self._state
        assert state is not None
        lanes = np.frombuffer(data, dtype="<u8").reshape(-1, words)
        column = state[: words * _STATES : _STATES]
        first = 24 - self._rounds
        for block in lanes:
            column ^= block
            self._permute(state, first)

    def finish(self, domain: int, length: int) -> bytes:
        """Pad with ``domain`` and pad10*1, absorb the last block and squeeze ``length`` bytes."""
        last = bytearray(self._pending)
        last.append(domain)
        last.extend(bytes(-len(last) % self._rate))
        last[-1] ^= 0x80
        self._blocks(last)
        out = bytearray()
        while True:
            out += self._rate_bytes()
            if len(out) >= length:
                return bytes(out[:length])
            self._blocks(bytes(self._rate))

    def _rate_bytes(self) -> bytes:
        """The first ``rate`` bytes of the state."""
        words = self._rate // 8
        if self._reference:
            return b"".join(word.to_bytes(8, "little") for word in self._words[:words])
        assert self._state is not None
        return self._state[: words * _STATES : _STATES].astype("<u8").tobytes()


@dataclass(eq=False)
class _LeafStream:
    """Bytes cut into leaves of ``leaf`` bytes; each complete leaf's chaining value goes to a
    sink, LEAF_BATCH bytes of leaves at a time, and the last (partial) leaf waits for the end."""

    leaf: int
    rate: int
    domain: int
    cv: int
    rounds: int
    backend: str
    leaves: int = field(default=0, init=False)
    _buffer: bytearray = field(default_factory=bytearray, init=False, repr=False)

    def update(self, data: bytes, sink: Sponge) -> None:
        """Add ``data``; hash the complete leaves once a batch of them is there."""
        self._buffer += data
        if len(self._buffer) >= max(LEAF_BATCH, self.leaf + 1):
            # Keep the last leaf back, even when complete: only the end says if it is the last.
            whole = (len(self._buffer) - 1) // self.leaf * self.leaf
            self._hash(self._buffer[:whole], sink)
            del self._buffer[:whole]

    def finish(self, sink: Sponge, tail: bytes = b"") -> None:
        """Hash what is left (with ``tail`` appended) as the last leaves."""
        self._buffer += tail
        self._hash(self._buffer, sink)
        self._buffer = bytearray()

    def _hash(self, data: bytes | bytearray, sink: Sponge) -> None:
        if not data:
            return
        size = self.leaf
        if self.backend == "reference":
            pieces = (bytes(data[i : i + size]) for i in range(0, len(data), size))
            cvs = b"".join(
                ref.sponge(piece, self.rate, self.domain, self.cv, self.rounds) for piece in pieces
            )
        else:
            cvs = _leaves(
                bytes(data), size, self.rate, self.domain, self.cv, self.rounds, self.backend
            )
        self.leaves += -(-len(data) // size)
        sink.absorb(cvs)


def _check_security(security: int) -> None:
    if security not in (128, 256):
        raise InvalidParametersError(f"security must be 128 or 256, not {security!r}")


class KangarooTwelveStream:
    """KT128 or KT256 (RFC 9861) of the bytes given to :meth:`update`, ``length`` bytes long.

    Equals :func:`twocats.lanes.modes.keccak.kt128` (or ``kt256``) of the whole input.
    """

    def __init__(
        self, security: int, length: int, *, custom: bytes = b"", backend: str | None = None
    ) -> None:
        _check_security(security)
        self._rate = ref.RATE_SHAKE128 if security == 128 else ref.RATE_SHAKE256
        self._length = check_int("length", length, 0, MAX_OUTPUT)
        custom = check_bytes("custom", custom)
        self._suffix = custom + ref.length_encode(len(custom))
        self._backend = resolve_backend(backend)
        self._first = bytearray()
        self._final = Sponge(self._rate, 12, self._backend)
        self._chunks = _LeafStream(ref.KT_CHUNK, self._rate, 0x0B, security // 4, 12, self._backend)

    def update(self, data: bytes) -> None:
        """Hash more input."""
        room = ref.KT_CHUNK - len(self._first)
        if room > 0:
            self._first += data[:room]
            data = data[room:]
            if len(self._first) == ref.KT_CHUNK:
                self._final.absorb(bytes(self._first) + b"\x03" + bytes(7))
        if data:
            self._chunks.update(data, self._final)

    def digest(self) -> bytes:
        """Return the output (once: the stream is spent)."""
        if len(self._first) < ref.KT_CHUNK:
            whole = bytes(self._first) + self._suffix
            if len(whole) <= ref.KT_CHUNK:
                single = Sponge(self._rate, 12, self._backend)
                single.absorb(whole)
                return single.finish(0x07, self._length)
            # The suffix completes the first chunk and begins the chained ones.
            self._first = bytearray()
            self.update(whole)
            self._chunks.finish(self._final)
        else:
            self._chunks.finish(self._final, self._suffix)
        self._final.absorb(ref.length_encode(self._chunks.leaves) + b"\xff\xff")
        return self._final.finish(0x06, self._length)


class ParallelHashStream:
    """ParallelHash128 or ParallelHash256 (SP 800-185 §6) of the bytes given to :meth:`update`.

    Equals :func:`twocats.lanes.modes.keccak.parallelhash128` (or ``parallelhash256``) of the
    whole input with the same block size, length, customization string and ``xof``.
    """

    def __init__(
        self,
        security: int,
        block_size: int,
        length: int,
        *,
        custom: bytes = b"",
        xof: bool = False,
        backend: str | None = None,
    ) -> None:
        _check_security(security)
        self._rate = ref.RATE_SHAKE128 if security == 128 else ref.RATE_SHAKE256
        self._block_size = check_int("block_size", block_size, 1, MAX_OUTPUT)
        self._length = check_int("length", length, 0, MAX_OUTPUT)
        self._xof = xof
        backend = resolve_backend(backend)
        prefix, self._domain = _cshake_input(
            b"", self._rate, b"ParallelHash", check_bytes("custom", custom)
        )
        self._final = Sponge(self._rate, 24, backend)
        self._final.absorb(prefix + ref.left_encode(block_size))
        self._blocks = _LeafStream(block_size, self._rate, 0x1F, security // 4, 24, backend)

    def update(self, data: bytes) -> None:
        """Hash more input."""
        self._blocks.update(data, self._final)

    def digest(self) -> bytes:
        """Return the output (once: the stream is spent)."""
        self._blocks.finish(self._final)
        bits = 0 if self._xof else 8 * self._length
        self._final.absorb(ref.right_encode(self._blocks.leaves) + ref.right_encode(bits))
        return self._final.finish(self._domain, self._length)


#: The registry's rows (:mod:`twocats.lanes.registry`) of the Keccak modes that stream: each
#: hashes a message whole in lanes, and streams a long input through its stream here.
ALGORITHMS: Final = (
    Algorithm(
        "kt128",
        32,
        each(keccak.kt128, length=32),
        None,
        "KangarooTwelve KT128, 32 bytes, 8 KiB chunks in lanes",
        stream=partial(KangarooTwelveStream, 128, 32),
    ),
    Algorithm(
        "kt256",
        64,
        each(keccak.kt256, length=64),
        None,
        "KT256, 64 bytes, 8 KiB chunks in lanes",
        stream=partial(KangarooTwelveStream, 256, 64),
    ),
    Algorithm(
        "parallelhash128",
        32,
        each(keccak.parallelhash128, block_size=8192, length=32),
        None,
        "ParallelHash128, B = 8192, 256-bit output",
        stream=partial(ParallelHashStream, 128, 8192, 32),
    ),
    Algorithm(
        "parallelhash256",
        64,
        each(keccak.parallelhash256, block_size=8192, length=64),
        None,
        "ParallelHash256, B = 8192, 512-bit output",
        stream=partial(ParallelHashStream, 256, 8192, 64),
    ),
)
