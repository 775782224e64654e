"""upgrade-db stopped by a real signal mid-run: one line, the right exit status, a rerun finishes.

Each test runs the command in a process group of its own on SQLite with a local cluster of one
worker, as a terminal's Ctrl-C (SIGINT to the whole group), a container runtime (SIGTERM to the
command alone) or ``kill -9`` (SIGKILL to the group) would stop it.  The temporary folder of the
job is a private one, searched for the TLS key during the run and after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bulk.test_upgrade import (
    KILL_TARGET,
    _check_upgraded,
    _contents,
    _count_upgraded,
    _create,
    _twocats_rows,
)
from twocats.bulk import upgrade_table
from twocats.phc import encode_params

ROWS = 40

#: What Dask, asyncio or multiprocessing write when a process is stopped untidily.
NOISE = ("Traceback", "leaked", "Task exception", "never retrieved", "Exception", "Warning")


def _start(tmp_path: Path) -> tuple[str, Path, subprocess.Popen[str]]:
    """Create the table and start upgrade-db on it; return its URL, its temporary folder and it."""
    database = tmp_path / "users.db"
    database.touch()
    url = f"sqlite:///{database}"
    _create(url, _twocats_rows(ROWS))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [
        sys.executable, "-c", "from twocats.cli import main; main()",
        "upgrade-db", url, "--table", "users", "--key-column", "id", "--hash-column", "password",
        "--params", encode_params(KILL_TARGET), "--batch-size", "2", "--workers", "1",
    ]  # fmt: skip
    job = subprocess.Popen(
        command,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return url, scratch, job


def _wait_for_rows(url: str, job: subprocess.Popen[str]) -> None:
    """Wait until the job has written some rows, while it runs."""
    deadline = time.monotonic() + 300
    while _count_upgraded(url, KILL_TARGET.mem_cost) < 2 and time.monotonic() < deadline:
        assert job.poll() is None, job.communicate()
        time.sleep(0.02)


def _files_holding_a_key(folder: Path) -> list[Path]:
    """Return every file under `folder` that holds a PEM private key."""
    return [
        path for path in folder.rglob("*") if path.is_file() and b"PRIVATE KEY" in path.read_bytes()
    ]


def _memory_files(pid: int) -> list[str]:
    """Return the names of the memory files process `pid` holds open."""
    names = []
    for link in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(link)
        except OSError:
            continue
        if target.startswith("/memfd:"):
            names.append(target)
    return names


@pytest.mark.parametrize(
    ("signum", "whole_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["ctrl-c to the group", "sigterm to the command"],
)
def test_a_signal_stops_the_job_with_one_line_and_a_rerun_finishes(
    tmp_path: Path, signum: signal.Signals, whole_group: bool
) -> None:
    """SIGINT or SIGTERM mid-run: exit 128+N, no traceback or warning, one line, rerun completes."""
    url, scratch, job = _start(tmp_path)
    try:
        _wait_for_rows(url, job)
        if whole_group:
            os.killpg(job.pid, signum)
        else:
            job.send_signal(signum)
        stdout, stderr = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    assert job.returncode == 128 + signum, stderr
    for noise in NOISE:
        assert noise not in stderr, stderr
    assert stdout == ""
    lines = stderr.strip().splitlines()
    written = _count_upgraded(url, KILL_TARGET.mem_cost)
    assert 0 < written < ROWS
    assert lines[-1].startswith(f"stopped by {signum.name}: {written} rows written (")
    assert lines[-1].endswith(
        " upgraded in the batches in flight), every other row unchanged; a rerun resumes where "
        "this one stopped"
    )
    assert all(line.startswith("upgrading: ") for line in lines[:-1]), stderr
    assert not list(scratch.glob("twocats-bulk-tls-*"))
    rerun = upgrade_table(
        url, "users", key_column="id", hash_column="password", target=KILL_TARGET, workers=1
    )
    assert (rerun.upgraded, rerun.current, rerun.failed) == (ROWS - written, written, {})
    _check_upgraded(_contents(url), range(ROWS), KILL_TARGET)


def test_the_tls_key_is_never_on_disk_even_after_kill_9(tmp_path: Path) -> None:
    """The job's TLS key lives in a memory file: no file holds it mid-run or after SIGKILL."""
    url, scratch, job = _start(tmp_path)
    try:
        _wait_for_rows(url, job)
        held = _memory_files(job.pid)
        during = _files_holding_a_key(scratch)
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
    assert job.returncode == -signal.SIGKILL
    assert "/memfd:twocats-bulk-key.pem (deleted)" in held
    assert during == []
    assert _files_holding_a_key(scratch) == []
    assert not list(scratch.glob("twocats-bulk-tls-*"))
