"""The bulk upgrade trusts no one: its own cluster is closed to others, and results are checked.

The job's local cluster is probed during a run by a second Python process, and the environment
of every worker process is read from /proc.  Tampered workers of a real cluster return forged
upgrades, which are refused before anything is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import distributed
import psutil
import pytest
from click.testing import CliRunner

from tests.bulk.test_upgrade import (
    KILL_TARGET,
    OLD,
    TARGET,
    _contents,
    _count_upgraded,
    _create,
    _password,
    _twocats_rows,
    _upgrade,
    dask_client,  # noqa: F401 - a fixture
)
from twocats.bulk import JobAbortedError, credentials, upgrade_table
from twocats.bulk.credentials import job_security
from twocats.cli import main
from twocats.password import PasswordHasher
from twocats.phc import decode, encode_params

#: Tries to use the cluster at argv[1], in plain TCP and in TLS with credentials of its own.
PROBE = """
import sys
from distributed import Client, Security
port = sys.argv[1]
for address, security in ((f"tcp://127.0.0.1:{port}", None),
                          (f"tls://127.0.0.1:{port}", Security.temporary())):
    try:
        client = Client(address, security=security, timeout=5)
    except Exception as error:
        print("refused", type(error).__name__)
    else:
        print("CONNECTED", client.run(lambda: 1))
        client.close()
"""

URL_SECRET = "sqlite-url-marker"


def _listening_ports(process: psutil.Process) -> set[int]:
    return {c.laddr.port for c in process.net_connections("tcp") if c.status == psutil.CONN_LISTEN}


def _http_pages(processes: list[psutil.Process]) -> list[str]:
    """Return the pages about the cluster's work that the processes' HTTP endpoints serve."""
    served = []
    for process in processes:
        for port in _listening_ports(process):
            for path in ("/info/main/workers.html", "/json/identity.json", "/metrics"):
                address = f"http://127.0.0.1:{port}{path}"
                try:
                    with urllib.request.urlopen(address, timeout=10):
                        served.append(address)
                except OSError:
                    continue
    return served


def test_the_job_cluster_refuses_other_clients_and_its_workers_hold_no_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During a run a second process cannot use the cluster, and no worker has the URL."""
    path = tmp_path / "users.db"
    path.touch()
    url = f"sqlite:///{path}"
    _create(url, _twocats_rows(12))
    monkeypatch.setenv("TWOCATS_DATABASE_URL", f"{url}?{URL_SECRET}")
    monkeypatch.setenv("PGPASSWORD", "pg-password-marker")
    me = psutil.Process()
    probed: list[str] = []
    environments: list[bytes] = []
    pages: list[str] = []

    def probe(done: int, total: int) -> None:
        if probed:
            return
        workers = [child for child in me.children(recursive=True) if child.pid != me.pid]
        environments.extend(Path(f"/proc/{w.pid}/environ").read_bytes() for w in workers)
        # The ports of this process that the workers are connected to: the scheduler's.
        ours = _listening_ports(me)
        used = {
            c.raddr.port
            for worker in workers
            for c in worker.net_connections("tcp")
            if c.raddr and c.raddr.port in ours
        }
        assert used, "the workers are connected to no port of this process"
        pages.extend(_http_pages([me, *workers]))
        for port in sorted(used):
            result = subprocess.run(
                [sys.executable, "-c", PROBE, str(port)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            probed.append(result.stdout + result.stderr)

    report = upgrade_table(
        url,
        "users",
        key_column="id",
        hash_column="password",
        target=TARGET,
        workers=2,
        batch_size=4,
        progress=probe,
    )
    assert report.upgraded == 12
    assert probed
    for output in probed:
        assert output.count("refused") == 2, output
        assert "CONNECTED" not in output
    assert pages == [], "the cluster's HTTP endpoints show more than a health check"
    assert len(environments) >= 2
    for environment in environments:
        assert b"TWOCATS_DATABASE_URL" not in environment
        assert URL_SECRET.encode() not in environment
        assert b"pg-password-marker" not in environment
    # This process gets its variables back when the cluster is gone.
    assert os.environ["TWOCATS_DATABASE_URL"].endswith(URL_SECRET)
    assert os.environ["PGPASSWORD"] == "pg-password-marker"


def test_the_cli_job_cluster_is_closed_and_its_workers_never_see_the_url(tmp_path: Path) -> None:
    """upgrade-db held mid-run: its cluster refuses a second process; no worker has the URL."""
    path = tmp_path / "users.db"
    path.touch()
    url = f"sqlite:///{path}"
    _create(url, _twocats_rows(60))
    command = [
        sys.executable, "-c", "from twocats.cli import main; main()", "upgrade-db",
        "--table", "users", "--key-column", "id", "--hash-column", "password",
        "--params", encode_params(KILL_TARGET), "--batch-size", "2", "--workers", "2", "--json",
    ]  # fmt: skip
    environment = {**os.environ, "TWOCATS_DATABASE_URL": url}
    job = subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lock = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        while _count_upgraded(url, KILL_TARGET.mem_cost) == 0 and job.poll() is None:
            time.sleep(0.01)
        # The job waits for this lock with its cluster up; the workers are its children.
        lock.execute("BEGIN EXCLUSIVE")
        assert job.poll() is None, "the job ended before it could be held"
        parent = psutil.Process(job.pid)
        workers = parent.children(recursive=True)
        environments = [Path(f"/proc/{w.pid}/environ").read_bytes() for w in workers]
        ours = _listening_ports(parent)
        used = {
            c.raddr.port
            for worker in workers
            for c in worker.net_connections("tcp")
            if c.raddr and c.raddr.port in ours
        }
        outputs = [
            subprocess.run(
                [sys.executable, "-c", PROBE, str(port)], capture_output=True, text=True, timeout=60
            )
            for port in sorted(used)
        ]
        lock.execute("COMMIT")
        stdout, stderr = job.communicate(timeout=600)
    finally:
        lock.close()
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, stdout + stderr
    assert json.loads(stdout)["upgraded"] == 60
    assert len(environments) >= 2
    for environment_bytes in environments:
        assert b"TWOCATS_DATABASE_URL" not in environment_bytes
        assert url.encode() not in environment_bytes
    assert used
    for output in outputs:
        assert output.stdout.count("refused") == 2, output.stdout + output.stderr
        assert "CONNECTED" not in output.stdout


def _tamper(dask_worker: Any, how: str) -> None:
    """Replace the job's upgraders on this worker with ones whose upgrades are forged `how`."""
    from twocats import phc as codec

    [plugin] = [p for name, p in dask_worker.plugins.items() if name.startswith("twocats-bulk-")]
    real = plugin.upgraders

    class Forger:
        def upgrade(self, stored: str) -> str:
            honest = codec.decode(real.upgrade(stored))
            if how == "new salt":
                return codec.encode(honest.params, b"the attacker's!!", honest.digest)
            wrong = bytes([honest.digest[0] ^ 1]) + honest.digest[1:]
            return codec.encode(honest.params, honest.salt, wrong)

        def __getattr__(self, attribute: str) -> Any:
            return getattr(real, attribute)

    plugin.upgraders = Forger()


def _drop_plugins(dask_worker: Any) -> None:
    """Remove the plugins earlier jobs left on this worker."""
    for name in [name for name in dask_worker.plugins if name.startswith("twocats-bulk-")]:
        del dask_worker.plugins[name]


@pytest.mark.parametrize("how", ["new salt", "wrong digest"])
def test_forged_results_are_refused_and_never_written(
    tmp_path: Path,
    dask_client: Any,  # noqa: F811 - the fixture
    how: str,
) -> None:
    """Forged upgrades (another salt, or the right shape with a wrong digest) are not written."""
    path = tmp_path / "users.db"
    path.touch()
    url = f"sqlite:///{path}"
    rows = _twocats_rows(24)
    _create(url, rows)
    # Plugins of other tests' jobs are gone: the job's is the only one left to tamper with.
    dask_client.run(_drop_plugins)

    tampered: list[bool] = []

    def tamper_after_four_rows(done: int, total: int) -> None:
        # Once four rows are written; at most two batches of four are in flight then.
        written = sum(value != dict(rows)[key] for key, value in _contents(url).items())
        if not tampered and written >= 4:
            tampered.append(True)
            dask_client.run(_tamper, how=how)

    report = _upgrade(
        url, dask_client, target=TARGET, batch_size=4, progress=tamper_after_four_rows
    )
    assert tampered
    after = _contents(url)
    before = dict(rows)
    verifier = PasswordHasher.from_params(TARGET)
    changed = [key for key in after if after[key] != before[key]]
    assert 4 <= len(changed) < 24
    for key in changed:
        value = str(after[key]).removeprefix("twocats$")
        assert decode(value).params.mem_cost == TARGET.mem_cost
        assert verifier.verify(value, _password(key))
    assert report.upgraded == len(changed)
    assert report.failed == {"result_refused": 24 - len(changed)}
    assert decode(str(before[0]).removeprefix("twocats$")).params == OLD


def test_a_tls_cluster_of_ones_own_is_used_with_the_tls_options(tmp_path: Path) -> None:
    """--scheduler tls://... with --tls-ca-file, --tls-cert and --tls-key upgrades the table."""
    path = tmp_path / "users.db"
    path.touch()
    url = f"sqlite:///{path}"
    _create(url, _twocats_rows(6))
    with job_security() as security:
        cluster = distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=security,
            dashboard_address="127.0.0.1:0",
        )
        with cluster:
            files = [
                "--tls-ca-file", security.tls_ca_file,
                "--tls-cert", security.tls_client_cert,
                "--tls-key", security.tls_client_key,
            ]  # fmt: skip
            args = ["upgrade-db", url, "--table", "users", "--key-column", "id"]
            args += ["--hash-column", "password", "--params", encode_params(TARGET), "--json"]
            args += ["--scheduler", cluster.scheduler_address]
            plain = CliRunner().invoke(main, args)
            result = CliRunner().invoke(main, [*args, *files])
    assert plain.exit_code == 2, plain.output
    assert "needs --tls-ca-file, --tls-cert and --tls-key" in plain.stderr
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upgraded"] == 6
    assert "warning" not in result.stderr


def test_job_credentials_are_private_memory_files_closed_afterwards() -> None:
    """The CA, certificate and key are memory files of mode 0600, closed after the block."""
    with job_security() as security:
        key = Path(security.tls_client_key)
        assert key.parent == Path(f"/proc/{os.getpid()}/fd")
        assert os.readlink(key) == "/memfd:twocats-bulk-key.pem (deleted)"
        assert key.stat().st_mode & 0o777 == 0o600
        assert key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
        assert Path(security.tls_ca_file).read_bytes().startswith(b"-----BEGIN CERTIFICATE")
        assert security.require_encryption
        assert security.tls_scheduler_key == security.tls_worker_key == str(key)
    assert not key.exists()


def test_without_memory_files_the_credentials_are_private_files_and_stale_ones_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without memfd: a 0700 folder named after the job, gone afterwards; a dead job's goes too."""
    monkeypatch.setattr(credentials, "_in_memory_supported", lambda: False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # A process that has ended leaves a pid that no process holds for now.
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmp_path / f"{credentials.DIRECTORY_PREFIX}{ended.stdout.strip()}-x1"
    alive = tmp_path / f"{credentials.DIRECTORY_PREFIX}{os.getppid()}-x2"
    for folder in (stale, alive):
        folder.mkdir(mode=0o700)
        (folder / "key.pem").write_text("old key")
    with job_security() as security:
        key = Path(security.tls_client_key)
        directory = key.parent
        assert directory.name.startswith(f"{credentials.DIRECTORY_PREFIX}{os.getpid()}-")
        assert directory.stat().st_mode & 0o777 == 0o700
        assert key.stat().st_mode & 0o777 == 0o600
        assert {path.name for path in directory.iterdir()} == {"ca.pem", "cert.pem", "key.pem"}
        assert not stale.exists()
        assert alive.exists()
    assert not directory.exists()


def test_losing_the_cluster_midway_aborts_with_the_counts_so_far(tmp_path: Path) -> None:
    """The cluster closed after the first batch: JobAbortedError, and every row old or new."""
    path = tmp_path / "users.db"
    path.touch()
    url = f"sqlite:///{path}"
    rows = _twocats_rows(12)
    _create(url, rows)
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    )
    with cluster, distributed.Client(cluster) as client:

        def close_after_first_batch(done: int, total: int) -> None:
            if cluster.status.name == "running" and _contents(url) != dict(rows):
                cluster.close()

        with pytest.raises(JobAbortedError, match="the Dask cluster went away") as aborted:
            _upgrade(url, client, target=TARGET, batch_size=2, progress=close_after_first_batch)
    report = aborted.value.report
    # The first batch holds one row per worker: the one row written.
    assert report.upgraded == 1
    assert report.aborted == "the Dask cluster went away"
    after = _contents(url)
    changed = [key for key, value in rows if after[key] != value]
    assert changed == [0]
