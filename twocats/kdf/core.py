"""TwoCats orchestration, shared by every backend: initial key, garlic loop, levels, slices, output.

Everything above the seam lives here; a backend only supplies that one function,
``fill_slice(mem, states, job) -> None`` (:class:`twocats.kdf.geometry.FillSlice`, its arguments the
frozen record :class:`twocats.kdf.geometry.SliceJob`).

The pure-Python seam is :func:`twocats.kdf.reference.fill_slice`; the compiled ones come from
``twocats.kdf.fill.threads.get_fill_slice``.  Hashing outside the seam (initial key, level results,
output) is tiny and uses :mod:`hashlib` directly.

The three published versions differ above the seam as follows (specs twocats.md and
twocats-2014-03.md):

* ``2015``: little-endian 26-byte header, overwrite levels from ``overwrite_cost``, levels too small
  for four blocks per region only scramble, the level result sums the region states.
* ``2014``: the 2015 loop with ``time_cost`` in the header (no side-channel byte) and the last slice
  of every main level run ``2**time_cost`` times.
* ``2014-03``: big-endian, a variable-length output buffer expanded in counter mode, per-level
  resizing, hard-wired overwrite levels, the level result sums the last W words of each region, and
  the level and server hashes see ``hash_size % 256`` bytes only.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeAlias

from twocats.exceptions import InvalidParametersError
from twocats.kdf import geometry, words
from twocats.kdf.geometry import FillSlice, LevelPlan, SliceJob
from twocats.kdf.reference import MASK, expand, hash_bytes, hash_parts, state_hash
from twocats.params import Params, check_update

__all__ = [
    "FillSlice",
    "Memory",
    "check_input",
    "check_params",
    "client_output",
    "required_words",
    "server_output",
    "update_output",
]

#: Inputs longer than this cannot be described by the 32-bit length fields of the header.
MAX_INPUT_BYTES = 0xFFFFFFFF

#: The March 2014 level and server hashes take the output size through an 8-bit parameter.
_BYTE = 256


#: Supplies the work area: called with the number of words needed (after every parameter and input
#: has been validated), it returns a context manager that yields at least that many words
#: (:data:`twocats.kdf.words.Words`) and takes them back afterwards.
Memory: TypeAlias = Callable[[int], AbstractContextManager[words.Words]]


# -- small helpers ---------------------------------------------------------------------------------


def check_input(name: str, value: object) -> bytes:
    """Return ``value`` as bytes, or raise without ever echoing its content.

    The length is checked before anything is copied, so an oversized input costs no memory.
    """
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidParametersError(f"{name} must be bytes; got {type(value).__name__}")
    size = value.nbytes if isinstance(value, memoryview) else len(value)
    if size > MAX_INPUT_BYTES:
        raise InvalidParametersError(
            f"{name} is {size} bytes long, more than the limit of {MAX_INPUT_BYTES} bytes "
            "(4 GiB - 1, the largest length the algorithm's 32-bit length fields can hold)"
        )
    return value if isinstance(value, bytes) else bytes(value)


def _words(data: bytes, big_endian: bool = False) -> list[int]:
    order = ">" if big_endian else "<"
    return list(struct.unpack(f"{order}{len(data) // 4}I", data))


def _bytes(words: list[int], big_endian: bool = False) -> bytes:
    order = ">" if big_endian else "<"
    return struct.pack(f"{order}{len(words)}I", *words)


def check_params(params: object) -> Params:
    """Return ``params`` if it is a :class:`Params`; refuse anything else."""
    if not isinstance(params, Params):
        kind = type(params).__name__
        raise InvalidParametersError(f"params must be a twocats.Params; got {kind}")
    return params


def required_words(params: Params, *, old_mem_cost: int | None = None) -> int:
    """Return how many 32-bit words of work memory a derivation (or an update) needs."""
    if old_mem_cost is not None:
        check_update(params, old_mem_cost)
    return geometry.required_words(geometry.plan(params, old_mem_cost=old_mem_cost))


def _region_states(
    hash_code: int, seed: list[int], parallelism: int, big_endian: bool
) -> memoryview:
    """The initial state of every region: ``Hv(seed, p)`` for p = 0 .. parallelism - 1."""
    return words.rows([state_hash(hash_code, seed, p, big_endian) for p in range(parallelism)])


def _fill_level(
    params: Params,
    plan: LevelPlan,
    states: memoryview,
    fill: FillSlice,
    mem: words.Words,
) -> None:
    """Run the four slices of one level, each as one call of the seam."""
    march = params.variant == "2014-03"
    per = plan.per_slice
    for s in range(4):
        dependent = s >= plan.resistant_slices
        # A data-independent slice reads the previous block whole: one sub-block per block.
        sub_blocklen = plan.sub_blocklen if dependent else plan.blocklen
        repetitions = 1
        if params.variant == "2014" and plan.main and s == 3:
            assert params.time_cost is not None
            repetitions = 1 << params.time_cost
        job = SliceJob(
            s * per,
            per,
            plan.blocks_per_region,
            plan.blocklen,
            sub_blocklen,
            plan.parallelism,
            params.lanes,
            params.multiplies,
            dependent,
            params.hash_code,
            1 if march else 0,
            (params.time_cost or 0) if march else 0,
        )
        for _ in range(repetitions):
            fill(mem, states, job)


# -- 2015 and 2014 ---------------------------------------------------------------------------------


def _initial_key(params: Params, password: bytes, salt: bytes, data: bytes) -> list[int]:
    """Hash the 26-byte header and the inputs into the first W-word key (twocats.md §4)."""
    assert params.start_mem_cost is not None
    assert params.overwrite_cost is not None
    ow = geometry.absolute_overwrite_level(params.start_mem_cost, params.overwrite_cost)
    sizes = struct.pack(
        "<5I", len(password), len(salt), len(data), params.block_size, params.sub_block_size
    )
    if params.variant == "2015":
        tail = (
            params.start_mem_cost,
            params.multiplies,
            params.lanes,
            params.parallelism,
            ow,
            int(params.side_channel_resistant),
        )
    else:
        assert params.time_cost is not None
        tail = (
            params.start_mem_cost,
            params.time_cost,
            params.multiplies,
            params.lanes,
            params.parallelism,
            ow,
        )
    header = sizes + bytes(tail)
    return _words(hash_parts(params.hash_code, header, password, salt, data))


def _scramble(hash_code: int, h: list[int]) -> list[int]:
    """``Hs(h)``: hash the key and read the digest back as words."""
    return _words(hash_bytes(hash_code, _bytes(h)))


def _garlic(
    params: Params,
    h: list[int],
    plans: tuple[LevelPlan, ...],
    fill: FillSlice,
    mem: words.Words,
) -> list[int]:
    """The 2015/2014 garlic loop over the active levels; returns the client key."""
    code = params.hash_code
    for plan in plans:
        if plan.fills:
            states = _region_states(code, h, plan.parallelism, big_endian=False)
            _fill_level(params, plan, states, fill, mem)
            sums = [sum(column) for column in zip(*states.tolist(), strict=True)]
            # The region states are derived from the password: leave no copy behind.
            words.zero(states)
            summed = [(word + total) & MASK for word, total in zip(h, sums, strict=True)]
            h = _scramble(code, summed)
        if plan.mem_cost != params.mem_cost:
            h = _scramble(code, h)
    return h


# -- March 2014 ------------------------------------------------------------------------------------


def _expand_2014_03(hash_code: int, key: list[int], size: int) -> bytes:
    """``E(key, size)``: the first ``size`` bytes of ``H(key || BE32(i))`` for i = 0, 1, ..."""
    return _bytes(expand(hash_code, key, -(-size // 4), big_endian=True), big_endian=True)[:size]


def _extract_2014_03(hash_code: int, message: bytes) -> list[int]:
    """``X(message)``: W big-endian words of the digest of ``message``."""
    return _words(hash_bytes(hash_code, message), big_endian=True)


def _scramble_2014_03(hash_code: int, buffer: bytearray, size: int) -> None:
    """``Scr(buffer, size)``: replace the first ``size`` bytes by the expansion of their digest."""
    key = _extract_2014_03(hash_code, bytes(buffer[:size]))
    buffer[:size] = _expand_2014_03(hash_code, key, size)


def _initial_buffer_2014_03(params: Params, password: bytes, salt: bytes, data: bytes) -> bytearray:
    """The March 2014 key header, hashed and expanded into the hash_size-byte buffer (§5)."""
    assert params.hash_size is not None
    assert params.time_cost is not None
    assert params.start_mem_cost is not None
    digest = hash_parts(
        params.hash_code,
        struct.pack(">II", params.hash_size, len(password)),
        password,
        struct.pack(">I", len(salt)),
        salt,
        struct.pack(">I", len(data)),
        data,
        bytes(
            (
                params.start_mem_cost,
                params.time_cost,
                params.multiplies,
                params.lanes,
                params.parallelism,
            )
        ),
        struct.pack(">II", params.block_size, params.sub_block_size),
    )
    key = _words(digest, big_endian=True)
    return bytearray(_expand_2014_03(params.hash_code, key, params.hash_size))


def _garlic_2014_03(
    params: Params,
    buffer: bytearray,
    plans: tuple[LevelPlan, ...],
    fill: FillSlice,
    mem: words.Words,
) -> None:
    """The March 2014 garlic loop, rewriting ``buffer`` (the client output) in place."""
    assert params.hash_size is not None
    code = params.hash_code
    width = params.state_words
    short = params.hash_size % _BYTE
    for plan in plans:
        h = _extract_2014_03(code, bytes(buffer[:short]))
        states = _region_states(code, h, plan.parallelism, big_endian=True)
        _fill_level(params, plan, states, fill, mem)
        region_words = plan.blocks_per_region * plan.blocklen
        for p in range(plan.parallelism):
            end = (p + 1) * region_words
            tail = mem[end - width : end].tolist()
            h = [(word + extra) & MASK for word, extra in zip(h, tail, strict=True)]
        words.zero(states)
        buffer[:short] = _expand_2014_03(code, h, short)
        if plan.mem_cost != params.mem_cost:
            _scramble_2014_03(code, buffer, params.hash_size)


# -- entry points ----------------------------------------------------------------------------------


def client_output(
    params: Params,
    password: bytes,
    salt: bytes,
    data: bytes,
    fill: FillSlice,
    memory: Memory,
) -> bytes:
    """Everything but the final hash: the client half of server relief."""
    password = check_input("password", password)
    salt = check_input("salt", salt)
    data = check_input("data", data)
    plans = geometry.plan(params)
    with memory(geometry.required_words(plans)) as mem:
        if params.variant == "2014-03":
            buffer = _initial_buffer_2014_03(params, password, salt, data)
            _garlic_2014_03(params, buffer, plans, fill, mem)
            return bytes(buffer)
        h = _initial_key(params, password, salt, data)
        return _bytes(_garlic(params, h, plans, fill, mem))


def _check_output(name: str, value: bytes, params: Params) -> bytes:
    """Check an output of ``params`` handed back in as ``name``; return it as bytes."""
    value = check_input(name, value)
    if len(value) != params.output_size:
        raise InvalidParametersError(
            f"{name} must be {params.output_size} bytes long for these parameters; got {len(value)}"
        )
    return value


def server_output(params: Params, client: bytes) -> bytes:
    """The server half of server relief: one more hash of the client output."""
    client = _check_output("client_output", client, params)
    if params.variant == "2014-03":
        assert params.hash_size is not None
        buffer = bytearray(client)
        _scramble_2014_03(params.hash_code, buffer, params.hash_size % _BYTE)
        return bytes(buffer)
    return hash_bytes(params.hash_code, client)


def update_output(
    params: Params,
    stored: bytes,
    old_mem_cost: int,
    fill: FillSlice,
    memory: Memory,
) -> bytes:
    """Raise the memory cost of a stored final output from ``old_mem_cost`` to ``params.mem_cost``.

    ``old_mem_cost`` is the mem_cost the stored output was derived with (the reference's
    ``oldMemCost`` is this plus one).  Only ``hash_type``, ``multiplies``, ``lanes``,
    ``parallelism``, the block sizes, the side-channel flag, ``time_cost`` and ``hash_size`` of
    ``params`` take part; ``start_mem_cost`` and ``overwrite_cost`` shaped the stored output and
    play no further role.
    """
    check_update(params, old_mem_cost)
    stored = _check_output("stored", stored, params)
    plans = geometry.plan(params, old_mem_cost=old_mem_cost)
    with memory(geometry.required_words(plans)) as mem:
        if params.variant == "2014-03":
            buffer = bytearray(stored)
            _garlic_2014_03(params, buffer, plans, fill, mem)
            client = bytes(buffer)
        else:
            client = _bytes(_garlic(params, _words(stored), plans, fill, mem))
    return server_output(params, client)
