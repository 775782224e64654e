"""Input generation: random bytes, random text over a target's alphabet, and mutated seeds."""

from __future__ import annotations

import random
from collections.abc import Callable

from fuzz.contract import MARKER, MAX_INPUT, Target

# Byte strings that mutations plant: separators, escapes, invalid UTF-8, JSON syntax.
_TOKENS = (
    b"\x00",
    b"\xff",
    b"\x80",
    "\u00e9".encode(),
    "\u4e2d".encode(),
    b"\xed\xa0\x80",  # A UTF-8-encoded surrogate: invalid UTF-8.
    b"$",
    b",",
    b"=",
    b"$$",
    b"\\",
    b"*",
    b" ",
    b"  ",
    b"\t",
    b"\n",
    b"\r",
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b"null",
    b"true",
    b"==",
    b"+",
    b"/",
    MARKER.encode(),
)

# Replacements for a run of digits: odd spellings of numbers and numbers far out of range.
_NUMBERS = (
    b"0",
    b"00",
    b"01",
    b"-1",
    b"+1",
    b" 1",
    b"1 ",
    b"1.0",
    b"1e9",
    b"0x10",
    b"255",
    b"256",
    b"65536",
    b"9999999",
    b"10000000",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"18446744073709551616",
    b"9" * 40,
    b"9" * 5000,
    "\u0663".encode(),  # ARABIC-INDIC DIGIT THREE: int() accepts it, the formats must not.
    "\uff11".encode(),  # FULLWIDTH DIGIT ONE.
)


def _span(rng: random.Random, size: int) -> tuple[int, int]:
    """A random slice of a ``size``-byte input, usually a few bytes long, up to 64."""
    start = rng.randrange(size + 1)
    end = min(size, start + 1 + rng.randrange(1 << rng.randrange(7)))
    return start, end


def _flip_bit(rng: random.Random, data: bytes, target: Target) -> bytes:
    if not data:
        return data
    index = rng.randrange(len(data))
    return data[:index] + bytes([data[index] ^ (1 << rng.randrange(8))]) + data[index + 1 :]


def _set_byte(rng: random.Random, data: bytes, target: Target) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    index = rng.randrange(len(data))
    value = rng.choice((rng.randrange(256), rng.choice(target.alphabet)))
    return data[:index] + bytes([value]) + data[index + 1 :]


def _insert_token(rng: random.Random, data: bytes, target: Target) -> bytes:
    index = rng.randrange(len(data) + 1)
    return data[:index] + rng.choice(_TOKENS) + data[index:]


def _delete_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:start] + data[end:]


def _truncate(rng: random.Random, data: bytes, target: Target) -> bytes:
    cut = rng.randrange(len(data) + 1)
    return data[:cut] if rng.random() < 0.7 else data[cut:]


def _duplicate_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:end] + data[start:end] + data[end:]


def _fields(rng: random.Random, data: bytes, target: Target) -> tuple[bytes, list[bytes]]:
    separator = bytes([rng.choice(target.separators)])
    return separator, data.split(separator)


def _duplicate_field(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    index = rng.randrange(len(parts))
    parts.insert(rng.randrange(len(parts) + 1), parts[index])
    return separator.join(parts)


def _drop_field(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    del parts[rng.randrange(len(parts))]
    return separator.join(parts)


def _swap_fields(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    first, second = rng.randrange(len(parts)), rng.randrange(len(parts))
    parts[first], parts[second] = parts[second], parts[first]
    return separator.join(parts)


def _odd_number(rng: random.Random, data: bytes, target: Target) -> bytes:
    runs = [index for index, byte in enumerate(data) if 48 <= byte <= 57]
    if not runs:
        return _insert_token(rng, data, target)
    start = end = rng.choice(runs)
    while start > 0 and 48 <= data[start - 1] <= 57:
        start -= 1
    while end < len(data) and 48 <= data[end] <= 57:
        end += 1
    return data[:start] + rng.choice(_NUMBERS) + data[end:]


def _repeat_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    piece = data[start:end] or b"A"
    times = rng.choice((2, 10, 100, 1000, MAX_INPUT // len(piece)))
    return data[:start] + piece * times + data[end:]


def _splice(rng: random.Random, data: bytes, target: Target) -> bytes:
    other = rng.choice(target.seeds)
    return data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1) :]


def _swap_case(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:start] + data[start:end].swapcase() + data[end:]


MUTATIONS: tuple[Callable[[random.Random, bytes, Target], bytes], ...] = (
    _flip_bit,
    _set_byte,
    _insert_token,
    _delete_span,
    _truncate,
    _duplicate_span,
    _duplicate_field,
    _drop_field,
    _swap_fields,
    _odd_number,
    _repeat_span,
    _splice,
    _swap_case,
)


def generate(rng: random.Random, target: Target) -> bytes:
    """Return one input for ``target``: random, structured, or a mutated seed.

    The target's seeds must be loaded (:func:`fuzz.targets.load_seeds`).
    """
    choice = rng.random()
    if choice < 0.04:
        size = rng.choice((0, 1, 2, 8, 64, 300, 5000))
        data = rng.randbytes(rng.randrange(size + 1))
    elif choice < 0.12:
        size = rng.choice((1, 8, 64, 300))
        data = bytes(rng.choice(target.alphabet) for _ in range(rng.randrange(size + 1)))
    else:
        if target.structured is not None and choice < 0.40:
            data = target.structured(rng)
        else:
            data = rng.choice(target.seeds)
        for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3, 5))):
            data = rng.choice(MUTATIONS)(rng, data, target)
            if len(data) > MAX_INPUT:
                data = data[:MAX_INPUT]
    return data
