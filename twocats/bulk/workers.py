"""The Dask side of a bulk upgrade: a worker plugin that holds the hashers, and the task it runs.

Each worker builds the hasher of each family of parameters to upgrade to (one for a full target;
one per kind of stored hash for a memory cost alone, see :class:`twocats.password.Target`) and
loads its kernels (:func:`twocats.bulk.sample.warm_up`): those the survey found when the plugin is
registered, so no task pays for compilation, any other on first use.  Upgrades running at
once on one worker are bounded by a semaphore: at most one per worker thread, and no more than
the worker's memory limit holds at the target's memory cost.

A local cluster started for the job speaks TLS with throwaway credentials that only the job holds
(:func:`twocats.bulk.credentials.job_security`), listens on 127.0.0.1 only, serves no dashboard,
and its workers start without the environment variables that can hold a database password
(:data:`SECRET_VARIABLES`): they only ever see hash strings.  They start with SIGINT ignored, so
that a Ctrl-C stops the job, which shuts them down, rather than each of them on its own.  Dask's
own log messages, in the job's process and in its workers (:data:`QUIET_LOGGING`), and whatever
else its workers write (this module is their preload: :func:`dask_setup`), are kept from the
user: a worker's heartbeat that meets the scheduler closing at the end of a run, a dry run or a
stop is no news, nor is the traceback of a worker restarted as the cluster closes, and a real
failure reaches the user as the job's own report of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, cast

from twocats._extras import missing_extra

try:
    import dask
    from distributed import Client, LocalCluster, Security, WorkerPlugin, get_worker
except ImportError as error:
    raise missing_extra(__name__, error, "bulk") from None

from twocats._machine import usable_cpus
from twocats.bulk.credentials import job_security
from twocats.bulk.sample import warm_up
from twocats.exceptions import InvalidParametersError, TwoCatsError
from twocats.kdf.fill.threads import THREADS_ENV
from twocats.params import Params
from twocats.password import Target, Upgraders

__all__ = [
    "SECRET_VARIABLES",
    "UpgradePlugin",
    "Workers",
    "open_workers",
    "upgrade_chunk",
]

#: Seconds to wait for an existing cluster's scheduler and its first worker.
CONNECT_TIMEOUT = 30

#: Environment variables that can hold a database password: the job's own workers never get them.
SECRET_VARIABLES: Final = ("TWOCATS_DATABASE_URL", "DATABASE_URL", "PGPASSWORD")

#: The environment the job's own workers start with besides: Dask's logging configuration, read
#: as Dask is imported, with every logger Dask sets up at its most silent level.
QUIET_LOGGING: Final = {
    "DASK_LOGGING": repr(
        dict.fromkeys(
            ("distributed", "distributed.client", "distributed.gc", "tornado.application"),
            "critical",
        )
    )
}

# The HTTP endpoints of the job's own cluster: a health check, and nothing that shows its work.
_HTTP_ROUTES: Final = {
    "distributed.scheduler.http.routes": ["distributed.http.health"],
    "distributed.worker.http.routes": ["distributed.http.health"],
}


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, in each worker of the job's own cluster as it starts: Python's
    standard output and error go nowhere, so that nothing a worker writes (a traceback Dask
    prints as it closes, say) reaches the job's terminal or its JSON document."""
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the process's life


def _own_cluster_config() -> dict[str, Any]:
    """Dask's configuration for the job's own cluster: its HTTP endpoints and its workers'
    preload (this module), before any others."""
    preloads = dask.config.get("distributed.worker.preload", default=[])
    return {**_HTTP_ROUTES, "distributed.worker.preload": [__name__, *preloads]}


class UpgradePlugin(WorkerPlugin):
    """Builds the hashers that upgrade to the target on each worker and bounds the upgrades it runs.

    `families` are the parameters of the hashers to build and warm up at once; the limits are
    those the job checked the rows against.
    """

    def __init__(
        self,
        target: Target,
        *,
        families: tuple[Params, ...] = (),
        max_memory: int | None,
        max_work: int | None = None,
        backend: str | None,
        fill_threads: int | None,
    ) -> None:
        self.target = target
        self.families = families
        self.max_memory = max_memory
        self.max_work = max_work
        self.backend = backend
        self.fill_threads = fill_threads
        digest = hashlib.sha256(
            repr((target, families, max_memory, max_work, backend)).encode()
        ).hexdigest()
        self.name = f"twocats-bulk-{digest[:16]}"

    def setup(self, worker: Any) -> None:
        """Build the hashers, load their kernels and size the semaphore for this worker."""
        if self.fill_threads is not None:
            os.environ[THREADS_ENV] = str(self.fill_threads)
        self.upgraders = Upgraders(
            self.target,
            max_memory=self.max_memory,
            max_work=self.max_work,
            backend=self.backend,
            prepare=warm_up,
        )
        for params in self.families:
            self.upgraders(params)
        slots = max(1, int(worker.state.nthreads))
        memory_limit = worker.memory_manager.memory_limit
        if memory_limit:
            slots = min(slots, max(1, int(memory_limit) // (1024 << self.target.mem_cost)))
        self.slots = threading.BoundedSemaphore(slots)

    def teardown(self, worker: Any) -> None:
        """Let go of the hashers' work memory."""
        self.upgraders.release()


def upgrade_chunk(plugin_name: str, hashes: list[str]) -> list[tuple[str | None, str | None]]:
    """Upgrade PHC strings on this worker; return (new hash, None) or (None, reason) for each."""
    plugin = cast(UpgradePlugin, get_worker().plugins[plugin_name])
    results: list[tuple[str | None, str | None]] = []
    for stored in hashes:
        try:
            with plugin.slots:
                results.append((plugin.upgraders.upgrade(stored), None))
        except TwoCatsError as error:
            results.append((None, str(error)))
    return results


@dataclass(frozen=True)
class Workers:
    """A Dask client, the number of workers it reaches, and the fill threads each hash may use."""

    client: Client
    count: int
    fill_threads: int | None


@contextlib.contextmanager
def _worker_environment() -> Iterator[None]:
    """Remove :data:`SECRET_VARIABLES` from this process's environment and add
    :data:`QUIET_LOGGING` while the block runs.

    Worker processes started meanwhile (restarted ones too) inherit that environment.
    """
    saved = {name: os.environ.pop(name) for name in SECRET_VARIABLES if name in os.environ}
    replaced = {name: os.environ.get(name) for name in QUIET_LOGGING}
    os.environ.update(QUIET_LOGGING)
    try:
        yield
    finally:
        for name, value in replaced.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        os.environ.update(saved)


@contextlib.contextmanager
def _interrupts_left_to_the_job() -> Iterator[None]:
    """Ignore SIGINT while the block starts worker processes, so that they ignore it too.

    A Ctrl-C at a terminal reaches every process of its group; a worker that took it would die
    with a traceback.  Processes started with SIGINT ignored keep ignoring it, so the job alone
    decides what an interrupt does (and shuts its workers down).  Outside the main thread, where
    signals cannot be set, the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def open_workers(
    client: Client | None = None,
    *,
    scheduler: str | None = None,
    security: Security | None = None,
    workers: int | None = None,
) -> Iterator[Workers]:
    """Yield the workers of `client`, of the cluster at `scheduler`, or of a new local cluster.

    `security` holds the TLS credentials for `scheduler` (None: those of Dask's configuration).
    A local cluster has `workers` processes (default: one per usable core) of one thread each,
    and each hash then uses the cores of its worker's share; only the job can connect to it, and
    it is shut down afterwards.
    """
    if client is not None:
        yield Workers(client, _count(client), None)
        return
    if scheduler is not None:
        try:
            remote = Client(scheduler, timeout=CONNECT_TIMEOUT, security=security)
        except TypeError:
            # Dask's way of saying that a tls:// address was given no credentials.
            raise InvalidParametersError(
                f"--scheduler: cannot reach a Dask scheduler at {scheduler}: a tls:// address "
                "needs --tls-ca-file, --tls-cert and --tls-key (or the distributed.comm.tls "
                "section of Dask's configuration)"
            ) from None
        except (OSError, TimeoutError, ValueError) as error:
            raise InvalidParametersError(
                f"--scheduler: cannot reach a Dask scheduler at {scheduler}: {error}"
            ) from None
        with remote:
            yield Workers(remote, _count(remote), None)
        return
    count = workers or usable_cpus()
    with job_security() as own, _worker_environment(), dask.config.set(_own_cluster_config()):
        with _interrupts_left_to_the_job():
            cluster = LocalCluster(
                n_workers=count,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                protocol="tls://",
                security=own,
                # Its HTTP endpoint (a health check) on a free loopback port.
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.CRITICAL,
            )
        with cluster, Client(cluster, security=own) as local:
            yield Workers(local, count, max(1, usable_cpus() // count))


def _count(client: Client) -> int:
    """Return the number of workers of `client`'s cluster, waiting for the first one."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except TimeoutError:
        raise InvalidParametersError(
            f"the Dask cluster has no worker after {CONNECT_TIMEOUT} s"
        ) from None
    return max(1, len(client.nthreads()))
