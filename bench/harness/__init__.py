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

Every suite imports from here.  The parts: :mod:`~bench.harness.timing` (callables in rotation,
child processes), :mod:`~bench.harness.context` (the repository, the machine, the load),
:mod:`~bench.harness.report` (reports and result files) and :mod:`~bench.harness.suite` (the
shared command line).
"""

from bench.harness.context import (
    REPO,
    clock_hz,
    commit,
    cpuinfo,
    load_average,
    load_note,
    load_text,
    machine,
    measured,
    measured_on,
    tree_env,
)
from bench.harness.report import (
    RESULTS_DIR,
    Report,
    heading,
    markdown_head,
    print_markdown,
    write_document,
)
from bench.harness.suite import PlainRun, plain_smoke, plain_suite, run_suite, suite_parser
from bench.harness.timing import Process, measure, measure_group, once, run_process

__all__ = [
    "REPO",
    "RESULTS_DIR",
    "PlainRun",
    "Process",
    "Report",
    "clock_hz",
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
    "plain_smoke",
    "plain_suite",
    "print_markdown",
    "run_process",
    "run_suite",
    "suite_parser",
    "tree_env",
    "write_document",
]
