"""Running fuzz targets: one input under an alarm, a whole run, a replay and the smoke run."""

from __future__ import annotations

import math
import random
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from fuzz.contract import (
    CLI_EVERY,
    FILE_EVERY,
    MARKER,
    TIME_LIMIT,
    ContractError,
    Hang,
    Outcome,
    Target,
)
from fuzz.mutations import generate
from fuzz.targets import TARGETS, load_seeds
from fuzz.workspace import workspace


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def _leaks(error: BaseException) -> bool:
    return MARKER in str(error) or MARKER in repr(error)


def classify(target: Target, data: bytes, serial: int, time_limit: float = TIME_LIMIT) -> Outcome:
    """Run one input on ``target`` and say what happened (never raises, except on Ctrl-C).

    ``time_limit`` only names the limit in a hang's report; :func:`run` sets the alarm.
    """
    load_seeds()
    try:
        kind = target.check(data, serial)
    except ContractError as violation:
        return Outcome("violation", str(violation))
    except Hang:
        return Outcome("hang", f"longer than {time_limit:g} s")
    except KeyboardInterrupt:
        raise
    except target.documented as error:
        if not target.quotes_input and _leaks(error):
            return Outcome("violation", f"{type(error).__name__} message quotes the input")
        return Outcome("refused", type(error).__name__)
    except BaseException as error:
        return Outcome("undocumented", f"{type(error).__name__}: {str(error)[:200]}")
    if kind == "refused":
        return Outcome("refused", "returned None")
    return Outcome(kind)


@dataclass
class TargetReport:
    """Counts of one target's run."""

    inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def _warm_up(names: Sequence[str]) -> None:
    """Run each target on its seeds once, untimed, so that kernel compiles never count as hangs.

    Serials that are multiples of :data:`CLI_EVERY` and :data:`FILE_EVERY` take the command-line
    and file paths; five of them take one checksum algorithm each.
    """
    step = math.lcm(CLI_EVERY, FILE_EVERY)
    for name in names:
        target = TARGETS[name]
        for number, data in enumerate(target.seeds):
            classify(target, data, number * step)


def run(
    count: int,
    seed: int,
    names: Sequence[str],
    failures_dir: Path | None,
    *,
    echo: bool = True,
    time_limit: float = TIME_LIMIT,
) -> dict[str, TargetReport]:
    """Feed ``count`` inputs to each named target; return the counts per target.

    An input still running after ``time_limit`` seconds counts as a hang.
    """
    load_seeds()
    reports: dict[str, TargetReport] = {}
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        with workspace():
            _warm_up(names)
            for name in names:
                reports[name] = _run_target(
                    TARGETS[name], count, seed, failures_dir, echo, time_limit
                )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return reports


def _run_target(
    target: Target,
    count: int,
    seed: int,
    failures_dir: Path | None,
    echo: bool,
    time_limit: float,
) -> TargetReport:
    rng = random.Random(f"{seed}/{target.name}")
    report = TargetReport()
    started = time.perf_counter()
    for serial in range(count):
        data = generate(rng, target)
        signal.setitimer(signal.ITIMER_REAL, time_limit)
        try:
            outcome = classify(target, data, serial, time_limit)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        report.inputs += 1
        label = outcome.kind if outcome.kind != "refused" else f"refused: {outcome.detail}"
        report.outcomes[label] += 1
        if outcome.kind not in ("accepted", "refused"):
            saved = None
            if failures_dir is not None:
                failures_dir.mkdir(parents=True, exist_ok=True)
                path = failures_dir / f"{target.name}-{serial}.bin"
                path.write_bytes(data)
                saved = str(path)
            report.failures.append(
                {"serial": serial, "kind": outcome.kind, "detail": outcome.detail, "input": saved}
            )
        if echo and (serial + 1) % max(1, count // 10) == 0:
            print(
                f"  {target.name}: {serial + 1}/{count} inputs, {len(report.failures)} failures",
                file=sys.stderr,
                flush=True,
            )
    report.seconds = time.perf_counter() - started
    return report


def replay(name: str, path: Path) -> int:
    """Run one saved input on a target, letting any exception show its traceback."""
    load_seeds()
    data = path.read_bytes()
    serial = int(path.stem.rsplit("-", 1)[-1]) if path.stem[-1:].isdigit() else 1
    print(repr(data[:300]))
    with workspace():
        try:
            print("outcome:", TARGETS[name].check(data, serial))
        except TARGETS[name].documented as error:
            print(f"refused: {type(error).__name__}: {error}")
        except BaseException:
            traceback.print_exc()
            return 1
    return 0


def smoke() -> int:
    """Feed 200 inputs to every target without writing files; exit status 1 on any failure."""
    reports = run(200, 1, list(TARGETS), None, echo=False)
    failures = [f for report in reports.values() for f in report.failures]
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0
