"""A bulk job stopped mid-batch keeps the upgrades already made, on SQLite and PostgreSQL.

Batches are sized by time (:mod:`twocats.bulk.pace`) and sent as several tasks per worker; a stop
writes the rows whose task has finished.  The stop comes from the job's own progress (the moment
rows are done but their batch is not yet written) and from real signals to ``upgrade-db``, sent by
the workers as a task of a batch finishes while the batch's other tasks are held back
(:class:`tests.support.dask_probes.SignalMidBatch`): every upgrade finished by then is written,
and every row holds its old value or a new one that verifies (``tests/bulk/test_signals.py``
reruns a stopped job).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.bulk.test_upgrade import (  # noqa: F401 - fixtures
    KILL_TARGET,
    OLD,
    _check_upgraded,
    _contents,
    _count_upgraded,
    _create,
    _twocats_rows,
    _upgrade,
    dask_client,
    db_url,
    postgres,
)
from tests.support.dask_probes import SignalMidBatch
from twocats.phc import decode, encode_params

#: Rows of the signal tests: the job is stopped in its third batch or so.
ROWS = 300

_STOPPED = re.compile(
    r"stopped by (SIG\w+): (\d+) rows written \((\d+) of them upgraded in the batches in flight\)"
)


def _old_or_new(url: str, before: dict[int, str | None]) -> list[int]:
    """Check that every row holds its old value or an upgrade that verifies; return the new."""
    after = _contents(url)
    assert after.keys() == before.keys()
    upgraded = [key for key, value in after.items() if value != before[key]]
    _check_upgraded(after, upgraded, KILL_TARGET)
    for key in after.keys() - set(upgraded):
        value = after[key]
        assert value is not None
        assert decode(value.removeprefix("twocats$")).params == OLD
    return upgraded


def test_a_stop_between_tasks_writes_every_finished_upgrade(
    db_url: str,  # noqa: F811 - the fixture
    dask_client: Any,  # noqa: F811 - the fixture
) -> None:
    """Stopped once rows are done but not written: they are written, and so counted."""
    rows = _twocats_rows(60)
    _create(db_url, rows)
    stop = threading.Event()
    seen: list[tuple[int, int]] = []

    def stop_mid_batch(done: int, total: int) -> None:
        if stop.is_set():
            return
        written = _count_upgraded(db_url, KILL_TARGET.mem_cost)
        if written > 0 and done > written:
            seen.append((done, written))
            stop.set()

    report = _upgrade(db_url, dask_client, target=KILL_TARGET, progress=stop_mid_batch, stop=stop)
    assert report.stopped
    ((done, written),) = seen
    upgraded = _old_or_new(db_url, dict(rows))
    # Every row counted as done when the stop came is written; so are those finished since.
    assert len(upgraded) == report.upgraded >= done
    assert report.written_at_stop >= done - written > 0
    rerun = _upgrade(db_url, dask_client, target=KILL_TARGET)
    assert (rerun.upgraded, rerun.current, rerun.failed) == (60 - len(upgraded), len(upgraded), {})


@pytest.mark.parametrize(
    ("db_url", "signum", "whole_group"),
    [("sqlite", signal.SIGINT, True), ("postgresql", signal.SIGTERM, False)],
    ids=["sqlite, ctrl-c to the group", "postgresql, sigterm to the command"],
    indirect=["db_url"],
)
def test_a_signal_mid_batch_keeps_the_upgrades_made(
    db_url: str,  # noqa: F811 - the fixture
    dask_client: Any,  # noqa: F811 - the fixture
    signum: signal.Signals,
    whole_group: bool,
    tmp_path: Path,
) -> None:
    """SIGINT or SIGTERM while a batch is half done: every upgrade finished by then is written,
    and every row holds its old value or a new one."""
    rows = _twocats_rows(ROWS)
    _create(db_url, rows)
    command = [
        sys.executable, "-c", "from twocats.cli import main; main()",
        "upgrade-db", db_url, "--table", "users", "--key-column", "id",
        "--hash-column", "password", "--params", encode_params(KILL_TARGET),
        "--scheduler", dask_client.scheduler.address,
    ]  # fmt: skip
    finished, held = tmp_path / "finished", tmp_path / "held"
    job = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    probe = SignalMidBatch(job.pid, signum, whole_group=whole_group, finished=finished, held=held)
    dask_client.register_plugin(probe, name=probe.name)
    try:
        _, stderr = job.communicate(timeout=300)
    finally:
        dask_client.unregister_worker_plugin(probe.name)
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    assert held.exists(), stderr
    assert job.returncode == 128 + signum, stderr
    found = _STOPPED.search(stderr.strip().splitlines()[-1])
    assert found is not None, stderr
    name, written, kept = found[1], int(found[2]), int(found[3])
    assert name == signum.name
    upgraded = _old_or_new(db_url, dict(rows))
    assert written == len(upgraded)
    stored = {str(value).removeprefix("twocats$") for value in _contents(db_url).values()}
    done = finished.read_text().split()
    assert done
    assert set(done) <= stored
    assert kept > 0
