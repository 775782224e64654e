"""Does ``twocats tune`` answer its question?  Run it, then check the answer independently.

``python -m bench tune [--runs 3] [--time 250ms] [--concurrent 8] [--server-memory 2GiB]
[--for django] [--check-seconds 5] [--out DIR]`` runs ``twocats tune ... --json`` that many times,
one process after another.  After each run this process takes the settings the run printed (the
text a user pastes), builds the hasher they make (Django's ``TwoCatsPasswordHasher`` subclass, or
the pwdlib, passlib or core object), and checks it with its own code, not tune's:

* the hasher has the bounds printed (``max_concurrency``, ``max_total_memory``, ``timeout``);
* a stored value is made, and with ``--for django`` fits Django's 128-character column;
* ``--concurrent`` threads verify with it at once for ``--check-seconds``: every verification
  started in that time is timed, and threads done with theirs keep verifying, untimed, until the
  last one ends, so every timed one ran with ``--concurrent`` at once.  Their median and 95th
  percentile are compared with the budget.

The report (``tune_runs.json`` and ``.md``) gives each run's choice, tune's own figures, the
independent ones, the run's time and peak memory, and the load average before and after: on a
shared machine other jobs' load is part of both measurements.  A run where nothing fits (tune
exits 1 with its advice) is recorded as such.  ``--walkthrough`` then runs the command once more
without ``--json`` and records what it printed, which ``python -m bench docs`` shows in
``docs/parameters.md``.  The runs are separate processes of the installed command; the suite does
not import the command line.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
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

__all__ = ["check_settings", "main", "run_once", "smoke", "walkthrough"]

#: The password the independent check stores and verifies.
PASSWORD = "correct horse battery staple"


def _load() -> list[float] | None:
    averages = load_average()
    return None if averages is None else [round(value, 2) for value in averages]


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile `share` (0.95 for the 95th) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _made_hasher(
    framework: str | None, files: list[dict[str, str]]
) -> tuple[Any, Callable[[], str], Callable[[str], bool]]:
    """Run the pasted settings; return the twocats hasher, a hash maker and a verifier."""
    scope: dict[str, Any] = {}
    text = files[0]["text"]
    exec(compile(text, files[0]["where"], "exec"), scope)  # the settings printed, as pasted
    if framework == "django":
        django = scope["TunedTwoCatsHasher"]()
        return (
            django.hasher,
            lambda: django.encode(PASSWORD, django.salt()),
            lambda stored: django.verify(PASSWORD, stored),
        )
    if framework == "pwdlib":
        context = scope["password_hash"]
        return (
            context.hashers[0].hasher,
            lambda: context.hash(PASSWORD),
            lambda stored: context.verify(PASSWORD, stored),
        )
    if framework == "passlib":
        context = scope["context"]
        return (
            context.handler("twocats").hasher(),
            lambda: context.hash(PASSWORD),
            lambda stored: context.verify(PASSWORD, stored),
        )
    core = scope["hasher"]
    return core, lambda: core.hash(PASSWORD), lambda stored: core.verify(stored, PASSWORD)


def _under_load(verify: Callable[[], object], concurrent: int, seconds: float) -> list[float]:
    """Wall-clock times of the verifications `concurrent` threads start within `seconds`."""
    lock = threading.Lock()
    walls: list[float] = []
    done = [0]
    start = threading.Barrier(concurrent)

    def work() -> None:
        verify()  # untimed: maps the work area
        start.wait()
        deadline = time.perf_counter() + seconds
        while (began := time.perf_counter()) < deadline:
            verify()
            with lock:
                walls.append(time.perf_counter() - began)
        with lock:
            done[0] += 1
        while True:
            with lock:
                if done[0] == concurrent:
                    return
            verify()

    threads = [threading.Thread(target=work) for _ in range(concurrent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return walls


def check_settings(document: dict[str, Any], check_seconds: float) -> dict[str, Any]:
    """Build the hasher of a tune run's settings and measure it independently."""
    framework = document["settings"]["for"]
    core, make, verify = _made_hasher(framework, document["settings"]["files"])
    stored = make()
    assert verify(stored), "the settings' hasher does not verify its own hash"
    bounds = {
        "max_concurrency": core.max_concurrency,
        "max_total_memory": core.max_total_memory,
        "timeout": core.timeout,
    }
    concurrent = document["bounds"]["max_concurrency"]
    walls = _under_load(lambda: verify(stored), concurrent, check_seconds)
    return {
        "bounds": bounds,
        "bounds_as_printed": bounds == document["bounds"],
        "stored_length": len(stored),
        "verifications": len(walls),
        "median_seconds": statistics.median(walls),
        "p95_seconds": _percentile(walls, 0.95),
    }


def _arguments(options: argparse.Namespace) -> list[str]:
    """The tune command's arguments after ``twocats``, without ``--json``."""
    args = [
        "tune", "--time", options.time, "--concurrent", str(options.concurrent),
        "--server-memory", options.server_memory,
    ]  # fmt: skip
    return [*args, "--for", options.framework] if options.framework else args


def _program() -> str:
    program = shutil.which("twocats")
    if program is None:
        raise SystemExit("the twocats command is not installed in this environment")
    return program


def run_once(options: argparse.Namespace) -> dict[str, Any]:
    """Run ``twocats tune --json`` once; return its choice, the independent check and the run."""
    load_before = _load()
    child = run_process([_program(), *_arguments(options), "--json"])
    text = child.stdout.decode()
    if child.returncode not in (0, 1) or not text.strip():
        raise SystemExit(f"twocats tune failed: {child.stderr.decode()[-2000:]}")
    document = json.loads(text)
    result: dict[str, Any] = {
        "phc_prefix": document["phc_prefix"],
        "within_budget": document["within_budget"],
        "budget_seconds": document["budget_seconds"],
        "tune_p95_seconds": document["under_load"]["p95_seconds"],
        "tune_median_seconds": document["under_load"]["median_seconds"],
        "steps_down": document["steps_down"],
        "trials": len(document["trials"]),
        "wall_seconds": child.wall,
        "peak_rss_bytes": child.max_rss,
        "load_before": load_before,
    }
    if document["within_budget"]:
        result["check"] = check_settings(document, options.check_seconds)
    else:
        result["advice"] = document["advice"]["would_fit"]
    result["load_after"] = _load()
    return result


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    choices = Counter(run["phc_prefix"] for run in runs)
    common, agreeing = choices.most_common(1)[0]
    checked = [run for run in runs if "check" in run]
    return {
        "runs": len(runs),
        "most_common": common,
        "agreeing": agreeing,
        "distinct_choices": len(choices),
        "no_fit": len(runs) - len(checked),
        "median_within_budget": sum(
            run["check"]["median_seconds"] <= run["budget_seconds"] for run in checked
        ),
        "p95_within_budget": sum(
            run["check"]["p95_seconds"] <= run["budget_seconds"] for run in checked
        ),
        "bounds_as_printed": sum(run["check"]["bounds_as_printed"] for run in checked),
    }


def _runs(count: int) -> str:
    return f"{count} run{'' if count == 1 else 's'}"


def walkthrough(options: argparse.Namespace) -> dict[str, Any]:
    """Run the tune command once more, for a person; return what it printed and the load."""
    load_before = _load()
    child = run_process([_program(), *_arguments(options)])
    return {
        "command": "twocats " + " ".join(_arguments(options)),
        "exit_status": child.returncode,
        "output": child.stdout.decode(),
        "load_before": load_before,
        "load_after": _load(),
    }


def _command(document: dict[str, Any]) -> str:
    framework = f" --for {document['for']}" if document["for"] else ""
    return (
        f"twocats tune --time {document['time']} --concurrent {document['concurrent']} "
        f"--server-memory {document['server_memory']}{framework} --json"
    )


def _markdown(document: dict[str, Any]) -> str:
    info, summary = document["machine"], document["summary"]
    checked = summary["runs"] - summary["no_fit"]
    lines = [
        *heading(
            "twocats tune, checked independently",
            f"{measured_on(info)}, simd ISA {info.get('simd_isa', '?')}, "
            f"load average {load_text(info.get('load_average'))}.  Command: "
            f"`{_command(document)}`, {_runs(summary['runs'])} in a row, each followed by "
            f"{document['check_seconds']:g} s of verifications with the hasher its settings make, "
            f"{document['concurrent']} at once.",
        ),
        "",
        (
            f"* {summary['agreeing']} of {summary['runs']} runs chose "
            f"`{summary['most_common']}` ({summary['distinct_choices']} distinct); "
            f"{summary['no_fit']} found nothing that fits."
        ),
        (
            f"* Checked independently: the median within the budget in "
            f"{summary['median_within_budget']} of {checked} runs, the 95th percentile in "
            f"{summary['p95_within_budget']}; the hasher had the bounds printed in "
            f"{summary['bounds_as_printed']}."
        ),
        "",
        (
            "| run | PHC prefix | tune: p95 / median | check: p95 / median | verifications | "
            "stored | run time | peak RSS | load before | load after |"
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for number, run in enumerate(document["runs"], start=1):
        check = run.get("check")
        checked_text = (
            "no fit"
            if check is None
            else f"{check['p95_seconds'] * 1000:.1f} / {check['median_seconds'] * 1000:.1f} ms"
        )
        lines.append(
            f"| {number} | `{run['phc_prefix']}` | {run['tune_p95_seconds'] * 1000:.1f} / "
            f"{run['tune_median_seconds'] * 1000:.1f} ms | {checked_text} | "
            f"{'' if check is None else check['verifications']} | "
            f"{'' if check is None else check['stored_length']} | {run['wall_seconds']:.1f} s | "
            f"{run['peak_rss_bytes'] / (1 << 20):.0f} MiB | {run['load_before']} | "
            f"{run['load_after']} |"
        )
    return "\n".join(lines) + "\n"


def _run(options: argparse.Namespace) -> int:
    results = []
    for number in range(1, options.runs + 1):
        result = run_once(options)
        check = result.get("check")
        shown = (
            "no fit"
            if check is None
            else f"checked: median {check['median_seconds'] * 1000:.1f} ms, "
            f"p95 {check['p95_seconds'] * 1000:.1f} ms"
        )
        print(f"run {number}: {result['phc_prefix']} {shown}", flush=True)
        results.append(result)
    document = {
        "suite": "tune_runs",
        "machine": machine(),
        "time": options.time,
        "concurrent": options.concurrent,
        "server_memory": options.server_memory,
        "for": options.framework,
        "check_seconds": options.check_seconds,
        "runs": results,
        "summary": _summary(results),
    }
    if options.walkthrough:
        document["walkthrough"] = walkthrough(options)
    write_document("tune_runs", document, _markdown(document), options.out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench tune", description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time", default="250ms")
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--server-memory", default="2GiB")
    parser.add_argument("--for", dest="framework", choices=["django", "pwdlib", "passlib"])
    parser.add_argument("--check-seconds", type=float, default=5.0)
    parser.add_argument("--walkthrough", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    return parser


def main(argv: Sequence[str]) -> int:
    """Run tune several times and check each answer independently."""
    return _run(_parser().parse_args(list(argv)))


def smoke() -> int:
    """One quick run for Django at a small load into a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        options = _parser().parse_args(
            ["--runs", "1", "--time", "50ms", "--concurrent", "2", "--server-memory", "64MiB",
             "--for", "django", "--check-seconds", "0.5", "--out", scratch]
        )  # fmt: skip
        return _run(options)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
