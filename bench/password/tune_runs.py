"""Does ``twocats tune`` give the same answer twice?  Run it several times in a row and compare.

``python -m bench tune [--runs 5] [--time 250ms] [--max-memory 1GiB] [--out DIR]`` runs
``twocats tune --json`` that many times, one process after another, and records for each run the
parameters chosen, the time of their final check against the budget, the steps down the final
check took, the wall time of the run and the peak resident memory of the process.  The report
(``tune_runs.json`` and ``.md``) gives how many runs agree with the most common choice, whether any
final check was over budget, and the largest peak memory above ``--max-memory``, with the load
average before and after, since a loaded machine makes every timing noisy.

The runs are separate processes of the installed command, so each one pays its own start-up and
none shares memory with another; the suite does not import the command line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import (
    RESULTS_DIR,
    heading,
    load_average,
    load_text,
    machine,
    measured_on,
    run_process,
    write_document,
)

__all__ = ["main", "run_once", "smoke"]


def _load() -> list[float] | None:
    averages = load_average()
    return None if averages is None else [round(value, 2) for value in averages]


def run_once(budget: str, max_memory: str) -> dict[str, Any]:
    """Run ``twocats tune --json`` once; return its choice, timings and peak memory."""
    program = shutil.which("twocats")
    if program is None:
        raise SystemExit("the twocats command is not installed in this environment")
    load_before = _load()
    child = run_process([program, "tune", "--time", budget, "--max-memory", max_memory, "--json"])
    wall, text = child.wall, child.stdout.decode()
    if child.returncode != 0:
        raise SystemExit(f"twocats tune failed: {text}")
    document = json.loads(text)
    return {
        "phc_prefix": document["phc_prefix"],
        "verify_seconds": document["verify_seconds"],
        "verify_wall_seconds": document["verify_wall_seconds"],
        "budget_seconds": document["budget_seconds"],
        "steps_down": document["steps_down"],
        "trials": len(document["trials"]),
        "wall_seconds": wall,
        "peak_rss_bytes": child.max_rss,
        "max_memory": document["max_memory"],
        "load_before": load_before,
        "load_after": _load(),
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    choices = Counter(run["phc_prefix"] for run in runs)
    common, agreeing = choices.most_common(1)[0]
    return {
        "runs": len(runs),
        "most_common": common,
        "agreeing": agreeing,
        "distinct_choices": len(choices),
        "over_budget": sum(run["verify_seconds"] > run["budget_seconds"] for run in runs),
        "worst_final_seconds": max(run["verify_seconds"] for run in runs),
        "largest_overhead_bytes": max(run["peak_rss_bytes"] - run["max_memory"] for run in runs),
    }


def _markdown(document: dict[str, Any]) -> str:
    info, summary = document["machine"], document["summary"]
    budget = document["budget"]
    lines = [
        *heading(
            "twocats tune, run again and again",
            f"{measured_on(info)}, simd ISA {info.get('simd_isa', '?')}, "
            f"load average {load_text(info.get('load_average'))}.  "
            f"Command: `twocats tune --time {budget} --max-memory {document['max_memory']} "
            f"--json`, {summary['runs']} runs in a row.",
        ),
        "",
        (
            f"* {summary['agreeing']} of {summary['runs']} runs chose "
            f"`{summary['most_common']}` ({summary['distinct_choices']} distinct choices)."
        ),
        (
            f"* Final checks over the budget: {summary['over_budget']}; the slowest final check "
            f"took {summary['worst_final_seconds'] * 1000:.1f} ms."
        ),
        (
            "* Peak resident memory above --max-memory: at most "
            f"{summary['largest_overhead_bytes'] / (1 << 20):.0f} MiB."
        ),
        "",
        (
            "| run | PHC prefix | final check (CPU per thread) | wall-clock | steps down | "
            "trials | run time | peak RSS | load before | load after |"
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for number, run in enumerate(document["runs"], start=1):
        lines.append(
            f"| {number} | `{run['phc_prefix']}` | {run['verify_seconds'] * 1000:.1f} ms | "
            f"{run['verify_wall_seconds'] * 1000:.1f} ms | {run['steps_down']} | "
            f"{run['trials']} | {run['wall_seconds']:.1f} s | "
            f"{run['peak_rss_bytes'] / (1 << 20):.0f} MiB | {run['load_before']} | "
            f"{run['load_after']} |"
        )
    return "\n".join(lines) + "\n"


def _run(runs: int, budget: str, max_memory: str, out: Path) -> int:
    results = []
    for number in range(1, runs + 1):
        result = run_once(budget, max_memory)
        print(
            f"run {number}: {result['phc_prefix']} {result['verify_seconds'] * 1000:.1f} ms",
            flush=True,
        )
        results.append(result)
    document = {
        "suite": "tune_runs",
        "machine": machine(),
        "budget": budget,
        "max_memory": max_memory,
        "runs": results,
        "summary": _summary(results),
    }
    write_document("tune_runs", document, _markdown(document), out)
    return 0


def main(argv: Sequence[str]) -> int:
    """Run tune several times and report how far the runs agree."""
    parser = argparse.ArgumentParser(prog="python -m bench tune", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time", default="250ms")
    parser.add_argument("--max-memory", default="1GiB")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(list(argv))
    return _run(args.runs, args.time, args.max_memory, args.out)


def smoke() -> int:
    """Two quick runs at a tiny budget into a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        return _run(2, "2ms", "4MiB", Path(scratch))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
