"""What the tuning commands know of this machine: its cores, its load and its vector width."""

from __future__ import annotations

import os

__all__ = ["busy_note", "cpu_count", "lanes_for_isa", "load_average"]


def lanes_for_isa(isa: str) -> int:
    """Return the lane count matching the vector width the ``simd`` backend compiles for.

    A lane is one 32-bit word, so a 512-bit register holds 16 lanes, a 256-bit one 8 and a 128-bit
    one 4.  Without a known vector unit the reference's default of 8 is kept.
    """
    if isa.startswith("AVX-512"):
        return 8 if "256-bit preferred" in isa else 16
    if isa.startswith(("AVX2", "AVX ")):
        return 8
    if isa.startswith(("SSE", "SSSE3")):
        return 4
    return 8


def cpu_count() -> int:
    """Return the number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_average() -> float | None:
    """Return the one-minute load average, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def busy_note(load: float) -> str:
    """Explain what a load above the core count does to the timings."""
    return (
        f"busy machine (load {load:.1f} on {cpu_count()} cores): the times include waiting for "
        "a core; rerun when it is idle"
    )
