"""The adapters benchmark runs at its cheapest size, in its own process (it sets up Django)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_adapters_suite_smoke_run_checks_every_adapter() -> None:
    """python -m bench adapters --smoke checks each adapter; two ratios (wall, CPU) per adapter."""
    result = subprocess.run(
        [sys.executable, "-m", "bench", "adapters", "--smoke"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    ratios = [line for line in result.stdout.splitlines() if line.startswith("| CHEAPEST, ")]
    assert len(ratios) == 10
    assert any("cpu time: Django check_password / bare" in line for line in ratios)
    assert "Load average" in result.stdout


def test_decoy_suite_smoke_run_logs_both_users_in() -> None:
    """python -m bench decoy --smoke runs both Django logins under both configurations."""
    result = subprocess.run(
        [sys.executable, "-m", "bench", "decoy", "--smoke"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    ratios = [line for line in result.stdout.splitlines() if "upgraded user / missing user" in line]
    assert [line.split("|")[1].strip() for line in ratios] == [
        "start_mem_cost=None: upgraded user / missing user",
        "start_mem_cost=1: upgraded user / missing user",
    ]
