"""The captions of the bench plots name the machine and its load, and survive a sparse document."""

from __future__ import annotations

from typing import Any

from bench.matrix import plots


def _document(**extra: Any) -> dict[str, Any]:
    return {
        "date": "2026-01-01 00:00 UTC",
        "machine": {
            "lscpu": {"Model name": "Test CPU"},
            "llvm_host_cpu": "znver4",
            "cpus_usable": 2,
        },
        **extra,
    }


def test_caption_names_cpu_cores_and_load() -> None:
    """The machine sentence names the date, the CPU, its cores and the load at both ends."""
    text = plots._machine_text(_document(load_average={"start": [3.31, 2, 1], "end": [1.5, 1, 1]}))
    assert text == (
        "Measured 2026-01-01 00:00 UTC on Test CPU (znver4), 2 usable CPUs; "
        "load average 3.3 at the start, 1.5 at the end."
    )


def test_caption_without_load_or_machine_still_reads() -> None:
    """A document without a load average or machine still gets a whole sentence."""
    assert plots._machine_text(_document()) == (
        "Measured 2026-01-01 00:00 UTC on Test CPU (znver4), 2 usable CPUs."
    )
    assert plots._machine_text({"date": "d"}) == "Measured d on unknown CPU."
