"""Where and when a suite ran: the repository, its commit, the machine and its load."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twocats._machine import load_averages, usable_cpus

__all__ = [
    "REPO",
    "commit",
    "cpuinfo",
    "load_average",
    "load_note",
    "load_text",
    "machine",
    "measured",
    "measured_on",
    "tree_env",
]

#: The repository's root, the folder that holds ``bench/``.
REPO = Path(__file__).resolve().parent.parent.parent


def commit(rev: str = "HEAD", *, short: bool = False) -> str:
    """The commit ``rev`` names in this repository, or ``unknown`` where git cannot say."""
    command = ["git", "-C", str(REPO), "rev-parse", *(["--short"] if short else []), rev]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip()


def tree_env(tree: Path | None, cache: Path | None) -> dict[str, str]:
    """The environment of a child process that imports twocats from ``tree`` (None: as installed)
    with its kernel cache in ``cache`` (None: the default); no other TWOCATS_ setting reaches it,
    and it keeps its compiled bytecode, as an installed package does."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("TWOCATS_") and key != "PYTHONDONTWRITEBYTECODE"
    }
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    if cache is not None:
        env["TWOCATS_CACHE_DIR"] = str(cache)
    return env


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


def clock_hz() -> float | None:
    """The clock rate /proc/cpuinfo reports for the first CPU, in Hz (None if unknown)."""
    mhz = cpuinfo("cpu MHz")
    return None if mhz is None else float(mhz) * 1e6


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
