"""The lane schedulers' ahead-of-time artefacts: built once, then hash_many imports no numba, and
hash_slices (the one ``twocats sum`` calls) no numpy either."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from twocats.simd.aot import BUILD_NUMBA

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
    or numba.__version__ not in BUILD_NUMBA,
    reason="artefacts are built by the numba releases twocats.simd.aot knows, with the JIT on",
)

#: Hash with hash_slices, then hash_many, check against hashlib; print whether numba was imported
#: and whether numpy was before hash_many.
PROGRAM = """
import hashlib, sys, warnings
warnings.simplefilter("always")
from twocats.lanes.many import hash_slices
messages = [b"", b"a" * 65, bytes(range(256)) * 40]
buffer = bytearray(b"".join(messages))
lengths = [len(m) for m in messages]
for name in ("sha256", "blake2b"):
    expected = [hashlib.new(name, m).digest() for m in messages]
    assert hash_slices(buffer, [0, 0, 65], lengths, name) == expected, name
numpy_for_slices = "numpy" in sys.modules
from twocats.lanes import hash_many
for name in ("sha256", "blake2b"):
    assert hash_many(messages, name) == [hashlib.new(name, m).digest() for m in messages], name
print("numba" in sys.modules, numpy_for_slices)
"""


def _hash(cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TWOCATS_AOT_DIR"}
    env |= {"TWOCATS_CACHE_DIR": str(cache), "TWOCATS_AOT": "1"}
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, check=True
    )


def test_a_second_process_hashes_from_the_artefacts_without_numba(tmp_path: Path) -> None:
    """The first call builds the artefacts; the next process loads them and imports no numba (and
    no numpy for hash_slices)."""
    assert _hash(tmp_path).stdout.strip() == "True True"
    assert len(list((tmp_path / "aot").glob("*.so")) + list((tmp_path / "aot").glob("*.o"))) == 2
    second = _hash(tmp_path)
    assert second.stdout.strip() == "False False"
    assert "refused" not in second.stderr


def test_a_damaged_artefact_is_refused_and_the_digests_stay_right(tmp_path: Path) -> None:
    """A changed artefact fails its checksum: one warning, numba's build, hashlib's digests."""
    _hash(tmp_path)
    for artefact in [*(tmp_path / "aot").glob("*.so"), *(tmp_path / "aot").glob("*.o")]:
        data = bytearray(artefact.read_bytes())
        data[len(data) // 2] ^= 0xFF
        artefact.write_bytes(bytes(data))
    damaged = _hash(tmp_path)
    assert "compiled kernel refused" in damaged.stderr
    assert damaged.stdout.strip() == "True True"
