"""Kernel compile time, start-up, and the hot loops side by side against an earlier commit.

``python -m bench compile [--against REV] [--new REV] [--repeats N] [--skip-cold]
[--skip-startup] [--skip-hot] [--out DIR]`` runs the working tree or commit ``--new`` ("new") and
commit ``--against`` ("old", default ``HEAD~1``; commits are exported with ``git archive``) through
the same worker (:mod:`bench.startup.compile_worker`) and reports:

* **cold compile**: each tree in its own empty kernel cache, the kernels a user meets one after
  another (the default profile's fill first, then the other lane counts, hash types and variants,
  then the lane hashes), as the first call's time less the second's; and the seconds each numba
  function spent in its own compilation;
* **start-up**: the first ``twocats hash`` in an empty cache, a warm ``twocats hash`` and a warm
  ``twocats --help`` (median of several processes, the trees taking turns), ``twocats warmup
  --all`` into an empty cache where the tree has it, and whether ``import twocats`` loads numba;
* **hot loops**: fill 1 GiB (blake2s with 8 lanes and blake2b with 16, one and two threads) and
  ``hash_many_fixed`` (BLAKE2s, SHA-256, 65,536 x 64 B), CPU seconds per call, timed in one run by
  two worker processes that take turns, one repetition each (the order alternates), so that a
  neighbour's load falls on both alike.  The ratio old / new must stay at or above 0.97.

The load average is recorded before and after.  ``--smoke`` checks that the worker runs (one cell).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from bench.harness import (
    REPO,
    RESULTS_DIR,
    commit,
    heading,
    load_average,
    machine,
    measured_on,
    run_process,
    tree_env,
    write_document,
)
from bench.startup.compile_worker import HOT_CELLS

__all__ = ["main", "smoke"]

WORKER = Path(__file__).resolve().parent / "compile_worker.py"

#: Hot-loop ratio old / new below which a cell counts as slower.
HOT_GOAL = 0.97

#: Processes timed for each warm start-up figure (the median is reported).
STARTUP_RUNS = 5

_PASSWORD = b"correct horse battery staple\n"


def _export(rev: str, target: Path) -> Path:
    """Write the ``twocats`` package of commit ``rev`` into ``target``; return ``target``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "twocats"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _cli(
    tree: Path, cache: Path, args: Sequence[str], stdin: bytes = b""
) -> tuple[float, float, int]:
    """Run the tree's CLI in a fresh process; return (wall seconds, CPU seconds, exit status)."""
    command = [sys.executable, "-c", "from twocats.cli import main; main()", *args]
    done = run_process(command, stdin=stdin, env=tree_env(tree, cache), cwd=tempfile.gettempdir())
    return done.wall, done.cpu, done.returncode


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cold(tree: Path) -> dict[str, Any]:
    """Compile every kernel of ``tree`` into an empty cache; see the module documentation."""
    with tempfile.TemporaryDirectory(prefix="twocats-cold-") as cache:
        done = subprocess.run(
            [sys.executable, str(WORKER), "cold"],
            env=tree_env(tree, Path(cache)),
            cwd=tempfile.gettempdir(),
            capture_output=True,
            check=True,
        )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def startup(trees: dict[str, Path], warm_cache: Path) -> dict[str, dict[str, Any]]:
    """Start-up figures (wall and CPU seconds) of each tree; ``warm_cache`` receives the kernels.

    The warm processes of the trees take turns, one of each in a row, like the hot loops.
    """
    hash_args = ["hash", "--password-stdin"]
    figures: dict[str, dict[str, Any]] = {name: {} for name in trees}
    for name, tree in trees.items():
        with tempfile.TemporaryDirectory(prefix="twocats-first-") as cache:
            wall, cpu, status = _cli(tree, Path(cache), hash_args, _PASSWORD)
        if status != 0:
            raise RuntimeError(f"twocats hash failed in {tree} (exit {status})")
        figures[name].update(first_hash_s=wall, first_hash_cpu_s=cpu)
        _cli(tree, warm_cache, hash_args, _PASSWORD)
    runs: dict[str, dict[str, list[tuple[float, float]]]] = {
        name: {"hash": [], "help": []} for name in trees
    }
    for _ in range(STARTUP_RUNS):
        for name, tree in trees.items():
            runs[name]["hash"].append(_cli(tree, warm_cache, hash_args, _PASSWORD)[:2])
            runs[name]["help"].append(_cli(tree, warm_cache, ["--help"])[:2])
    probe = "import sys, twocats, twocats.cli; print('numba' in sys.modules)"
    for name, tree in trees.items():
        with tempfile.TemporaryDirectory(prefix="twocats-warmup-") as cache:
            wall, cpu, status = _cli(tree, Path(cache), ["warmup", "--all"])
        if status == 0:
            figures[name].update(warmup_all_s=wall, warmup_all_cpu_s=cpu)
        imported = subprocess.run(
            [sys.executable, "-c", probe],
            env=tree_env(tree, warm_cache),
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        figures[name]["import_loads_numba"] = imported == "True"
        for kind in ("hash", "help"):
            figures[name][f"warm_{kind}_s"] = statistics.median(w for w, _ in runs[name][kind])
            figures[name][f"warm_{kind}_cpu_s"] = statistics.median(c for _, c in runs[name][kind])
    return figures


class _Worker:
    """A ``serve`` worker of one tree, answering one timed repetition per request."""

    def __init__(self, tree: Path, cache: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), "serve"],
            env=tree_env(tree, cache),
            cwd=tempfile.gettempdir(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def time(self, cell: str) -> dict[str, float]:
        """Time one repetition of ``cell``."""
        stdin: IO[str] | None = self.process.stdin
        stdout: IO[str] | None = self.process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(cell + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped while timing {cell}")
        answer: dict[str, float] = json.loads(line)
        return answer

    def close(self) -> None:
        """Stop the worker (end of input) and wait for it."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def hot(trees: dict[str, Path], cache: Path, cells: Sequence[str], repeats: int) -> dict[str, Any]:
    """Time ``cells`` in one worker per tree, taking turns; return samples per tree and cell."""
    workers = {name: _Worker(tree, cache) for name, tree in trees.items()}
    samples: dict[str, dict[str, list[dict[str, float]]]] = {
        cell: {name: [] for name in trees} for cell in cells
    }
    try:
        for cell in cells:
            for worker in workers.values():
                worker.time(cell)  # warm-up: compile or load, first touch of the memory
        for repeat in range(repeats):
            order = list(workers) if repeat % 2 == 0 else list(reversed(workers))
            for cell in cells:
                for name in order:
                    samples[cell][name].append(workers[name].time(cell))
            _say(f"  hot loops: repetition {repeat + 1} of {repeats}")
    finally:
        for worker in workers.values():
            worker.close()
    return samples


def _ratios(samples: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for cell, by_tree in samples.items():
        old_cpu = statistics.median(s["cpu"] for s in by_tree["old"])
        new_cpu = statistics.median(s["cpu"] for s in by_tree["new"])
        old_wall = statistics.median(s["wall"] for s in by_tree["old"])
        new_wall = statistics.median(s["wall"] for s in by_tree["new"])
        rows.append(
            {
                "cell": cell,
                "old_cpu_s": old_cpu,
                "new_cpu_s": new_cpu,
                "cpu_ratio": old_cpu / new_cpu,
                "wall_ratio": old_wall / new_wall,
                "met": old_cpu / new_cpu >= HOT_GOAL,
            }
        )
    return rows


def markdown(doc: dict[str, Any]) -> str:
    """The report as markdown."""
    info = doc["machine"]
    lines = [
        *heading(
            "Kernel compile time, start-up and hot loops: this tree against an earlier commit",
            f"{measured_on(info)}, numba {info.get('numba')}, "
            f"simd ISA {info.get('simd_isa', '?')}.  Old: `{doc['against']}` "
            f"({doc['against_commit'][:10]}); new: `{doc.get('new') or 'the working tree'}` "
            f"({doc['commit'][:10]}).  "
            f"Load average before {doc['load_before']}, after {doc['load_after']}.",
        ),
        "",
    ]
    if doc.get("cold"):
        lines += [
            "## Cold compile, in the order a user meets the kernels (seconds, empty cache)",
            "",
            "| step | old wall | new wall | old CPU | new CPU |",
            "|---|---:|---:|---:|---:|",
        ]
        old_steps = {s["step"]: s for s in doc["cold"]["old"]["steps"]}
        for step in doc["cold"]["new"]["steps"]:
            before = old_steps.get(step["step"], {})
            lines.append(
                f"| {step['step']} | {before.get('wall_s', float('nan')):.2f} | "
                f"{step['wall_s']:.2f} | {before.get('cpu_s', float('nan')):.2f} | "
                f"{step['cpu_s']:.2f} |"
            )
        totals = {name: sum(s["wall_s"] for s in run["steps"]) for name, run in doc["cold"].items()}
        lines += [f"| all steps | {totals['old']:.2f} | {totals['new']:.2f} | | |", ""]
        for name in ("old", "new"):
            functions = doc["cold"][name]["functions"]
            top = ", ".join(f"{key} {value:.2f}" for key, value in list(functions.items())[:12])
            lines.append(f"* {name}: own compile seconds per numba function (top 12): {top}.")
        lines.append("")
    if doc.get("startup"):
        lines += [
            "## Start-up (seconds; CPU is the process's user and system time)",
            "",
            "| figure | old wall | new wall | old CPU | new CPU |",
            "|---|---:|---:|---:|---:|",
        ]
        for key, label in (
            ("first_hash", "first `twocats hash`, empty cache"),
            ("warm_hash", "warm `twocats hash` (median)"),
            ("warm_help", "warm `twocats --help` (median)"),
            ("warmup_all", "`twocats warmup --all`, empty cache"),
        ):
            values = [
                doc["startup"][tree].get(f"{key}{unit}")
                for unit in ("_s", "_cpu_s")
                for tree in ("old", "new")
            ]
            cells = ["-" if v is None else f"{v:.2f}" for v in values]
            lines.append(f"| {label} | {' | '.join(cells)} |")
        loads = [str(doc["startup"][tree]["import_loads_numba"]) for tree in ("old", "new")]
        lines += ["", f"`import twocats` loads numba: old {loads[0]}, new {loads[1]}.", ""]
    if doc.get("hot"):
        lines += [
            f"## Hot loops, side by side ({doc['repeats']} turns each, CPU seconds per call)",
            "",
            "| cell | old CPU | new CPU | old / new CPU | old / new wall | within 3% |",
            "|---|---:|---:|---:|---:|:---:|",
        ]
        for row in doc["hot"]:
            lines.append(
                f"| {row['cell']} | {row['old_cpu_s']:.4f} | {row['new_cpu_s']:.4f} | "
                f"{row['cpu_ratio']:.3f} | {row['wall_ratio']:.3f} | "
                f"{'yes' if row['met'] else 'NO'} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def run(
    against: str,
    repeats: int,
    *,
    new: str | None,
    skip_cold: bool,
    skip_startup: bool,
    skip_hot: bool,
) -> dict[str, Any]:
    """Measure both trees (``new`` None: the working tree); return the report document."""
    doc: dict[str, Any] = {
        "suite": "compile",
        "machine": machine(),
        "against": against,
        "against_commit": commit(against),
        "new": new,
        "commit": commit(new or "HEAD"),
        "repeats": repeats,
        "load_before": load_average(),
    }
    with (
        tempfile.TemporaryDirectory(prefix="twocats-old-") as old_dir,
        tempfile.TemporaryDirectory(prefix="twocats-new-") as new_dir,
    ):
        new_tree = REPO if new is None else _export(new, Path(new_dir))
        trees = {"old": _export(against, Path(old_dir)), "new": new_tree}
        if not skip_cold:
            doc["cold"] = {}
            for name, tree in trees.items():
                _say(f"cold compile: {name} tree")
                doc["cold"][name] = cold(tree)
        if not skip_startup:
            _say("start-up")
            with tempfile.TemporaryDirectory(prefix="twocats-warm-") as warm:
                doc["startup"] = startup(trees, Path(warm))
        if not skip_hot:
            _say("hot loops")
            cache = Path(os.environ.get("TWOCATS_CACHE_DIR") or tempfile.gettempdir())
            doc["hot"] = _ratios(hot(trees, cache, HOT_CELLS, repeats))
    doc["load_after"] = load_average()
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and write bench/results/compile.{json,md}."""
    parser = argparse.ArgumentParser(prog="python -m bench compile", description=__doc__)
    parser.add_argument("--against", default="HEAD~1", help="the earlier commit (default HEAD~1)")
    parser.add_argument("--new", default=None, help="a later commit (default: the working tree)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--skip-cold", action="store_true", help="no cold compile")
    parser.add_argument("--skip-startup", action="store_true", help="no start-up figures")
    parser.add_argument("--skip-hot", action="store_true", help="no hot loops")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    parser.add_argument("--smoke", action="store_true", help="one cell, one turn, no files")
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    doc = run(
        args.against,
        args.repeats,
        new=args.new,
        skip_cold=args.skip_cold,
        skip_startup=args.skip_startup,
        skip_hot=args.skip_hot,
    )
    write_document("compile", doc, markdown(doc), args.out)
    return 0 if all(row["met"] for row in doc.get("hot", [])) else 1


def smoke() -> int:
    """Time one hash_many cell of this tree once in a worker; asserts no timing."""
    cache = Path(os.environ.get("TWOCATS_CACHE_DIR") or tempfile.gettempdir())
    samples = hot({"new": REPO}, cache, ["many:blake2s"], 1)
    cpu = samples["many:blake2s"]["new"][0]["cpu"]
    print(f"compile smoke: hash_many_fixed blake2s {cpu:.4f} s")
    return 0
