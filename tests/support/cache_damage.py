"""Helpers of the kernel cache tests: a derivation in a fresh process, and where code is."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: What the child process runs: one derivation with the cheapest profile, then a hash and its
#: verification, every warning recorded.
CHILD = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from twocats.kdf.engine import Engine
    from twocats.profiles import CHEAPEST
    output = Engine("simd").derive(b"pw", b"saltsaltsalt", CHEAPEST)
    from twocats import PasswordHasher
    hasher = PasswordHasher.from_params(CHEAPEST)
    assert hasher.verify(hasher.hash("pw"), "pw")
print(json.dumps({
    "output": output.hex(),
    "warnings": [str(w.message) for w in caught],
    "numba": "numba" in sys.modules,
}))
"""


@dataclass(frozen=True)
class Outcome:
    """What a fresh process made of a cache: its output, warnings and whether numba ran."""

    returncode: int
    output: str
    warnings: list[str]
    numba: bool
    stderr: str


def derive_in_child(
    cache: Path, *, aot: bool = True, run_as: list[str] | None = None, umask: int | None = None
) -> Outcome:
    """Derive the cheapest profile's output in a new process using the kernel cache ``cache``.

    ``run_as`` is the command that starts the Python interpreter (default: this one).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env |= {"TWOCATS_CACHE_DIR": str(cache), "TWOCATS_AOT": "1" if aot else "0"}
    done = subprocess.run(
        [*(run_as or [sys.executable]), "-c", CHILD],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd="/",
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )
    if done.returncode != 0 or not done.stdout.strip():
        return Outcome(done.returncode, "", [], False, done.stderr)
    found = json.loads(done.stdout.splitlines()[-1])
    return Outcome(0, found["output"], found["warnings"], found["numba"], done.stderr)


def text_ranges(data: bytes) -> list[tuple[int, int]]:
    """Return the (start, end) offsets of every ELF image's code section found in ``data``.

    An artefact is one ELF file; a numba cache entry holds its object code inside a pickle.
    """
    ranges: list[tuple[int, int]] = []
    start = data.find(b"\x7fELF")
    while start >= 0:
        ranges.extend(_elf_text(data, start))
        start = data.find(b"\x7fELF", start + 4)
    return ranges


def _elf_text(data: bytes, base: int) -> list[tuple[int, int]]:
    """The code sections of the 64-bit little-endian ELF image at ``base`` of ``data``."""
    try:
        (shoff,) = struct.unpack_from("<Q", data, base + 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, base + 0x3A)
        names_at = base + shoff + shstrndx * shentsize
        (names_offset,) = struct.unpack_from("<Q", data, names_at + 0x18)
        found = []
        for index in range(shnum):
            header = base + shoff + index * shentsize
            (name,) = struct.unpack_from("<I", data, header)
            offset, size = struct.unpack_from("<QQ", data, header + 0x18)
            end = data.find(b"\0", base + names_offset + name)
            section = data[base + names_offset + name : end]
            # numba's large code model puts the code in .ltext.
            if section.split(b".")[1:2] in ([b"text"], [b"ltext"]) and size:
                found.append((base + offset, base + offset + size))
        return found
    except struct.error:
        return []


def flip_bit(offset: int, bit: int = 0) -> Callable[[Path], None]:
    """A damage: flip one bit of a file at ``offset`` (negative: from the end)."""

    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[offset] ^= 1 << bit
        path.write_bytes(bytes(data))

    return damage


def truncate(fraction: float) -> Callable[[Path], None]:
    """A damage: keep only the first ``fraction`` of a file."""

    def damage(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * fraction)])

    return damage
