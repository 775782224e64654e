"""Timing and reporting shared by the benchmark suites.

Usage in a suite::

    from bench.harness import Report, measure_group

    timings = measure_group({"hashlib": run_hashlib, "hash_many": run_many}, repeats=7)
    report = Report("primitives", "Multi-buffer hashing")
    report.record("hashlib", timings["hashlib"], items=65536, nbytes=65536 * 64)
    report.ratio("hash_many / hashlib", faster="hash_many", slower="hashlib", goal=10.0)
    report.write()        # bench/results/primitives.json and .md; the markdown is also printed

Every callable is called once before timing (warm-up: compilation, caches, page faults).  The
callables of one group are timed in rotation, one repetition of each in turn, so that a noisy
neighbour on a shared machine disturbs them alike; a ratio then compares numbers from the same
moments of the same process.  Each repetition loops the callable until ``min_time`` has passed
and records the time per call; reports give the median and the spread (max - min) / median.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from twocats._machine import load_averages, usable_cpus
from twocats.perf.samples import Samples

__all__ = [
    "REPO",
    "RESULTS_DIR",
    "Process",
    "Report",
    "commit",
    "cpuinfo",
    "heading",
    "load_average",
    "load_note",
    "load_text",
    "machine",
    "markdown_head",
    "measure",
    "measure_group",
    "measured",
    "measured_on",
    "once",
    "print_markdown",
    "run_process",
    "run_suite",
    "suite_parser",
    "write_document",
]

#: The repository's root, the folder that holds ``bench/``.
REPO = Path(__file__).resolve().parent.parent

#: Where reports are written unless a suite says otherwise.
RESULTS_DIR = REPO / "bench" / "results"


def once(
    call: Callable[[], object], min_time: float, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Time ``call`` in a loop of at least ``min_time`` seconds of ``clock``; return s per call."""
    calls = 0
    start = clock()
    while True:
        call()
        calls += 1
        elapsed = clock() - start
        if elapsed >= min_time:
            return elapsed / calls


def measure(
    call: Callable[[], object], *, repeats: int = 7, warmup: int = 1, min_time: float = 0.05
) -> Samples:
    """Time one callable after ``warmup`` untimed calls."""
    return measure_group({"call": call}, repeats=repeats, warmup=warmup, min_time=min_time)["call"]


def measure_group(
    calls: Mapping[str, Callable[[], object]],
    *,
    repeats: int = 7,
    warmup: int = 1,
    min_time: float = 0.05,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Samples]:
    """Time several callables side by side, one repetition of each in turn, in seconds of
    ``clock`` per call (``time.process_time``: the CPU time of the process)."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            samples[name].append(once(call, min_time, clock))
    return {name: Samples(tuple(values)) for name, values in samples.items()}


def commit(rev: str = "HEAD", *, short: bool = False) -> str:
    """The commit ``rev`` names in this repository, or ``unknown`` where git cannot say."""
    command = ["git", "-C", str(REPO), "rev-parse", *(["--short"] if short else []), rev]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip()


@dataclass(frozen=True)
class Process:
    """One finished child process: its exit status, its output, and what it cost."""

    returncode: int
    stdout: bytes
    stderr: bytes
    #: Seconds of wall clock from its start to its end.
    wall: float
    #: CPU seconds (user + system) the system accounted to it when it was reaped.
    cpu: float
    #: Its peak resident memory, in bytes.
    max_rss: int


def run_process(
    args: Sequence[str],
    *,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float | None = None,
) -> Process:
    """Run ``args`` in a fresh process and time it: the wall clock around it, its own CPU time and
    peak memory (``wait4``).  A process that outlives ``timeout`` seconds is killed."""
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        given.write(stdin)
        given.seek(0)
        started = time.perf_counter()
        child = subprocess.Popen(args, stdin=given, stdout=out, stderr=err, env=env, cwd=cwd)
        killer = None
        if timeout is not None:
            killer = threading.Timer(timeout, lambda: child.send_signal(signal.SIGKILL))
            killer.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if killer is not None:
            killer.cancel()
        # Popen is told the status wait4 collected, so that it never waits for the child again.
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Process(
            returncode=child.returncode,
            stdout=out.read(),
            stderr=err.read(),
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            # ru_maxrss is in KiB on Linux.
            max_rss=usage.ru_maxrss * 1024,
        )


def cpuinfo(field: str) -> str | None:
    """The value of ``field`` for the first CPU in /proc/cpuinfo, or None where it has none."""
    try:
        with open("/proc/cpuinfo") as lines:
            for line in lines:
                if line.startswith(field):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the platform has none."""
    averages = load_averages()
    return None if averages is None else list(averages)


def load_text(averages: Sequence[float] | None) -> str:
    """Load averages as a report shows them: ``0.52, 0.61, 0.70`` (``unknown`` for None)."""
    return "unknown" if averages is None else ", ".join(f"{value:.2f}" for value in averages)


def load_note(before: Sequence[float] | None, after: Sequence[float] | None) -> str:
    """A report note giving the load averages before and after a run, and the usable CPUs."""
    return (
        f"Load average (1, 5, 15 min) before: {load_text(before)}; after: {load_text(after)} "
        f"on {usable_cpus()} usable CPUs."
    )


def measured_on(info: dict[str, Any]) -> str:
    """``Measured <date> on <cpu> (<n> usable CPUs)``, from a report's :func:`machine` record."""
    return f"Measured {info['date']} on {info.get('cpu', '?')} ({info['cpus']} usable CPUs)"


def measured(
    info: dict[str, Any], before: Sequence[float] | None, after: Sequence[float] | None
) -> str:
    """The sentence naming the machine and the load averages at the start and the end."""
    return (
        f"{measured_on(info)}, Python {info['python']}, numba {info.get('numba')}; load average "
        f"[{load_text(before)}] at the start, [{load_text(after)}] at the end (shared machine)."
    )


def heading(title: str, *paragraphs: str) -> list[str]:
    """A markdown report's first lines: ``# title``, then each paragraph after a blank line."""
    lines = [f"# {title}"]
    for paragraph in paragraphs:
        lines += ["", paragraph]
    return lines


def markdown_head(
    document: dict[str, Any],
    before: Sequence[float] | None,
    after: Sequence[float] | None,
    header: str,
    align: str,
) -> list[str]:
    """The first lines of a report: its title, where and under which load, and a table's head."""
    measured_line = measured(document["machine"], before, after)
    return [*heading(document["title"], measured_line), "", header, align]


def suite_parser(
    suite: str,
    description: str | None,
    *,
    repeats: int,
    min_time: float | None = None,
    smoke_help: str | None = "tiny sizes, no result files",
) -> argparse.ArgumentParser:
    """A suite's command line with the options they share: --repeats, --min-time, --out, --smoke."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {suite}", description=description)
    parser.add_argument("--repeats", type=int, default=repeats)
    if min_time is not None:
        parser.add_argument("--min-time", type=float, default=min_time)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help=smoke_help)
    return parser


def run_suite(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    smoke: Callable[[], int],
    full: Callable[[argparse.Namespace], Report],
) -> int:
    """Parse ``argv``; run ``smoke`` under --smoke, else write the full report where --out says."""
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    full(args).write(args.out)
    return 0


class PlainRun(Protocol):
    """A suite's run that takes only the shared options and a smoke flag."""

    def __call__(self, *, repeats: int, min_time: float, smoke: bool = False) -> Report: ...


def plain_suite(
    suite: str,
    description: str | None,
    run: PlainRun,
    argv: Sequence[str] | None,
    *,
    repeats: int,
    min_time: float,
    smoke_help: str = "tiny sizes, no result files",
) -> int:
    """Run a suite whose options are only the shared ones: the full report, or one smoke pass."""
    parser = suite_parser(
        suite, description, repeats=repeats, min_time=min_time, smoke_help=smoke_help
    )
    return run_suite(
        parser,
        argv,
        lambda: plain_smoke(run),
        lambda args: run(repeats=args.repeats, min_time=args.min_time),
    )


def plain_smoke(run: PlainRun) -> int:
    """Run a plain suite once at its cheapest size and print the report; asserts no timing."""
    return print_markdown(run(repeats=1, min_time=0.0, smoke=True))


def print_markdown(report: Report) -> int:
    """Print a smoke run's report as markdown (no result files); return exit status 0."""
    print(report.markdown(), end="")
    return 0


def write_document(
    suite: str, document: dict[str, Any], text: str, out_dir: Path | None, *, echo: bool = True
) -> list[Path]:
    """Write ``<suite>.json`` and the markdown ``text`` as ``<suite>.md`` into ``out_dir``."""
    target = RESULTS_DIR if out_dir is None else out_dir
    target.mkdir(parents=True, exist_ok=True)
    json_path = target / f"{suite}.json"
    md_path = target / f"{suite}.md"
    json_path.write_text(json.dumps(document, indent=2) + "\n")
    md_path.write_text(text)
    if echo:
        sys.stdout.write(text)
        sys.stdout.flush()
    return [json_path, md_path]


def machine() -> dict[str, Any]:
    """Describe the machine and software a report was measured on."""
    info: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        # The CPUs this process may use: its affinity, lowered by a cgroup CPU quota.
        "cpus": usable_cpus(),
    }
    try:
        import numba

        from twocats.simd.registry import simd_isa

        info["numba"] = numba.__version__
        info["simd_isa"] = simd_isa()
    except ImportError:
        info["numba"] = None
    model = cpuinfo("model name")
    if model is not None:
        info["cpu"] = model
    elif not Path("/proc/cpuinfo").is_file():
        info["cpu"] = platform.processor()
    info["load_average"] = load_average()
    return info


@dataclass
class Report:
    """Rows of timings and ratios of one suite run, written as JSON and markdown."""

    suite: str
    title: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    ratios: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _timings: dict[str, Samples] = field(default_factory=dict)

    def record(
        self,
        key: str,
        timing: Samples,
        *,
        items: int | None = None,
        nbytes: int | None = None,
        **fields: Any,
    ) -> None:
        """Add one timed row; ``items`` and ``nbytes`` per call give ns/item and MB/s."""
        self._timings[key] = timing
        row: dict[str, Any] = {
            "key": key,
            **fields,
            "median_s": timing.median,
            "best_s": timing.fastest,
            "spread": timing.spread,
            "repeats": len(timing.values),
        }
        if items:
            row["ns_per_item"] = timing.median / items * 1e9
        if nbytes:
            row["mb_per_s"] = nbytes / timing.median / 1e6
        self.rows.append(row)

    def record_group(
        self,
        timings: Mapping[str, Samples],
        *,
        key: str = "",
        items: int | None = None,
        nbytes: int | None = None,
        **fields: Any,
    ) -> None:
        """Record a row for each timing of a group: key ``<key>/<name>`` (the name alone without
        ``key``), the ``fields``, and the name as ``method``."""
        for name, timing in timings.items():
            row_key = f"{key}/{name}" if key else name
            self.record(row_key, timing, items=items, nbytes=nbytes, **fields, method=name)

    def ratio(self, label: str, *, faster: str, slower: str, goal: float | None = None) -> float:
        """Record how many times ``faster`` beats ``slower`` (median over median)."""
        value = self._timings[slower].median / self._timings[faster].median
        self.record_ratio(label, value, faster=faster, slower=slower, goal=goal)
        return value

    def record_ratio(
        self,
        label: str,
        value: float,
        *,
        faster: str,
        slower: str,
        goal: float | None = None,
        **fields: Any,
    ) -> None:
        """Record a ratio computed by the suite (``fields`` say how, e.g. ``statistic``)."""
        self.ratios.append(
            {
                "label": label,
                "faster": faster,
                "slower": slower,
                "ratio": value,
                "goal": goal,
                "met": None if goal is None else value >= goal,
                **fields,
            }
        )

    def ratio_group(
        self, label: str, key: str, pairs: Iterable[tuple[str, str, str, float | None]]
    ) -> None:
        """Record the ratios of one group: for each ``(what, faster, slower, goal)``, how many
        times row ``<key>/<faster>`` beats row ``<key>/<slower>``, labelled ``<label>: <what>``."""
        for what, faster, slower, goal in pairs:
            self.ratio(
                f"{label}: {what}", faster=f"{key}/{faster}", slower=f"{key}/{slower}", goal=goal
            )

    def document(self) -> dict[str, Any]:
        """The report as one JSON-ready document."""
        return {
            "suite": self.suite,
            "title": self.title,
            "machine": machine(),
            "rows": self.rows,
            "ratios": self.ratios,
            "notes": self.notes,
        }

    def markdown(self, document: dict[str, Any] | None = None) -> str:
        """The report as markdown tables."""
        doc = document or self.document()
        lines = [f"# {self.title}", ""]
        info = doc["machine"]
        lines.append(
            f"{measured_on(info)}, Python {info['python']}, numba {info.get('numba')}, "
            f"simd ISA {info.get('simd_isa', '?')}, "
            f"load average {load_text(info.get('load_average'))}."
        )
        lines.append("")
        if self.ratios:
            lines += ["| ratio | value | goal | met |", "|---|---:|---:|:---:|"]
            for r in self.ratios:
                goal = "" if r["goal"] is None else f"{r['goal']:g}x"
                met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
                lines.append(f"| {r['label']} | {r['ratio']:.2f}x | {goal} | {met} |")
            lines.append("")
        if self.rows:
            extra = [k for k in self.rows[0] if k not in _STANDARD_COLUMNS]
            head = [*extra, "median", "spread", "ns/item", "MB/s"]
            lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for row in self.rows:
                cells = [str(row.get(k, "")) for k in extra]
                cells += [
                    f"{row['median_s'] * 1e3:.3f} ms",
                    f"{row['spread'] * 100:.0f}%",
                    f"{row['ns_per_item']:.1f}" if "ns_per_item" in row else "",
                    f"{row['mb_per_s']:.0f}" if "mb_per_s" in row else "",
                ]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        lines += [f"* {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def write(self, out_dir: Path | None = None, *, echo: bool = True) -> list[Path]:
        """Write ``<suite>.json`` and ``<suite>.md`` into ``out_dir`` (default bench/results)."""
        doc = self.document()
        return write_document(self.suite, doc, self.markdown(doc), out_dir, echo=echo)


_STANDARD_COLUMNS = {"key", "median_s", "best_s", "spread", "repeats", "ns_per_item", "mb_per_s"}
