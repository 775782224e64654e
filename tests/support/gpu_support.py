"""What the GPU tests share: the cases, their expected outputs, and running the kernels on them.

The kernels run in a process of their own (``tests/support/gpu_cases.py``): in numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, on every machine) or on a real GPU.  The expected outputs
are computed here, in the test process: TwoCats by the known-answer vectors and the ``reference``
backend, Argon2id by argon2-cffi's ``hash_secret_raw``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from argon2.low_level import Type, hash_secret_raw

from tests.support.environment import need
from twocats import Params
from twocats.kdf import derive
from twocats.kdf.vectors import load_vectors

HERE = Path(__file__).resolve().parent

#: Small known-answer vectors, one or more of every hash type (1-4 KiB of memory each).
VECTOR_IDS = ("tc-0034", "tc-0060", "tc-0205", "tc-0048", "tc-0074")

#: Parameters checked against the reference backend: lanes 1-16, multiplies 0-8, every hash
#: type, side-channel resistance, several levels (one too small to fill) and a parallelism of 3.
REFERENCE_PARAMS = (
    Params(hash_type="blake2s", mem_cost=1, start_mem_cost=0, multiplies=0, lanes=1,
           parallelism=1, block_size=32, sub_block_size=16),
    Params(hash_type="sha256", mem_cost=1, multiplies=8, lanes=4, parallelism=3, block_size=64,
           sub_block_size=16, side_channel_resistant=True),
    Params(hash_type="blake2b", mem_cost=1, multiplies=3, lanes=2, parallelism=2, block_size=64,
           sub_block_size=32),
    Params(hash_type="sha512", mem_cost=2, start_mem_cost=1, multiplies=5, lanes=16,
           parallelism=1, block_size=128, sub_block_size=64),
    Params(hash_type="blake2s", mem_cost=2, start_mem_cost=0, multiplies=1, lanes=8,
           parallelism=2, block_size=256, sub_block_size=64),
)  # fmt: skip

#: Argon2id at the least memory argon2-cffi allows (8 KiB per lane): t = 1..2 and p = 1..2.
ARGON2_COSTS = ((1, 8, 1), (2, 8, 1), (1, 16, 2), (2, 16, 2))

#: Two guesses of one batch, so that the guesses of a batch are seen to stay apart.
PASSWORDS = (b"password", b"correct horse")
SALTS = (b"saltsalt", b"another salt!")


@dataclasses.dataclass(frozen=True)
class Case:
    """One batch of guesses and the outputs the kernels must give."""

    name: str
    kind: str
    document: dict[str, Any]
    expected: tuple[bytes, ...]


def _fields(params: Params) -> dict[str, Any]:
    return {field.name: getattr(params, field.name) for field in dataclasses.fields(params)}


def twocats_cases(*, vectors: bool = True, reference: bool = True) -> list[Case]:
    """The TwoCats batches: known-answer vectors (one guess each), reference comparisons (two)."""
    cases = []
    if vectors:
        path = HERE.parent / "vectors" / "twocats-2015.jsonl"
        known = {vector.id: vector for vector in load_vectors(path)}
        for vector_id in VECTOR_IDS:
            vector = known[vector_id]
            document = {
                "params": _fields(vector.params()),
                "passwords": [vector.password.hex()],
                "salts": [vector.salt.hex()],
                "data": vector.data.hex(),
            }
            cases.append(Case(vector_id, "twocats", document, (vector.expected,)))
    if reference:
        for number, params in enumerate(REFERENCE_PARAMS):
            data = b"associated data" if number % 2 else b""
            expected = tuple(
                derive(pw, salt, params, data=data, backend="reference")
                for pw, salt in zip(PASSWORDS, SALTS, strict=True)
            )
            document = {
                "params": _fields(params),
                "passwords": [pw.hex() for pw in PASSWORDS],
                "salts": [salt.hex() for salt in SALTS],
                "data": data.hex(),
            }
            name = f"{params.hash_type}-l{params.lanes}-x{params.multiplies}-p{params.parallelism}"
            cases.append(Case(name, "twocats", document, expected))
    return cases


def argon2id_cases(costs: tuple[tuple[int, int, int], ...] = ARGON2_COSTS) -> list[Case]:
    """The Argon2id batches: the first of every cost with two guesses, the others with one."""
    cases = []
    for number, (t, m, p) in enumerate(costs):
        count = 2 if number == 0 else 1
        passwords, salts = PASSWORDS[:count], SALTS[:count]
        expected = tuple(
            bytes(
                hash_secret_raw(
                    pw, salt, time_cost=t, memory_cost=m, parallelism=p, hash_len=32, type=Type.ID
                )
            )
            for pw, salt in zip(passwords, salts, strict=True)
        )
        document = {
            "t": t,
            "m": m,
            "p": p,
            "passwords": [pw.hex() for pw in passwords],
            "salts": [salt.hex() for salt in salts],
        }
        cases.append(Case(f"argon2id-t{t}-m{m}-p{p}", "argon2id", document, expected))
    return cases


def need_numba_cuda() -> None:
    """Skip (a failure in CI) when numba-cuda, the gpu extra, is not installed."""
    if importlib.util.find_spec("numba_cuda") is None:
        need("numba-cuda (the gpu extra)")


def run_cases(
    cases: list[Case], *, simulator: bool, timeout: float = 300
) -> list[tuple[bytes, ...]]:
    """Run the kernels on ``cases`` in a process of their own; return the outputs of each case."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    request: dict[str, list[dict[str, Any]]] = {"twocats": [], "argon2id": []}
    for case in cases:
        request[case.kind].append(case.document)
    done = subprocess.run(
        # The simulator's numpy scalars warn on every wrapping add: silence that one warning.
        [
            sys.executable,
            "-W",
            "ignore:overflow encountered:RuntimeWarning",
            str(HERE / "gpu_cases.py"),
        ],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout)
    queues = {kind: list(answers[kind]) for kind in answers}
    return [tuple(bytes.fromhex(text) for text in queues[case.kind].pop(0)) for case in cases]


def gpu_available() -> bool:
    """Whether numba's CUDA target finds a real GPU (asked in a process of its own)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = "from numba import cuda; print(cuda.is_available())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode == 0 and done.stdout.strip().endswith("True")
