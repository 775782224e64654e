"""Readers for the official known-answer files the lane modes are checked against.

The files live outside the package (tests read them from the team's shared vector folder and skip
when it is absent); this module only knows their formats, described in that folder's README:

* ``blake2-kat.json``: a JSON array of ``{"hash", "in", "key", "out"}`` (BLAKE2 repository).
* ``lsh-kat.jsonl``: one object per line with ``algorithm`` (``LSH-256-224`` ... ``LSH-512-512``),
  ``message_hex`` and ``digest_hex`` (Crypto++ test vectors).
* ``k12-parallelhash-kat.jsonl``: TurboSHAKE, KT128/KT256 and ParallelHash vectors whose long
  inputs are given by a rule (``ptn(17^3)``, ``ff*7``) instead of hex.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Blake2Vector",
    "KeccakVector",
    "LshVector",
    "load_blake2",
    "load_keccak",
    "load_lsh",
    "pattern_bytes",
]


@dataclass(frozen=True)
class Blake2Vector:
    """One entry of ``blake2-kat.json``."""

    hash: str
    data: bytes
    key: bytes
    digest: bytes


@dataclass(frozen=True)
class LshVector:
    """One entry of ``lsh-kat.jsonl``: family (256 or 512), digest size, message and digest."""

    algorithm: str
    family: int
    digest_size: int
    data: bytes
    digest: bytes


@dataclass(frozen=True)
class KeccakVector:
    """One entry of ``k12-parallelhash-kat.jsonl`` with its inputs expanded.

    ``digest`` holds output bytes [``offset``, ``output_len``).  ``domain`` is set for TurboSHAKE,
    ``block_size`` for ParallelHash.
    """

    algorithm: str
    data: bytes
    custom: bytes
    domain: int | None
    block_size: int | None
    output_len: int
    offset: int
    digest: bytes
    name: str


def pattern_bytes(n: int, modulus: int = 251) -> bytes:
    """Return the pattern input bytes(i % modulus for i in range(n))."""
    period = bytes(range(modulus))
    return (period * (n // modulus + 1))[:n]


def _expand(rule: str | None, length: int | None, hex_text: str | None) -> bytes:
    """Rebuild an input from its hex text or, for long inputs, from its rule."""
    if hex_text is not None:
        return bytes.fromhex(hex_text)
    if rule is None or length is None:
        return b""
    if re.fullmatch(r"ptn\([0-9^]+\)", rule):
        return pattern_bytes(length)
    if re.fullmatch(r"ff\*[0-9]+", rule):
        return b"\xff" * length
    raise ValueError(f"unknown input rule {rule!r}")


def load_blake2(path: Path) -> list[Blake2Vector]:
    """Read ``blake2-kat.json``."""
    entries = json.loads(path.read_text())
    return [
        Blake2Vector(
            e["hash"], bytes.fromhex(e["in"]), bytes.fromhex(e["key"]), bytes.fromhex(e["out"])
        )
        for e in entries
    ]


def load_lsh(path: Path) -> list[LshVector]:
    """Read ``lsh-kat.jsonl``."""
    vectors = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        _, family, bits = e["algorithm"].split("-")
        vectors.append(
            LshVector(
                e["algorithm"],
                int(family),
                int(bits) // 8,
                bytes.fromhex(e["message_hex"]),
                bytes.fromhex(e["digest_hex"]),
            )
        )
    return vectors


def load_keccak(path: Path) -> list[KeccakVector]:
    """Read ``k12-parallelhash-kat.jsonl`` and expand every rule-given input."""
    vectors = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        data = _expand(e["message_rule"], e["message_len"], e["message_hex"])
        custom = _expand(e["customization_rule"], e["customization_len"], e["customization_hex"])
        name = f"{e['algorithm']}-{e['message_rule']}-{e['customization_rule']}-{e['output_len']}"
        if e["domain_byte"] is not None:
            name += f"-D{e['domain_byte']}"
        vectors.append(
            KeccakVector(
                e["algorithm"],
                data,
                custom,
                int(e["domain_byte"], 16) if e["domain_byte"] is not None else None,
                e["block_size"],
                e["output_len"],
                e["digest_offset"],
                bytes.fromhex(e["digest_hex"]),
                name,
            )
        )
    return vectors
