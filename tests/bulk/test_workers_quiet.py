"""No Dask log line reaches the user of upgrade-db: on a run, dry runs or a stop; a real worker
failure is told by the job's own report.

A worker's heartbeat that meets the scheduler closing makes Dask log a 30-line error, at random
(2 runs in 10 of a dry run with 8 workers on the project machine).  Here every worker and the
scheduler of the job's own cluster log that error as they start and as they close, through a Dask
preload (:mod:`tests.support.dask_probes`), so each run meets it; the preload notes that it ran,
so that these tests cannot pass without it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.bulk.test_upgrade import KILL_TARGET, OLD, _contents, _count_upgraded, _create
from tests.support import dask_probes
from tests.support.dask_probes import HEARTBEAT_ERROR
from twocats.password import PasswordHasher
from twocats.phc import encode_params

REPO = Path(__file__).resolve().parents[2]

#: The runs of the dry run: each meets Dask's error as its workers close.
DRY_RUNS = 3

#: What Dask, asyncio or multiprocessing write when something goes wrong untidily.
NOISE = ("distributed.", HEARTBEAT_ERROR, "Traceback", "Task exception", "Warning")


def _table(tmp_path: Path, rows: int) -> str:
    """A SQLite table of `rows` hashes at OLD; its URL."""
    database = tmp_path / "users.db"
    database.touch()
    url = f"sqlite:///{database}"
    hasher = PasswordHasher.from_params(OLD)
    _create(url, [(key, hasher.hash(f"password {key}")) for key in range(rows)])
    return url


def _command(url: str, *options: str) -> list[str]:
    return [
        sys.executable, "-c", "from twocats.cli import main; main()",
        "upgrade-db", url, "--table", "users", "--key-column", "id", "--hash-column", "password",
        "--workers", "1", *options,
    ]  # fmt: skip


def _environment(log: Path, **preload: bool) -> dict[str, str]:
    pythonpath = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, **dask_probes.environment(log, **preload), "PYTHONPATH": pythonpath}


def _assert_quiet(stderr: str) -> None:
    for noise in NOISE:
        assert noise not in stderr, stderr


def _assert_met(log: Path) -> None:
    """The preload ran, and its error was logged as the scheduler and a worker closed."""
    notes = log.read_text().splitlines()
    assert "worker closing" in notes, notes
    assert "scheduler closing" in notes, notes
    log.unlink()


def _quiet_run(url: str, log: Path, *options: str) -> str:
    """Run upgrade-db to KILL_TARGET with the preload; check it says nothing of Dask's although
    the preload logged its error; return its standard output."""
    done = subprocess.run(
        _command(url, "--params", encode_params(KILL_TARGET), *options),
        env=_environment(log), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _assert_quiet(done.stderr)
    _assert_met(log)
    return done.stdout


def test_dry_runs_and_a_run_print_no_dask_log(tmp_path: Path) -> None:
    """Dry runs and a run whose cluster logs Dask's heartbeat error print none of it."""
    url = _table(tmp_path, 6)
    log = tmp_path / "preload.log"
    for _ in range(DRY_RUNS):
        assert "to upgrade: 6" in _quiet_run(url, log, "--dry-run")
    assert "upgraded: 6" in _quiet_run(url, log)


def test_a_stop_prints_no_dask_log(tmp_path: Path) -> None:
    """SIGTERM mid-run: one line about the stop, none of Dask's."""
    url = _table(tmp_path, 400)
    log = tmp_path / "preload.log"
    job = subprocess.Popen(
        _command(url, "--params", encode_params(KILL_TARGET)),
        env=_environment(log), start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while _count_upgraded(url, KILL_TARGET.mem_cost) == 0 and time.monotonic() < deadline:
            assert job.poll() is None, job.communicate()
            time.sleep(0.05)
        job.send_signal(signal.SIGTERM)
        _, stderr = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    assert job.returncode == 128 + signal.SIGTERM, stderr
    assert stderr.strip().splitlines()[-1].startswith("stopped by SIGTERM: ")
    _assert_quiet(stderr)
    _assert_met(log)


def test_workers_that_die_fail_their_rows_in_the_report_alone(tmp_path: Path) -> None:
    """Workers killed as each task starts: the rows count as worker_failed, exit status 1, and
    nothing of Dask's on standard error."""
    url = _table(tmp_path, 3)
    before = _contents(url)
    log = tmp_path / "preload.log"
    env = {
        **_environment(log, kill_workers=True),
        # A task is given up the first time its worker dies.
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
    }
    run = subprocess.run(
        _command(url, "--params", encode_params(KILL_TARGET)),
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "failed: 3: worker_failed" in run.stdout
    assert "upgraded: 0" in run.stdout
    assert run.stderr.strip().splitlines()[-1] == (
        "exit status 1: 3 rows are not at the target (see above)"
    )
    _assert_quiet(run.stderr)
    assert _contents(url) == before
