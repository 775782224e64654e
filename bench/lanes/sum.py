"""``twocats sum`` against sha256sum and b2sum, ``hash_many`` against a hashlib loop, and the lane
kernels' cycles per byte.

``python -m bench sum [--repeats N] [--out DIR]`` measures, side by side in one run:

* **File trees**, generated from a fixed seed in a temporary folder and deleted afterwards: 10,000
  files of lognormal sizes (median about 3 KB, about 110 MB in all) and 100,000 files of 8 KiB
  (800 MiB).  Each command (``sha256sum FILES``, ``twocats sum -a sha256 FILES``, ``b2sum``,
  ``twocats sum -a blake2b``, and the twocats commands with ``--backend simd``: lanes from the
  first batch) runs once per round, in rotation, for N rounds; the best wall time counts, and its
  CPU time (user + system, from ``wait4``) is shown beside it.  Each ratio is given on best wall
  times and on least CPU times: on a shared machine the second says what the first cannot.
  Every twocats output is checked byte for byte against the coreutils output of the same
  algorithm.
* **One small file**: the start-up cost of each command.
* **65,536 messages of 64 B on one thread**: a hashlib loop, ``hash_many`` (list of bytes),
  ``hash_many_array`` (one contiguous digest array) and ``hash_many_fixed`` (2-D array in and
  out), for BLAKE2s and SHA-256, timed in rotation by :mod:`bench.harness` (medians).
* **Cycles per byte per core**: ``hash_many_fixed`` over 4,096 messages of 8 KiB and hashlib over
  one 32 MiB buffer, one thread, at the clock rate /proc/cpuinfo reports, next to the published
  4-buffer SHA-256 figure of the multi-buffer (S-HASH) paper: about 5.2 cycles per byte on its
  2011 processor.

``--smoke`` runs tiny trees and batches once and checks every output, asserting no timing.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final

import numpy as np

from bench.harness import (
    Report,
    cpuinfo,
    measure_group,
    print_markdown,
    run_process,
    run_suite,
    suite_parser,
)
from twocats.lanes import hash_many, hash_many_array, hash_many_fixed
from twocats.perf.samples import Samples

#: Seed of every generated file tree and message batch.
SEED: Final = 15

#: Tree name -> (file count, median size or None for fixed 8 KiB files).
TREES: Final = {"10,000 files, lognormal": (10_000, 3_000), "100,000 x 8 KiB": (100_000, None)}
SMOKE_TREES: Final = {"60 files, lognormal": (60, 3_000), "40 x 8 KiB": (40, None)}

#: Lognormal shape: with a median of 3,000 bytes, a mean of about 11 KB (110 MB per 10,000).
SIGMA: Final = 1.61
#: No generated file is larger than this.
LARGEST: Final = 16 << 20

#: (label, command after the program, coreutils tool whose output it must equal).
COMMANDS: Final = [
    ("sha256sum", ["sha256sum"], "sha256sum"),
    ("twocats sum -a sha256", ["sum", "-a", "sha256"], "sha256sum"),
    (
        "twocats sum -a sha256 --backend simd",
        ["sum", "-a", "sha256", "--backend", "simd"],
        "sha256sum",
    ),
    ("b2sum", ["b2sum"], "b2sum"),
    ("twocats sum -a blake2b", ["sum", "-a", "blake2b"], "b2sum"),
    (
        "twocats sum -a blake2b --backend simd",
        ["sum", "-a", "blake2b", "--backend", "simd"],
        "b2sum",
    ),
]

#: The issue's goals: (tree, twocats label, coreutils label) -> minimum coreutils / twocats ratio.
GOALS: Final = {
    ("10,000 files, lognormal", "twocats sum -a sha256", "sha256sum"): 1.0,
    ("10,000 files, lognormal", "twocats sum -a blake2b", "b2sum"): 1.0,
    ("100,000 x 8 KiB", "twocats sum -a sha256", "sha256sum"): 1.5,
    ("100,000 x 8 KiB", "twocats sum -a blake2b", "b2sum"): 1.5,
}

#: Goals of the issue for 65,536 x 64 B on one thread: (algorithm, method) -> minimum ratio.
API_GOALS: Final = {
    ("blake2s", "hash_many"): 4.0,
    ("sha256", "hash_many"): 4.0,
    ("blake2s", "hash_many_fixed"): 10.0,
    ("sha256", "hash_many_fixed"): 6.0,
}

#: The multi-buffer paper's 4-buffer SHA-256 figure, cycles per byte (2011 processor).
S_HASH_SHA256_CPB: Final = 5.2


@dataclass(frozen=True)
class Run:
    """One command run: wall seconds, CPU seconds (user + system) and its standard output."""

    wall: float
    cpu: float
    stdout: bytes


def _twocats() -> list[str]:
    """The twocats command of this environment (run as a program, never imported here)."""
    script = Path(sys.executable).with_name("twocats")
    return [str(script)] if script.exists() else [sys.executable, "-m", "twocats.cli"]


def _run(argv: list[str], folder: Path, timeout: float = 600.0) -> Run:
    """Run a command in ``folder``; measure its wall and CPU time with wait4."""
    done = run_process(argv, cwd=folder, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({done.returncode}): {done.stderr[-500:]!r}")
    return Run(done.wall, done.cpu, done.stdout)


def make_tree(folder: Path, count: int, median: int | None) -> tuple[list[str], int]:
    """Write ``count`` files from SEED into ``folder``; return their names and total size."""
    rng = np.random.default_rng(SEED)
    if median is None:
        sizes = np.full(count, 8192, dtype=np.int64)
    else:
        drawn = rng.lognormal(np.log(median), SIGMA, count)
        sizes = np.minimum(drawn.astype(np.int64), LARGEST)
    pool = rng.integers(0, 256, int(sizes.max()) + 4096, dtype=np.uint8).tobytes()
    names = []
    # Short names in one folder: 100,000 of them must fit in one command line (ARG_MAX).
    width = len(str(count - 1))
    for index, size in enumerate(sizes.tolist()):
        name = f"f{index:0{width}d}"
        start = index % 4096
        (folder / name).write_bytes(pool[start : start + size])
        names.append(name)
    return names, int(sizes.sum())


def _time_commands(folder: Path, names: list[str], repeats: int) -> dict[str, list[Run]]:
    """Run every command ``repeats`` times in rotation; check twocats outputs on every run."""
    runs: dict[str, list[Run]] = {label: [] for label, _, _ in COMMANDS}
    for round_index in range(repeats):
        order = COMMANDS[round_index % len(COMMANDS) :] + COMMANDS[: round_index % len(COMMANDS)]
        for label, argv, _ in order:
            program = [argv[0]] if not label.startswith("twocats") else [*_twocats(), *argv]
            rest = argv[1:] if not label.startswith("twocats") else []
            runs[label].append(_run([*program, *rest, *names], folder))
        for label, _, tool in COMMANDS:
            if runs[label][-1].stdout != runs[tool][-1].stdout:
                raise AssertionError(f"{label} output differs from {tool} in round {round_index}")
    return runs


def _best(runs: list[Run]) -> Run:
    return min(runs, key=lambda run: run.wall)


def _record_runs(report: Report, tree: str, runs: dict[str, list[Run]], total: int) -> None:
    for label, measured in runs.items():
        best = _best(measured)
        report.record(
            f"{tree}/{label}",
            Samples(tuple(run.wall for run in measured)),
            nbytes=total,
            workload=tree,
            method=label,
            best_wall_s=round(best.wall, 3),
            cpu_s=round(best.cpu, 3),
            cycles_per_byte="",
        )


def _best_ratio(
    report: Report,
    label: str,
    runs: dict[str, list[Run]],
    faster: str,
    slower: str,
    goal: float | None,
) -> None:
    """Record slower / faster on best wall times (the harness's ratios compare medians), and
    beside it the same ratio of the least CPU times (user + system) of the rounds."""
    wall = _best(runs[slower]).wall / _best(runs[faster]).wall
    cpu = min(run.cpu for run in runs[slower]) / min(run.cpu for run in runs[faster])
    for suffix, value, statistic, target in (
        ("wall", wall, "best wall time", goal),
        ("CPU time", cpu, "least CPU time", None),
    ):
        report.record_ratio(
            f"{label} ({suffix})",
            value,
            faster=faster,
            slower=slower,
            goal=target,
            statistic=statistic,
        )


def bench_trees(
    report: Report, trees: dict[str, tuple[int, int | None]], repeats: int, goals: bool
) -> None:
    """Time the commands on each generated tree and on one small file."""
    for tree, (count, median) in trees.items():
        with tempfile.TemporaryDirectory(prefix="twocats-sum-bench-") as name:
            folder = Path(name)
            names, total = make_tree(folder, count, median)
            runs = _time_commands(folder, names, repeats)
        _record_runs(report, tree, runs, total)
        for twocats_label, peer in (
            ("twocats sum -a sha256", "sha256sum"),
            ("twocats sum -a blake2b", "b2sum"),
        ):
            for variant in (twocats_label, f"{twocats_label} --backend simd"):
                _best_ratio(
                    report,
                    f"{tree} ({total / 1e6:.0f} MB): {peer} / {variant}",
                    runs,
                    faster=variant,
                    slower=peer,
                    goal=GOALS.get((tree, variant, peer)) if goals else None,
                )
    with tempfile.TemporaryDirectory(prefix="twocats-sum-bench-") as name:
        folder = Path(name)
        (folder / "one").write_bytes(b"one small file\n")
        runs = {
            label: [
                _run([*(_twocats() if label.startswith("twocats") else []), *argv, "one"], folder)
                for _ in range(repeats)
            ]
            for label, argv, _ in COMMANDS
            if "--backend" not in label
        }
    _record_runs(report, "one small file", runs, 15)


def _api_calls(
    messages: list[bytes], rows: np.ndarray, algorithm: str
) -> dict[str, Callable[[], object]]:
    constructor = getattr(hashlib, algorithm)
    return {
        "hashlib loop": lambda: [constructor(m).digest() for m in messages],
        "hash_many": lambda: hash_many(messages, algorithm),
        "hash_many_array": lambda: hash_many_array(messages, algorithm),
        "hash_many_fixed": lambda: hash_many_fixed(rows, algorithm),
    }


def bench_api(report: Report, count: int, repeats: int, min_time: float, goals: bool) -> None:
    """hash_many, hash_many_array and hash_many_fixed against a hashlib loop, one thread."""
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, 256, (count, 64), dtype=np.uint8)
    messages = [row.tobytes() for row in rows]
    for algorithm in ("blake2s", "sha256"):
        expected = [hashlib.new(algorithm, m).digest() for m in messages]
        calls = _api_calls(messages, rows, algorithm)
        if hash_many(messages, algorithm) != expected:
            raise AssertionError(f"hash_many({algorithm}) disagrees with hashlib")
        if [bytes(r) for r in hash_many_array(messages, algorithm)] != expected:
            raise AssertionError(f"hash_many_array({algorithm}) disagrees with hashlib")
        if [bytes(r) for r in hash_many_fixed(rows, algorithm)] != expected:
            raise AssertionError(f"hash_many_fixed({algorithm}) disagrees with hashlib")
        timings = measure_group(calls, repeats=repeats, min_time=min_time)
        workload = f"{count} x 64 B"
        report.record_group(
            timings,
            key=f"{workload}/{algorithm}",
            items=count,
            nbytes=count * 64,
            workload=f"{workload}, {algorithm}",
            best_wall_s="",
            cpu_s="",
            cycles_per_byte="",
        )
        for method in ("hash_many", "hash_many_array", "hash_many_fixed"):
            report.ratio(
                f"{algorithm} {workload}, one thread: {method} / hashlib loop",
                faster=f"{workload}/{algorithm}/{method}",
                slower=f"{workload}/{algorithm}/hashlib loop",
                goal=API_GOALS.get((algorithm, method)) if goals else None,
            )


def clock_hz() -> float | None:
    """The clock rate /proc/cpuinfo reports for the first CPU, in Hz (None if unknown)."""
    mhz = cpuinfo("cpu MHz")
    return None if mhz is None else float(mhz) * 1e6


def bench_cycles(report: Report, count: int, repeats: int, min_time: float) -> None:
    """Cycles per byte per core: lanes over many 8 KiB messages, hashlib over one long buffer."""
    hz = clock_hz()
    rng = np.random.default_rng(SEED)
    rows = rng.integers(0, 256, (count, 8192), dtype=np.uint8)
    stream = rows.tobytes()
    nbytes = rows.size
    for algorithm in ("sha256", "blake2s", "blake2b", "sha512"):
        constructor = getattr(hashlib, algorithm)
        if (
            bytes(hash_many_fixed(rows[:3], algorithm)[1])
            != constructor(rows[1].tobytes()).digest()
        ):
            raise AssertionError(f"hash_many_fixed({algorithm}) disagrees with hashlib")
        calls: dict[str, Callable[[], object]] = {
            "lanes (hash_many_fixed)": partial(hash_many_fixed, rows, algorithm),
            "hashlib, one stream": partial(constructor, stream),
        }
        timings = measure_group(calls, repeats=repeats, min_time=min_time)
        for method, timing in timings.items():
            cpb = "" if hz is None else round(hz * timing.median / nbytes, 2)
            report.record(
                f"cycles/{algorithm}/{method}",
                timing,
                nbytes=nbytes,
                workload=f"{count} x 8 KiB, {algorithm}",
                method=method,
                best_wall_s="",
                cpu_s="",
                cycles_per_byte=cpb,
            )
    where = "unknown" if hz is None else f"{hz / 1e9:.2f} GHz"
    report.notes.append(
        f"Cycles per byte per core are seconds per byte times the clock rate /proc/cpuinfo "
        f"reports ({where}; a virtual machine may run faster or slower than it says).  The "
        f"multi-buffer (S-HASH) paper's 4-buffer SHA-256 reached about {S_HASH_SHA256_CPB} cycles "
        f"per byte on its 2011 processor."
    )


def run(
    trees: dict[str, tuple[int, int | None]],
    *,
    repeats: int,
    api_count: int,
    cycle_count: int,
    min_time: float,
    goals: bool = True,
) -> Report:
    """Measure everything; return the report (every output is checked first)."""
    for tool in ("sha256sum", "b2sum"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} (GNU coreutils) is needed for this suite")
    report = Report("sum", "twocats sum vs coreutils, hash_many vs hashlib, cycles per byte")
    bench_trees(report, trees, repeats, goals)
    bench_api(report, api_count, repeats, min_time, goals)
    bench_cycles(report, cycle_count, repeats, min_time)
    report.notes.append(
        "File trees: best wall time of the rounds (commands in rotation, every output checked "
        "against coreutils byte for byte); cpu_s is that run's user + system time.  API rows and "
        "their ratios: medians of repetitions timed in rotation, one thread."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/sum.{json,md}."""
    parser = suite_parser("sum", __doc__, repeats=3, min_time=0.05)
    return run_suite(
        parser,
        argv,
        smoke,
        lambda args: run(
            TREES, repeats=args.repeats, api_count=65536, cycle_count=4096, min_time=args.min_time
        ),
    )


def smoke() -> int:
    """Run every measurement once at tiny sizes; checks outputs, asserts no timing."""
    return print_markdown(
        run(SMOKE_TREES, repeats=1, api_count=64, cycle_count=4, min_time=0.0, goals=False)
    )
