"""The attacker's GPU: TwoCats and argon2id guesses per second at equal defender time.

``python -m bench gpu [--runs N] [--repeats N] [--max-guesses N] [--out DIR] [--smoke]`` measures,
for each built-in profile (:data:`twocats.profiles.BUILT_IN`), in one process:

* the defender's time on this machine's CPU, as ``twocats compare`` measures it: the median of
  ``--runs`` verifications through a :class:`~twocats.PasswordHasher` (``simd`` backend) after a
  warm-up, and the argon2id parameters that take the same time (t=1, the profile's parallelism,
  the memory found by :func:`twocats.perf.peers.argon2id_at_time`);
* the GPU's guesses per second for both: as many guesses in flight as fit in 70% of the free
  device memory (at most ``--max-guesses``), the kernels of :mod:`twocats.gpu` timed from launch
  to the device's end, median of ``--repeats`` batches after a warm-up batch.  The first guess of
  each batch is checked against the CPU's own derivation (TwoCats) and argon2-cffi (argon2id);
  the host's share (the header hash, H0 and the first blocks, the final hash) is not timed;
* the GPU's memory bandwidth, measured in the same run: a device-to-device copy of a large buffer,
  counted as the bytes read plus the bytes written per second;
* the ceiling of each algorithm: that bandwidth over the bytes each guess must move, where each
  block is written once and each block it reads that is not the block just written (the
  reference block, and for argon2id after the first pass the block it overwrites) is read once;
  the kernels' guesses per second are given as a fraction of it;
* the result: TwoCats guesses/s over argon2id guesses/s, at equal defender time.  Below 1, a TwoCats
  guess costs the attacker's GPU more than an argon2id guess that costs the defender the same.

Without a CUDA GPU (or without numba-cuda, or in numba's CUDA simulator) it prints one line that
says so and exits 0: it measures nothing and never prints an estimate.  ``bench/gpu_run.sh`` runs
the GPU tests and this suite on a GPU machine in a few minutes; ``--smoke`` runs the cheapest
parameters once and writes no files.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from bench.harness import (
    heading,
    load_average,
    machine,
    measured,
    suite_parser,
    write_document,
)

__all__ = ["docs_section", "gpu_missing", "main", "markdown", "smoke"]

#: The share of the free device memory a batch of guesses may take.
MEMORY_SHARE = 0.7

#: The bandwidth test's buffer: at most this many bytes, and at most a tenth of the free memory.
COPY_BYTES = 4 << 30

PASSWORD_PREFIX = b"guess "
SALT = b"twocats compare!"


def gpu_missing() -> str | None:
    """Why nothing can be measured here (no numba-cuda, the simulator, no GPU), or None."""
    try:
        from twocats.gpu import _cuda
    except ImportError as error:
        return f"bench gpu: nothing measured: {error}"
    if _cuda.simulated():
        return "bench gpu: nothing measured: NUMBA_ENABLE_CUDASIM=1 selects numba's CUDA simulator"
    if not _cuda.cuda.is_available():
        return "bench gpu: nothing measured: no CUDA GPU on this machine"
    return None


def _seconds(call: Callable[[], object], repeats: int) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls of ``call``, one at a time, after a warm-up call."""
    from twocats.perf.peers import time_calls

    return list(time_calls(call, repeats).wall.values)


def _throughput(guesses: int, times: list[float], bytes_per_guess: int) -> dict[str, Any]:
    """A kernel's batches of ``guesses``: their times, the median and the guesses per second."""
    median = statistics.median(times)
    return {
        "guesses_in_flight": guesses,
        "times_s": times,
        "median_s": median,
        "guesses_per_second": guesses / median,
        "bytes_per_guess": bytes_per_guess,
    }


def _device() -> dict[str, Any]:
    from twocats.gpu._cuda import cuda

    device = cuda.get_current_device()
    free, total = cuda.current_context().get_memory_info()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    return {
        "name": name,
        "compute_capability": list(device.compute_capability),
        "memory_bytes": int(total),
        "free_bytes": int(free),
    }


def _free_bytes() -> int:
    from twocats.gpu._cuda import cuda

    free, _total = cuda.current_context().get_memory_info()
    return int(free)


def bandwidth(repeats: int) -> dict[str, Any]:
    """Measure a device-to-device copy: bytes read plus bytes written per second."""
    import numpy as np

    from twocats.gpu._cuda import cuda

    size = min(COPY_BYTES, _free_bytes() // 10) // 8 * 8
    source = cuda.device_array(size // 8, dtype=np.uint64)
    target = cuda.device_array_like(source)

    def copy() -> None:
        target.copy_to_device(source)
        cuda.synchronize()

    times = _seconds(copy, repeats)
    median = statistics.median(times)
    return {
        "copy_bytes": size,
        "times_s": times,
        "median_s": median,
        "bytes_per_second": 2 * size / median,
    }


def _guesses(per_guess: int, most: int) -> int:
    return max(1, min(most, int(_free_bytes() * MEMORY_SHARE) // per_guess))


def twocats_traffic(params: Any) -> int:
    """Bytes one TwoCats guess must move: block 0 of each region written, then per block one
    reference block read and one block written."""
    from twocats.kdf import geometry

    total = 0
    for plan in geometry.plan(params):
        if plan.fills:
            blocks = plan.parallelism * plan.blocks_per_region
            total += 4 * plan.blocklen * (2 * blocks - plan.parallelism)
    return total


def argon2id_traffic(params: Any) -> int:
    """Bytes one argon2id guess must move: the first pass reads a reference block and writes a
    block (the first two of each lane only written); a later pass also reads the block it
    overwrites."""
    first = 1024 * (2 * params.blocks - 2 * params.parallelism)
    return first + 1024 * 3 * params.blocks * (params.time_cost - 1)


def _gpu_twocats(params: Any, repeats: int, most: int) -> dict[str, Any]:
    """Guesses per second of the TwoCats kernel at ``params``, the first guess checked."""
    import numpy as np

    from twocats.gpu.twocats_fill import Batch
    from twocats.kdf import core, derive
    from twocats.kdf.reference import hash_bytes

    per_guess = params.memory_bytes + 4096
    guesses = _guesses(per_guess, most)
    passwords = [PASSWORD_PREFIX + str(n).encode() for n in range(guesses)]
    keys = np.array([core._initial_key(params, pw, SALT, b"") for pw in passwords], np.uint32)
    batch = Batch(params, guesses)

    def run() -> None:
        batch.load(keys)
        batch.run()

    times = _seconds(run, repeats)
    output = hash_bytes(params.hash_code, batch.client_keys()[0].astype("<u4").tobytes())
    if output != derive(passwords[0], SALT, params):
        raise AssertionError("the GPU's TwoCats output differs from the CPU's")
    return _throughput(guesses, times, twocats_traffic(params))


def _gpu_argon2id(memory_kib: int, parallelism: int, repeats: int, most: int) -> dict[str, Any]:
    """Guesses per second of the argon2id kernel at t=1, the first guess checked."""
    import numpy as np
    from argon2.low_level import Type, hash_secret_raw

    from twocats.gpu.argon2 import Argon2Batch, Argon2Params, first_blocks, long_hash

    params = Argon2Params(1, memory_kib, parallelism)
    guesses = _guesses(1024 * params.blocks + 2048 * parallelism + 1024, most)
    passwords = [PASSWORD_PREFIX + str(n).encode() for n in range(guesses)]
    first = np.stack([first_blocks(params, pw, SALT) for pw in passwords])
    batch = Argon2Batch(params, guesses)

    def run() -> None:
        batch.load(first)
        batch.run()

    times = _seconds(run, repeats)
    tag = long_hash(32, batch.final_blocks()[0].astype("<u8").tobytes())
    expected = hash_secret_raw(
        passwords[0], SALT, time_cost=1, memory_cost=memory_kib, parallelism=parallelism,
        hash_len=32, type=Type.ID,
    )  # fmt: skip
    if tag != bytes(expected):
        raise AssertionError("the GPU's argon2id tag differs from argon2-cffi's")
    return _throughput(guesses, times, argon2id_traffic(params))


def _defender(params: Any, runs: int) -> tuple[float, int]:
    """The defender's seconds per verification, and the argon2id memory taking that time."""
    from twocats.password import PasswordHasher
    from twocats.perf.peers import PASSWORD, argon2id_at_time, time_calls

    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes)
    encoded = hasher.hash(PASSWORD)
    seconds = time_calls(lambda: hasher.verify(encoded, PASSWORD), runs).wall.median
    memory, _timing = argon2id_at_time(seconds, params.memory_bytes, params.parallelism, runs)
    return seconds, memory // 1024


def _profile_row(
    name: str, params: Any, copy_rate: float, runs: int, repeats: int, most: int
) -> dict[str, Any]:
    seconds, argon_kib = _defender(params, runs)
    tc = _gpu_twocats(params, repeats, most)
    ar = _gpu_argon2id(argon_kib, params.parallelism, repeats, most)
    for entry in (tc, ar):
        entry["ceiling_guesses_per_second"] = copy_rate / entry["bytes_per_guess"]
        ceiling = entry["ceiling_guesses_per_second"]
        entry["fraction_of_ceiling"] = entry["guesses_per_second"] / ceiling
    return {
        "profile": name,
        "twocats_parameters": (
            f"m={params.mem_cost},l={params.lanes},p={params.parallelism},x={params.multiplies}"
        ),
        "twocats_memory_bytes": params.memory_bytes,
        "defender_seconds": seconds,
        "argon2id_parameters": f"t=1,m={argon_kib},p={params.parallelism}",
        "argon2id_memory_bytes": argon_kib * 1024,
        "twocats": tc,
        "argon2id": ar,
        "ratio_twocats_over_argon2id": tc["guesses_per_second"] / ar["guesses_per_second"],
    }


def run(runs: int, repeats: int, most: int) -> dict[str, Any]:
    """Measure every built-in profile; return the report's document."""
    from twocats.profiles import BUILT_IN, PROFILES

    names = {id(params): name for name, params in PROFILES.items()}
    before = load_average()
    device = _device()
    copy = bandwidth(repeats)
    rows = [
        _profile_row(names[id(params)], params, copy["bytes_per_second"], runs, repeats, most)
        for params in BUILT_IN
    ]
    return {
        "suite": "gpu",
        "title": "Attacker guesses per second on a GPU at equal defender time",
        "machine": machine(),
        "load_before": before,
        "load_after": load_average(),
        "gpu": device,
        "bandwidth": copy,
        "rows": rows,
    }


def _rate(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def table(document: dict[str, Any]) -> list[str]:
    """The report's table, one row per profile."""
    lines = [
        (
            "| profile | defender ms | argon2id at equal time | TwoCats guesses/s | of ceiling "
            "| argon2id guesses/s | of ceiling | TwoCats / argon2id |"
        ),
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in document["rows"]:
        tc, ar = row["twocats"], row["argon2id"]
        lines.append(
            f"| {row['profile']} (`{row['twocats_parameters']}`) "
            f"| {row['defender_seconds'] * 1000:.0f} | `{row['argon2id_parameters']}` "
            f"| {_rate(tc['guesses_per_second'])} | {tc['fraction_of_ceiling']:.0%} "
            f"| {_rate(ar['guesses_per_second'])} | {ar['fraction_of_ceiling']:.0%} "
            f"| {row['ratio_twocats_over_argon2id']:.3f} |"
        )
    return lines


def markdown(document: dict[str, Any]) -> str:
    """The report as markdown."""
    gpu, copy = document["gpu"], document["bandwidth"]
    lines = [
        *heading(
            document["title"],
            measured(document["machine"], document["load_before"], document["load_after"]),
            f"GPU: {gpu['name']} (compute capability "
            f"{'.'.join(str(n) for n in gpu['compute_capability'])}, "
            f"{gpu['memory_bytes'] / (1 << 30):.0f} GiB); device-to-device copy "
            f"{copy['bytes_per_second'] / 1e9:.0f} GB/s (read plus write, "
            f"{copy['copy_bytes'] / (1 << 30):.1f} GiB copied).",
        ),
        "",
        *table(document),
        "",
        (
            "The ceiling is the copy rate over the bytes each guess must move (each block written "
            "once, each reference block read once); the host's hashes are not timed."
        ),
    ]
    return "\n".join(lines) + "\n"


def docs_section(document: dict[str, Any] | None) -> list[str]:
    """The performance page's section: the figures of ``gpu.json``, or why there are none."""
    if document is None:
        return [
            (
                "Not measured yet: `python -m bench gpu` needs a CUDA GPU, and no result "
                "file `bench/results/gpu.json` has been written. On a machine with one, "
                "`bench/gpu_run.sh` runs the GPU tests and then the suite: for each built-in "
                "profile, the defender's time on the CPU, the argon2id parameters that take the "
                "same time, both algorithms' guesses per second on the GPU with the measured "
                "memory bandwidth as the ceiling, and their ratio. The kernels (`twocats.gpu`) "
                "are checked bit for bit in numba's CUDA simulator on every machine."
            ),
        ]
    gpu = document["gpu"]
    return [
        *table(document),
        "",
        (
            f"Measured on {gpu['name']} with `python -m bench gpu` "
            f"(device-to-device copy {document['bandwidth']['bytes_per_second'] / 1e9:.0f} GB/s); "
            f"defender times on {document['machine'].get('cpu', '?')}."
        ),
    ]


def _parser() -> argparse.ArgumentParser:
    parser = suite_parser("gpu", __doc__.split("\n\n")[0], repeats=3)
    parser.add_argument("--runs", type=int, default=5, help="defender's timed verifications")
    parser.add_argument("--max-guesses", type=int, default=2048, help="guesses in flight at most")
    return parser


def smoke() -> int:
    """Run the cheapest parameters once on the GPU (no files); without one, say so."""
    missing = gpu_missing()
    if missing is not None:
        print(missing)
        return 0
    from twocats.profiles import CHEAPEST

    tc = _gpu_twocats(CHEAPEST, 1, 4)
    ar = _gpu_argon2id(8, 1, 1, 4)
    print(f"bench gpu smoke: {tc['guesses_in_flight']} + {ar['guesses_in_flight']} guesses agree")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every built-in profile and write gpu.json and gpu.md; without a GPU, say so."""
    args = _parser().parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    missing = gpu_missing()
    if missing is not None:
        print(missing)
        return 0
    document = run(args.runs, args.repeats, args.max_guesses)
    write_document("gpu", document, markdown(document), args.out)
    return 0
