"""Probes in the Dask clusters of the bulk job's tests: log noise, dying workers, a timed signal.

As a preload, named in Dask's configuration (``DASK_DISTRIBUTED__WORKER__PRELOAD`` and
``DASK_DISTRIBUTED__SCHEDULER__PRELOAD``, see :func:`environment`), it runs in the scheduler and
in every worker of a cluster, the bulk job's own included:

* as each starts and as each closes, it logs an error on Dask's loggers, the message Dask logs
  when a worker's heartbeat meets a closing scheduler (which happens at random in a real run), and
  notes that it did in the file ``$TWOCATS_TEST_PRELOAD_LOG``;
* with ``TWOCATS_TEST_KILL_WORKERS=1``, a worker exits at once when a task starts on it, as a
  worker killed by the kernel would.

:class:`SignalMidBatch`, a worker plugin, signals a job in the middle of a batch and notes the
upgrades finished by then.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from distributed import Worker, WorkerPlugin
from distributed.core import Status

__all__ = ["HEARTBEAT_ERROR", "SignalMidBatch", "environment"]

#: What Dask logs when a heartbeat meets a closing scheduler.
HEARTBEAT_ERROR = "Failed to communicate with scheduler during heartbeat."


def environment(log: Path, *, kill_workers: bool = False) -> dict[str, str]:
    """The environment variables that load this preload, noting into `log`."""
    preload = repr([__name__])
    return {
        "DASK_DISTRIBUTED__WORKER__PRELOAD": preload,
        "DASK_DISTRIBUTED__SCHEDULER__PRELOAD": preload,
        "TWOCATS_TEST_PRELOAD_LOG": str(log),
        "TWOCATS_TEST_KILL_WORKERS": "1" if kill_workers else "0",
    }


def _noise(server: Any, when: str) -> None:
    kind = "worker" if isinstance(server, Worker) else "scheduler"
    logging.getLogger(f"distributed.{kind}").error(HEARTBEAT_ERROR)
    with open(os.environ["TWOCATS_TEST_PRELOAD_LOG"], "a") as log:
        log.write(f"{kind} {when}\n")


class _Killer(WorkerPlugin):
    """Exits the worker's process when a task starts on it."""

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing":
            os._exit(1)


def dask_setup(server: Any) -> None:
    """Log Dask's heartbeat error; on a worker, install the killer if asked to."""
    _noise(server, "started")
    if isinstance(server, Worker) and os.environ.get("TWOCATS_TEST_KILL_WORKERS") == "1":
        server.plugins["twocats-test-killer"] = _Killer()


def dask_teardown(server: Any) -> None:
    """Log Dask's heartbeat error as the server closes."""
    _noise(server, "closing")


class SignalMidBatch(WorkerPlugin):
    """Signals the job `pid` while a batch of its upgrades is half done.

    Each worker notes into `finished` the new hashes of each upgrade task it finishes.  As the
    `after`-th task finishes on a worker, the workers pause (each at its next task, on seeing the
    flag file `held`), so that the batch of that task stays unfinished, and `delay` seconds later,
    once the job has heard of that task, `signum` goes to the job (to its process group if
    `whole_group`).  The workers run again once the plugin is removed.
    """

    name = "twocats-test-signal-mid-batch"

    def __init__(
        self,
        pid: int,
        signum: int,
        *,
        whole_group: bool,
        finished: Path,
        held: Path,
        after: int = 3,
        delay: float = 0.5,
    ) -> None:
        self.pid, self.signum, self.whole_group = pid, signum, whole_group
        self.finished, self.held = finished, held
        self.after, self.delay = after, delay
        self.count = 0

    def setup(self, worker: Any) -> None:
        self.worker = worker

    def teardown(self, worker: Any) -> None:
        if worker.status == Status.paused:
            worker.status = Status.running

    def _signal(self) -> None:
        if self.whole_group:
            os.killpg(self.pid, self.signum)
        else:
            os.kill(self.pid, self.signum)

    def _pause(self) -> None:
        if self.worker.status == Status.running:
            self.worker.status = Status.paused

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if not str(key).startswith("upgrade_chunk"):
            return
        if self.held.exists():
            # Not inside the worker's transition: on its event loop, next.
            self.worker.loop.add_callback(self._pause)
            return
        if finish != "memory":
            return
        results = self.worker.data[key]
        with open(self.finished, "a") as notes:
            notes.writelines(f"{new}\n" for new, _ in results if new is not None)
        self.count += 1
        if self.count == self.after:
            self.held.touch()
            self.worker.loop.add_callback(self._pause)
            threading.Timer(self.delay, self._signal).start()
