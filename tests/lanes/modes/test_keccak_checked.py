"""A damaged Keccak kernel whose digest record was rewritten to match never gives a digest.

The issue's reproduction: one round constant changed inside the cached entries of the 4-state
permutation (a KangarooTwelve stream's final node) and the 4-state sponge (SHAKE of one file),
their digest records rewritten to match, as a damaged entry the records cannot tell from a good
one.  ``twocats sum -a kt128`` of a file long enough to be streamed and ``twocats sum -a
shake128`` of one small file then give the reference's digests, with one warning each, because
every kernel passes its own known-answer check before its first use, whichever path calls it.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from twocats.lanes.modes.keccak import kt128

# Round constant 14 of Keccak-f[1600], used by the 12-round and the 24-round permutations alike,
# and the value it is damaged to.
_CONSTANT = struct.pack("<Q", 0x8000000000008089)
_DAMAGED = struct.pack("<Q", 0x8000000000008088)


def _damage(root: Path, kernel: str) -> None:
    """Change the round constant in the cache entries of ``kernel``; rewrite their records."""
    damaged = 0
    for entry in root.rglob(f"*.{kernel}__simd-*.nbc"):
        data = entry.read_bytes()
        if _CONSTANT not in data:
            continue
        entry.write_bytes(data.replace(_CONSTANT, _DAMAGED))
        for record in entry.parent.glob("*.sha256"):
            digests = json.loads(record.read_text())
            if entry.name in digests:
                digests[entry.name] = hashlib.sha256(entry.read_bytes()).hexdigest()
                record.write_text(json.dumps(digests))
                damaged += 1
    assert damaged, f"no cache entry of {kernel} holds the round constant"


def _sum(algorithm: str, path: Path, root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env.pop("NUMBA_DISABLE_JIT", None)
    env |= {"TWOCATS_CACHE_DIR": str(root), "TWOCATS_AOT": "0"}
    return subprocess.run(
        [sys.executable, "-m", "twocats.cli", "sum", "-a", algorithm, str(path)],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_damaged_keccak_kernels_never_give_a_wrong_digest(tmp_path: Path) -> None:
    """Streamed KT128 and SHAKE128 of one file, from damaged entries: the reference's digests,
    exit 0, one warning each."""
    from twocats.simd import _jit

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    root = tmp_path / "cache"
    big, small = tmp_path / "big", tmp_path / "small"
    # Longer than twocats sum's small files, so it is streamed.
    big.write_bytes(bytes(range(251)) * 6000)
    small.write_bytes(bytes(range(251)) * 4)
    for algorithm, path in (("kt128", big), ("shake128", small)):
        assert _sum(algorithm, path, root).returncode == 0
    _damage(root, "keccak_x4")
    _damage(root, "keccak_sponge_x4")

    expected = {
        "kt128": (big, kt128(big.read_bytes(), 32, backend="reference").hex()),
        "shake128": (small, hashlib.shake_128(small.read_bytes()).hexdigest(32)),
    }
    for algorithm, (path, digest) in expected.items():
        done = _sum(algorithm, path, root)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"{digest}  {path}\n", algorithm
        warnings = [line for line in done.stderr.splitlines() if "Warning:" in line]
        assert len(warnings) == 1, done.stderr
        assert "fails its known-answer check" in warnings[0]
