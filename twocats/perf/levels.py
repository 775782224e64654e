"""Fill-rate runs at instruction-set levels, each level in a child process of its own.

The machinery behind ``twocats bench`` and the trade-off matrix of the repository's ``bench``
folder (``python -m bench matrix``).  Each child (see :class:`LevelProcess`) is configured by
:func:`twocats.simd.isa.level_env`, reports the CPU name and feature string its compiler really
used and the assembly of every fill kernel it compiled or loaded, and
:func:`twocats.simd.asm.verify_level` checks both against the level.  Cells are timed at all levels
in rotation, so a noisy neighbour disturbs the levels alike.  Under an emulator (qemu-user, see
:func:`twocats.simd.isa.emulation`) a speed means nothing: each cell is then run once per level,
for its output, and the table says so instead of showing rates.  Importing this module imports
neither numpy nor numba: the children do the work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from twocats import _child
from twocats._machine import load_average
from twocats._units import format_size
from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASHES
from twocats.perf.text_table import aligned_table
from twocats.simd.asm import AsmProfile, describe_check, dispatcher_asm, profile_asm, verify_level
from twocats.simd.isa import (
    IsaLevel,
    available_levels,
    default_levels,
    emulation,
    get_level,
    level_env,
)

__all__ = [
    "BENCH_PASSWORD",
    "BENCH_SALT",
    "DEFAULT_REPEATS",
    "MIN_CELL_SECONDS",
    "Cell",
    "ChildError",
    "LevelProcess",
    "cell_grid",
    "check_outputs",
    "choose_levels",
    "failed_levels",
    "format_table",
    "kernel_note",
    "level_caches",
    "run_level",
    "run_levels",
    "worker_main",
]

#: The password, salt and data every benchmark derivation uses (public constants, as in the
#: PHC mailing-list vectors, so outputs can be compared across levels and with published vectors).
BENCH_PASSWORD: Final = b"password"
BENCH_SALT: Final = b"salt"

#: Timed rounds per cell.  A round is one call, or several (at most MAX_CALLS_PER_ROUND) when one
#: call is shorter than MIN_CELL_SECONDS / rounds; the time of a round is seconds per call.
DEFAULT_REPEATS: Final = 5
MIN_CELL_SECONDS: Final = 0.5
MAX_CALLS_PER_ROUND: Final = 50

#: The memory cost of the calls that compile the kernels before anything is timed (256 KiB).
_COMPILE_MEM_COST: Final = 8


# The child's program: answer requests until told to exit.
_WORKER_CODE: Final = "from twocats.perf.levels import worker_main; worker_main()"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class Cell:
    """One measured configuration.  ``fresh`` allocates the work memory anew for every call."""

    hash_type: str = "blake2s"
    lanes: int = 8
    multiplies: int = 2
    mem_cost: int = 20
    parallelism: int = 1
    variant: str = "2015"
    fresh: bool = False

    @property
    def memory_bytes(self) -> int:
        """Work memory in bytes (``1024 << mem_cost``)."""
        return 1024 << self.mem_cost

    def label(self) -> str:
        """A short human-readable name."""
        fresh = ", fresh memory" if self.fresh else ""
        variant = "" if self.variant == "2015" else f"{self.variant} "
        return (
            f"{variant}{self.hash_type} L={self.lanes} M={self.multiplies} "
            f"{format_size(self.memory_bytes)} p={self.parallelism}{fresh}"
        )

    def params(self) -> Any:
        """Return the :class:`twocats.params.Params` of this cell."""
        from twocats.params import Params

        extra: dict[str, Any] = {"hash_size": 32} if self.variant == "2014-03" else {}
        return Params(
            variant=self.variant,
            hash_type=self.hash_type,
            mem_cost=self.mem_cost,
            lanes=self.lanes,
            multiplies=self.multiplies,
            parallelism=self.parallelism,
            **extra,
        )


def cell_grid(
    hash_type: str,
    lanes: Sequence[int],
    multiplies: Sequence[int],
    mem_costs: Sequence[int],
    parallelisms: Sequence[int],
) -> list[Cell]:
    """Return a cell for every combination, lanes varying fastest and memory slowest."""
    return [
        Cell(hash_type, lane_count, chain, mem_cost, threads)
        for mem_cost in mem_costs
        for chain in multiplies
        for threads in parallelisms
        for lane_count in lanes
    ]


def choose_levels(keys: Sequence[str], host_features: str, baseline: bool) -> list[IsaLevel]:
    """Return the levels of ``keys``, or without keys this CPU's default levels.

    The default levels keep the SSE2 baseline only with ``baseline``.  A level this CPU cannot run
    is an :class:`~twocats.exceptions.InvalidParametersError` naming it.
    """
    if not keys:
        levels = default_levels(host_features)
        return levels if baseline else [level for level in levels if level.key != "sse2"]
    levels = [get_level(key) for key in keys]
    runnable = available_levels(host_features, list(keys))
    unavailable = [level.key for level in levels if level not in runnable]
    if unavailable:
        raise InvalidParametersError(f"this CPU cannot run {', '.join(unavailable)}")
    return levels


def failed_levels(results: Sequence[dict[str, Any]]) -> list[str]:
    """Return the keys of the levels whose child failed or whose kernels failed the ISA check."""
    return [r["level"] for r in results if "error" in r or not r["check"]["verified"]]


def kernel_note(setup: dict[str, Any]) -> str:
    """Say how a level's kernels were made ready, e.g. ``kernels loaded from the cache (0.3 s)``."""
    seconds = sum(setup["compile_s"].values())
    compiled = setup.get("compiled_lanes", [])
    if not compiled:
        return f"kernels loaded from the cache ({seconds:.1f} s)"
    lanes = ", ".join(str(lanes) for lanes in compiled)
    return f"kernels compiled for lanes {lanes} ({seconds:.1f} s)"


def _compile_params(lanes: int, variant: str) -> Any:
    """Return small parameters that compile the fill kernel for ``lanes`` lanes."""
    from twocats.params import Params

    hash_type = "blake2s" if lanes <= HASHES[0].state_words else "blake2b"
    extra: dict[str, Any] = {"hash_size": 32} if variant == "2014-03" else {}
    return Params(
        variant=variant,
        hash_type=hash_type,
        mem_cost=_COMPILE_MEM_COST,
        lanes=lanes,
        parallelism=1,
        **extra,
    )


def _rusage() -> tuple[float, float, int]:
    try:
        import resource
    except ImportError:  # pragma: no cover - platforms without the resource module
        return 0.0, 0.0, 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime, usage.ru_minflt


class _Worker:
    """The child's side: compiles the kernels, then times cells one request at a time."""

    def __init__(self) -> None:
        from twocats.kdf import Engine

        self._engine_class = Engine
        self.engine: Any = None
        self.backend = "simd"

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Carry out one request (see :class:`LevelProcess`) and return its reply."""
        op = request["op"]
        if op == "setup":
            return self.setup(str(request["backend"]), [int(n) for n in request["lanes"]])
        if op == "exit":
            return {}
        if op == "release":
            self.engine.release()
            return {}
        cell = Cell(**request["cell"])
        if op == "prepare":
            started = time.perf_counter()
            output = self.call(cell)
            return {"first_s": time.perf_counter() - started, "output": output.hex()}
        if op == "time":
            count = int(request["count"])
            u0, s0, f0 = _rusage()
            started = time.perf_counter()
            for _ in range(count):
                self.call(cell)
            elapsed = time.perf_counter() - started
            u1, s1, f1 = _rusage()
            return {
                "seconds": elapsed / count,
                "user_s": (u1 - u0) / count,
                "sys_s": (s1 - s0) / count,
                "minor_faults": (f1 - f0) // count,
            }
        raise ValueError(f"unknown request {op!r}")

    def call(self, cell: Cell) -> bytes:
        """Derive once with ``cell``'s parameters (on a new engine when it wants fresh memory)."""
        engine = self._engine_class(self.backend) if cell.fresh else self.engine
        result: bytes = engine.derive(BENCH_PASSWORD, BENCH_SALT, cell.params())
        return result

    def setup(self, backend: str, lanes_list: list[int]) -> dict[str, Any]:
        """Compile the fill kernel of every lane count and disassemble them."""
        from numba.core.registry import cpu_target

        from twocats.kdf.fill.family import fill_variants

        self.backend = backend
        self.engine = self._engine_class(backend)
        _triple, cpu_name, features = cpu_target.target_context.codegen().magic_tuple()
        compile_s: dict[str, float] = {}
        compiled: list[int] = []
        combined = AsmProfile()
        per_lanes: dict[str, Any] = {}
        methods = set()
        for lanes in lanes_list:
            started = time.perf_counter()
            params = _compile_params(lanes, "2015")
            self.engine.derive(BENCH_PASSWORD, BENCH_SALT, params)
            compile_s[str(lanes)] = time.perf_counter() - started
            kernel = fill_variants(lanes, params.hash_code).get(backend)
            if sum(kernel._cache_misses.values()):
                compiled.append(lanes)
            asm, method = dispatcher_asm(kernel)
            methods.add(method)
            profile = profile_asm(asm)
            per_lanes[str(lanes)] = profile.to_dict()
            combined.merge(profile)
        self.engine.release()
        return {
            "cpu_name": cpu_name,
            "features": features,
            "compile_s": compile_s,
            "compiled_lanes": compiled,
            "asm": {
                "method": "+".join(sorted(methods)),
                "combined": combined.to_dict(),
                "per_lanes": per_lanes,
            },
            "profile": dataclasses.asdict(combined),
        }


def worker_main() -> None:
    """Entry point of a child process: answer one JSON request per line of stdin on stdout."""
    worker = _Worker()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = worker.handle(request)
        except Exception as error:  # the parent reports it and stops using this child
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if request["op"] == "exit":
            return


class ChildError(RuntimeError):
    """A level's child process died or could not carry out a request."""


class LevelProcess:
    """A child process at one ISA level that compiles and times cells on request.

    Requests and replies are one JSON document per line: ``setup`` (compile and disassemble the
    kernels), ``prepare`` (one untimed call: compiles nothing more, maps the memory, returns the
    output), ``time`` (``count`` calls, returns seconds per call and resource usage), ``release``
    (free the work memory) and ``exit``.  The child's progress and errors go to this process's
    standard error.
    """

    def __init__(self, level: IsaLevel, host_features: str, cache_dir: Path) -> None:
        self.level = level
        self.env = level_env(level, host_features, cache_dir)
        self._process = _child.start(
            _WORKER_CODE, settings=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return the reply; raise :class:`ChildError` on any failure."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        try:
            stdin.write(json.dumps({"op": op, **fields}) + "\n")
            stdin.flush()
            line = stdout.readline()
        except OSError as error:
            raise ChildError(f"{self.level.key}: child process is gone ({error})") from None
        if not line:
            status = self._process.wait()
            raise ChildError(f"child process exited with status {status}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise ChildError(str(reply["error"]))
        return reply

    @property
    def returncode(self) -> int | None:
        """The child's exit status, or None while it runs."""
        return self._process.returncode

    def close(self) -> None:
        """Ask the child to exit and wait for it (kill it if it does not answer)."""
        with contextlib.suppress(ChildError):
            self.request("exit")
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _cell_result(cell: Cell, first: dict[str, Any], rounds: list[dict[str, Any]]) -> dict[str, Any]:
    times = [float(entry["seconds"]) for entry in rounds]
    median = statistics.median(times)
    return {
        **dataclasses.asdict(cell),
        "memory_bytes": cell.memory_bytes,
        "first_s": first["first_s"],
        "calls_per_round": first["count"],
        "times_s": times,
        "median_s": median,
        "min_s": min(times),
        "max_s": max(times),
        "spread": (max(times) - min(times)) / median,
        "gbps": cell.memory_bytes / median / 1e9,
        "user_s": statistics.median(float(entry["user_s"]) for entry in rounds),
        "sys_s": statistics.median(float(entry["sys_s"]) for entry in rounds),
        "minor_faults": int(statistics.median(int(entry["minor_faults"]) for entry in rounds)),
        "load1": first["load1"],
        "output": first["output"],
    }


def level_caches(root: Path, *, separate: bool) -> Callable[[IsaLevel], Path]:
    """Each level's kernel cache: a folder of its own under ``root`` with ``separate``, else
    ``root`` itself (safe too: the cache keys on the ISA and the vectorizer mode)."""
    return lambda level: root / level.key if separate else root


def run_levels(
    levels: Sequence[IsaLevel],
    cells: Sequence[Cell],
    *,
    host_features: str,
    cache_dir: Callable[[IsaLevel], Path],
    repeats: int = DEFAULT_REPEATS,
    min_seconds: float = MIN_CELL_SECONDS,
    first_level_cells: Sequence[Cell] = (),
    progress: Callable[[str], None] = _say,
) -> list[dict[str, Any]]:
    """Measure ``cells`` at every level, each level in a child process of its own.

    ``progress`` receives one line when a level's kernels are ready and one per timed cell and
    level (default: standard error).

    The children start and compile one after the other.  Then every cell is timed at all levels
    in rotation: one untimed call per level, then ``repeats`` rounds in which each level in turn
    runs the cell (several calls when one is shorter than ``min_seconds / repeats``).  A noisy
    neighbour on a shared machine then disturbs the levels alike, so a ratio between levels
    compares the same moments.  ``first_level_cells`` are measured by the first level only.
    Returns one verified result per level; a level whose child fails carries an ``error``.
    Under an emulator every result names it in ``emulation`` and each cell runs one call only.
    """
    emulator = emulation()
    if emulator:
        repeats, min_seconds = 1, 0.0
    results: list[dict[str, Any]] = []
    processes: dict[str, LevelProcess] = {}
    lanes = sorted({cell.lanes for cell in [*cells, *first_level_cells]})
    try:
        for level in levels:
            process = LevelProcess(level, host_features, cache_dir(level))
            result: dict[str, Any] = {
                "level": level.key, "label": level.label, "backend": level.backend,
                "env": process.env, "cells": [], "emulation": emulator,
            }  # fmt: skip
            results.append(result)
            try:
                setup = process.request("setup", backend=level.backend, lanes=lanes)
            except ChildError as error:
                result["error"] = str(error)
                process.close()
                continue
            profile = AsmProfile(**setup.pop("profile"))
            result.update(setup)
            result["check"] = verify_level(level, profile, setup["cpu_name"], setup["features"])
            processes[level.key] = process
            progress(f"{level.label}: {describe_check(result['check'])}; {kernel_note(setup)}")
        by_key = {result["level"]: result for result in results}
        jobs = [(cell, list(processes)) for cell in cells]
        jobs += [(cell, list(processes)[:1]) for cell in first_level_cells]
        # The largest memory first, so each child allocates its biggest buffer early.
        for cell, keys in sorted(jobs, key=lambda job: -job[0].memory_bytes):
            _time_cell(cell, [key for key in keys if key in processes], processes, by_key,
                       repeats, min_seconds, progress)  # fmt: skip
    finally:
        for process in processes.values():
            process.close()
    return results


def _time_cell(
    cell: Cell,
    keys: list[str],
    processes: dict[str, LevelProcess],
    results: dict[str, dict[str, Any]],
    repeats: int,
    min_seconds: float,
    progress: Callable[[str], None],
) -> None:
    """Time one cell at the levels ``keys`` in rotation and append the results."""
    firsts: dict[str, dict[str, Any]] = {}
    rounds: dict[str, list[dict[str, Any]]] = {key: [] for key in keys}
    round_seconds = min_seconds / repeats

    def drop(key: str, error: ChildError) -> None:
        results[key]["error"] = str(error)
        processes.pop(key).close()

    for key in keys:
        try:
            load = load_average()
            first = processes[key].request("prepare", cell=dataclasses.asdict(cell))
        except ChildError as error:
            drop(key, error)
            continue
        count = max(
            1, min(MAX_CALLS_PER_ROUND, math.ceil(round_seconds / max(first["first_s"], 1e-6)))
        )
        firsts[key] = {**first, "count": count, "load1": load}
    for _ in range(repeats):
        for key in list(firsts):
            if key not in processes:
                continue
            try:
                reply = processes[key].request(
                    "time", cell=dataclasses.asdict(cell), count=firsts[key]["count"]
                )
            except ChildError as error:
                drop(key, error)
                continue
            rounds[key].append(reply)
    for key, first in firsts.items():
        if key not in processes:
            continue
        result = _cell_result(cell, first, rounds[key])
        results[key]["cells"].append(result)
        try:
            processes[key].request("release")
        except ChildError as error:
            drop(key, error)
        progress(
            f"{results[key]['label']}: {cell.label()}: {result['gbps']:.2f} GB/s "
            f"(median {result['median_s']:.4f} s, spread {100 * result['spread']:.0f}%)"
        )


def run_level(
    level: IsaLevel,
    cells: Sequence[Cell],
    *,
    host_features: str,
    cache_dir: Path,
    repeats: int = DEFAULT_REPEATS,
    min_seconds: float = MIN_CELL_SECONDS,
) -> dict[str, Any]:
    """Measure ``cells`` at one level in a child process (see :func:`run_levels`)."""
    return run_levels(
        [level], cells, host_features=host_features, cache_dir=lambda _level: cache_dir,
        repeats=repeats, min_seconds=min_seconds,
    )[0]  # fmt: skip


def check_outputs(levels: Sequence[dict[str, Any]]) -> list[str]:
    """Return a message for every cell whose output differs between levels (bit-exactness)."""
    seen: dict[str, tuple[str, str]] = {}
    problems = []
    for level in levels:
        for cell in level.get("cells", []):
            key = json.dumps({k: cell[k] for k in dataclasses.asdict(Cell())}, sort_keys=True)
            first = seen.setdefault(key, (level["level"], cell["output"]))
            if first[1] != cell["output"]:
                problems.append(f"{level['level']} and {first[0]} differ on {key}")
    return problems


# -- tables ----------------------------------------------------------------------------------------

_CELL_FIELDS: Final = ("hash_type", "lanes", "multiplies", "mem_cost", "parallelism", "variant")


def _column_label(cell: dict[str, Any], varying: Sequence[str]) -> str:
    parts = []
    for name in varying:
        value = cell[name]
        if name == "lanes":
            parts.append(f"L={value}")
        elif name == "multiplies":
            parts.append(f"M={value}")
        elif name == "mem_cost":
            parts.append(format_size(1024 << int(value)))
        elif name == "parallelism":
            parts.append(f"p={value}")
        else:
            parts.append(str(value))
    return " ".join(parts) or "GB/s"


def format_table(levels: Sequence[dict[str, Any]], markdown: bool = False) -> str:
    """Return a table of GB/s with one row per level and one column per cell configuration."""
    cells = [cell for level in levels for cell in level.get("cells", [])]
    varying = [name for name in _CELL_FIELDS if len({cell[name] for cell in cells}) > 1]
    columns: list[str] = []
    for cell in cells:
        label = _column_label(cell, varying)
        if label not in columns:
            columns.append(label)
    header = ["level", "ISA check", *columns]
    rows = []
    emulators = sorted({str(level["emulation"]) for level in levels if level.get("emulation")})
    for level in levels:
        values = {
            _column_label(cell, varying): "n/m" if emulators else f"{cell['gbps']:.2f}"
            for cell in level.get("cells", [])
        }
        check = level.get("error") or describe_check(level["check"])
        rows.append([level["label"], check, *(values.get(column, "-") for column in columns)])
    if markdown:
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines + _emulation_note(emulators))
    return "\n".join([aligned_table(header, rows, left=2), *_emulation_note(emulators)])


def _emulation_note(emulators: Sequence[str]) -> list[str]:
    """The line under a table measured under an emulator (none on real hardware)."""
    if not emulators:
        return []
    emulated = ", ".join(emulators)
    return [f"n/m: speed not meaningful under {emulated}; only the ISA checks and outputs count"]
