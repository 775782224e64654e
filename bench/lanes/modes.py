"""Lane modes from the literature against the best single-stream implementations in Python.

``python -m bench modes [--repeats N] [--min-time S] [--scale F] [--out DIR]`` measures, one group
at a time and each group's rows in rotation in one process (one thread throughout):

* multi-buffer SHA3-256 over 4,096 messages of 4 KiB (8 Keccak states in lock-step) against a
  ``hashlib.sha3_256`` loop, on the simd and the scalar backend; the MB/s per core is set beside
  the ~230 MB/s per core that a published comparison of Rust Keccak libraries measured on 4 KiB
  inputs (tiny-keccak's README, a 2015 MacBook Pro);
* j-lanes SHA-256 (j = 16 and j = 8), Intel's mh_sha256 and j-pointers (8 slices) of one 64 MiB
  message against ``hashlib.sha256`` (OpenSSL, SHA-NI on this machine);
* BLAKE2sp against ``hashlib.blake2s`` and BLAKE2bp against ``hashlib.blake2b`` on one 64 MiB
  message;
* LSH-256 and LSH-512 over 4,096 messages of 4 KiB: the multi-message kernel (8 lanes) against our
  own single-message kernel called per message (the ARMv8 paper reports 1.3x for 2 messages);
* the same SHA3-256 and LSH rows on mixed lengths: the contents of ``bench sum``'s 10,000 files of
  lognormal sizes (about 110 MB), where a state whose message ends takes the next at once;
* KT128 of one 64 MiB message against pycryptodome's KangarooTwelve (C), and legacy SHA-1 (a lane
  primitive, ``hash_many(..., "sha1")``) against a ``hashlib.sha1`` loop.

Every row's output is checked against its peer before timing.  ``--smoke`` runs tiny inputs once.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from bench.harness import (
    Report,
    clock_hz,
    measure_group,
    print_markdown,
    run_suite,
    suite_parser,
)
from bench.lanes.memory import S_HASH_SHA256_CPB
from bench.lanes.sum import LOGNORMAL_MEDIAN, tree_contents
from twocats.lanes import hash_many
from twocats.lanes.modes import blake2tree, keccak, lsh, sha256tree

#: Published single-core SHA3-256 speed on 4 KiB inputs (tiny-keccak README, MB/s).
PUBLISHED_SHA3_MBPS = 230.0

#: Full sizes: messages per batch, message size, the size of the one large message, and the
#: number of messages of lognormal sizes.
FULL = {"count": 4096, "size": 4096, "large": 64 << 20, "mixed": 10_000}
SMOKE = {"count": 9, "size": 300, "large": 5000, "mixed": 60}


def _random(nbytes: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8).tobytes()


def _check(label: str, got: object, expected: object) -> None:
    if got != expected:
        raise AssertionError(f"{label}: output disagrees with its peer")


@dataclass(frozen=True)
class _Workload:
    """What one call of a group hashes: its label, its messages and its bytes."""

    label: str
    items: int
    nbytes: int


def _group(
    report: Report,
    calls: dict[str, Callable[[], object]],
    workload: _Workload,
    *,
    repeats: int,
    min_time: float,
) -> None:
    """Time one group of callables in rotation and record a row for each."""
    timings = measure_group(calls, repeats=repeats, min_time=min_time)
    hz = clock_hz()
    for name, timing in timings.items():
        report.record(
            name,
            timing,
            items=workload.items,
            nbytes=workload.nbytes,
            workload=workload.label,
            method=name,
            cycles_per_byte="" if hz is None else round(hz * timing.median / workload.nbytes, 2),
        )


def run(sizes: dict[str, int], *, repeats: int, min_time: float) -> Report:
    """Measure every group; return the report."""
    report = Report("modes", "Lane modes: multi-message and tree hashing vs single-stream peers")
    count, size, large = sizes["count"], sizes["size"], sizes["large"]
    messages = [_random(size, seed) for seed in range(count)]
    big = _random(large, 1000)
    batch = f"{count} x {size} B"
    one = f"1 x {large >> 20} MiB" if large >= 1 << 20 else f"1 x {large} B"
    batched = _Workload(batch, count, count * size)
    single_message = _Workload(one, 1, large)

    def group(calls: dict[str, Callable[[], object]], workload: _Workload) -> None:
        _group(report, calls, workload, repeats=repeats, min_time=min_time)

    # SHA3-256, multi-buffer.
    expected = [hashlib.sha3_256(m).digest() for m in messages]
    for backend in ("simd", "scalar"):
        _check(
            f"sha3_256_many {backend}", keccak.sha3_256_many(messages, backend=backend), expected
        )
    group(
        {
            "sha3-256/hashlib loop": lambda: [hashlib.sha3_256(m).digest() for m in messages],
            "sha3-256/many simd": lambda: keccak.sha3_256_many(messages, backend="simd"),
            "sha3-256/many scalar": lambda: keccak.sha3_256_many(messages, backend="scalar"),
        },
        batched,
    )
    report.ratio(
        f"SHA3-256 {batch}: multi-buffer simd / hashlib loop",
        faster="sha3-256/many simd",
        slower="sha3-256/hashlib loop",
    )
    report.ratio(
        f"SHA3-256 {batch}: multi-buffer simd / scalar",
        faster="sha3-256/many simd",
        slower="sha3-256/many scalar",
    )
    simd_row = next(r for r in report.rows if r["key"] == "sha3-256/many simd")
    report.notes.append(
        f"SHA3-256 multi-buffer (simd, one core): {simd_row['mb_per_s']:.0f} MB/s, "
        f"{simd_row['mb_per_s'] / PUBLISHED_SHA3_MBPS:.1f}x the ~{PUBLISHED_SHA3_MBPS:.0f} MB/s "
        "per core published for Rust Keccak libraries on 4 KiB inputs (tiny-keccak README, "
        "different machine: a 2015 MacBook Pro)."
    )

    # j-lanes SHA-256, mh_sha256 and j-pointers of one large message.
    for j in (16, 8):
        _check(
            f"jlanes j={j}",
            sha256tree.jlanes_sha256(big, j=j),
            sha256tree.jlanes_sha256(big, j=j, backend="scalar"),
        )
    group(
        {
            "sha256/hashlib": lambda: hashlib.sha256(big).digest(),
            "jlanes-sha256-16/simd": lambda: sha256tree.jlanes_sha256(big, j=16),
            "jlanes-sha256-8/simd": lambda: sha256tree.jlanes_sha256(big, j=8),
            "mh-sha256/simd": lambda: sha256tree.mh_sha256(big),
            "jpointers-sha256-8/simd": lambda: sha256tree.jpointers(big, j=8),
        },
        single_message,
    )
    for name in ("jlanes-sha256-16", "jlanes-sha256-8", "mh-sha256", "jpointers-sha256-8"):
        report.ratio(
            f"{name} {one}: simd / hashlib.sha256", faster=f"{name}/simd", slower="sha256/hashlib"
        )

    # BLAKE2sp and BLAKE2bp of one large message.
    group(
        {
            "blake2s/hashlib": lambda: hashlib.blake2s(big).digest(),
            "blake2sp/simd": lambda: blake2tree.blake2sp(big),
            "blake2sp/scalar": lambda: blake2tree.blake2sp(big, backend="scalar"),
            "blake2b/hashlib": lambda: hashlib.blake2b(big).digest(),
            "blake2bp/simd": lambda: blake2tree.blake2bp(big),
        },
        single_message,
    )
    report.ratio(
        f"BLAKE2sp {one}: simd / hashlib.blake2s", faster="blake2sp/simd", slower="blake2s/hashlib"
    )
    report.ratio(f"BLAKE2sp {one}: simd / scalar", faster="blake2sp/simd", slower="blake2sp/scalar")
    report.ratio(
        f"BLAKE2bp {one}: simd / hashlib.blake2b", faster="blake2bp/simd", slower="blake2b/hashlib"
    )

    # LSH multi-message against our own single-message kernel.
    for family, many, single in (
        (256, lsh.lsh256_many, lsh.lsh256),
        (512, lsh.lsh512_many, lsh.lsh512),
    ):
        _check(f"lsh{family}_many", many(messages), [single(m) for m in messages])
        group(
            {
                f"lsh-{family}/single loop": lambda single=single: [single(m) for m in messages],
                f"lsh-{family}/many simd": lambda many=many: many(messages),
                f"lsh-{family}/many scalar": lambda many=many: many(messages, backend="scalar"),
            },
            batched,
        )
        report.ratio(
            f"LSH-{family} {batch}: multi-message simd / single-message loop",
            faster=f"lsh-{family}/many simd",
            slower=f"lsh-{family}/single loop",
        )

    # SHA3-256 and LSH on mixed lengths.
    contents = tree_contents(sizes["mixed"], LOGNORMAL_MEDIAN)
    total = sum(map(len, contents))
    mixed = f"{len(contents)} files' contents ({total / 1e6:.0f} MB)"
    lognormal = _Workload(mixed, len(contents), total)
    _check(
        "sha3_256_many mixed",
        keccak.sha3_256_many(contents),
        [hashlib.sha3_256(m).digest() for m in contents],
    )
    group(
        {
            "sha3-256/mixed hashlib loop": lambda: [hashlib.sha3_256(m).digest() for m in contents],
            "sha3-256/mixed many simd": lambda: keccak.sha3_256_many(contents),
        },
        lognormal,
    )
    report.ratio(
        f"SHA3-256 {mixed}: multi-buffer simd / hashlib loop",
        faster="sha3-256/mixed many simd",
        slower="sha3-256/mixed hashlib loop",
    )
    for family, many, single in (
        (256, lsh.lsh256_many, lsh.lsh256),
        (512, lsh.lsh512_many, lsh.lsh512),
    ):
        _check(f"lsh{family}_many mixed", many(contents), [single(m) for m in contents])
        group(
            {
                f"lsh-{family}/mixed single loop": lambda single=single: [
                    single(m) for m in contents
                ],
                f"lsh-{family}/mixed many simd": lambda many=many: many(contents),
            },
            lognormal,
        )
        report.ratio(
            f"LSH-{family} {mixed}: multi-message simd / single-message loop",
            faster=f"lsh-{family}/mixed many simd",
            slower=f"lsh-{family}/mixed single loop",
        )

    # KangarooTwelve against pycryptodome, and legacy SHA-1.
    from Crypto.Hash import KangarooTwelve

    _check("kt128", keccak.kt128(big, 32), KangarooTwelve.new(data=big).read(32))
    sha1_many = partial(hash_many, messages, "sha1")
    _check("sha1 hash_many", sha1_many(), [hashlib.sha1(m).digest() for m in messages])
    group(
        {
            "kt128/pycryptodome": lambda: KangarooTwelve.new(data=big).read(32),
            "kt128/simd": lambda: keccak.kt128(big, 32),
        },
        single_message,
    )
    report.ratio(
        f"KT128 {one}: simd / pycryptodome", faster="kt128/simd", slower="kt128/pycryptodome"
    )
    group(
        {
            "sha1/hashlib loop": lambda: [hashlib.sha1(m).digest() for m in messages],
            "sha1/many simd": sha1_many,
        },
        batched,
    )
    report.ratio(
        f"SHA-1 {batch}: hash_many simd / hashlib loop",
        faster="sha1/many simd",
        slower="sha1/hashlib loop",
    )

    report.notes.append(
        "Every row runs on one thread; the rows of a group were timed in rotation in one "
        "process, and ratios compare medians.  Multi-message rows include joining the messages "
        "and building the list of digests.  Cycles per byte are seconds per byte times the "
        f"clock rate /proc/cpuinfo reports, to set beside the multi-buffer (S-HASH) paper's "
        f"4-buffer SHA-256 ({S_HASH_SHA256_CPB} cycles per byte, 2011) and beside each row's "
        "hashlib (OpenSSL) peer in the same group."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/modes.{json,md}."""
    parser = suite_parser("modes", __doc__, repeats=5, min_time=0.2)
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply the batch count and the large message size",
    )

    def full(args: argparse.Namespace) -> Report:
        sizes = dict(FULL)
        sizes["count"] = max(8, int(sizes["count"] * args.scale))
        sizes["large"] = max(1 << 16, int(sizes["large"] * args.scale))
        sizes["mixed"] = max(8, int(sizes["mixed"] * args.scale))
        return run(sizes, repeats=args.repeats, min_time=args.min_time)

    return run_suite(parser, argv, smoke, full)


def smoke() -> int:
    """Run every measurement once on tiny inputs; checks outputs, asserts no timing."""
    return print_markdown(run(SMOKE, repeats=1, min_time=0.0))
