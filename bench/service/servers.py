"""Real servers for the HTTP benchmark and its test.

:class:`Server` starts one of the two example services on 127.0.0.1 (the FastAPI example under
uvicorn, the Django example under gunicorn's threaded workers), waits until ``GET /health``
answers and stops it again.  :func:`register` creates users through ``POST /register`` and
:func:`plant` writes users with costly stored hashes straight into the database; the load
itself is :func:`bench.service.wrk.drive`'s.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from bench.harness import REPO
from bench.service.config import (
    ENV_DATABASE,
    ENV_HASHER,
    ENV_SIZE,
    ENV_TIMEOUT,
    planted_argon2,
    planted_twocats,
)
from twocats._machine import usable_cpus

__all__ = ["Server", "Service", "get", "password", "plant", "register"]

EXAMPLES = REPO / "examples"
HOST = "127.0.0.1"
#: How long a server may take to answer its first ``GET /health`` (imports, compiled kernels).
START_TIMEOUT = 180.0


def password(user: int) -> str:
    """The password of registered user number `user` (as the Lua script builds it)."""
    return f"pass-{user}-horse"


@dataclasses.dataclass(frozen=True)
class Service:
    """One service of the benchmark: a stack, a hasher, a size and its admission timeout."""

    stack: str
    hasher: str
    size: str = "full"
    timeout: float = 1.0
    #: One worker process per usable CPU.
    workers: int = dataclasses.field(default_factory=usable_cpus)
    #: gunicorn's threads per Django worker: a login waiting for the hasher holds one.
    threads: int = 32

    @property
    def name(self) -> str:
        """``stack/hasher``, as reports name it."""
        return f"{self.stack}/{self.hasher}"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    """A running service: ``with Server(service, folder) as server: ...`` (stops on exit)."""

    def __init__(self, service: Service, folder: Path) -> None:
        self.service = service
        self.folder = folder
        self.database = folder / f"{service.stack}-{service.hasher}.sqlite3"
        self.port = _free_port()
        self.log_path = folder / f"{service.stack}-{service.hasher}.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The base URL the service listens on."""
        return f"http://{HOST}:{self.port}"

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        paths = [str(REPO), str(EXAMPLES), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        env[ENV_HASHER] = self.service.hasher
        env[ENV_SIZE] = self.service.size
        env[ENV_DATABASE] = str(self.database)
        env[ENV_TIMEOUT] = repr(self.service.timeout)
        env["DJANGO_SETTINGS_MODULE"] = "bench.service.django_site"
        return env

    def _command(self) -> list[str]:
        service = self.service
        if service.stack == "fastapi":
            return [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "bench.service.apps:app",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--workers",
                str(service.workers),
                "--backlog",
                "2048",
                "--timeout-keep-alive",
                "60",
                "--no-access-log",
                "--log-level",
                "warning",
            ]
        return [
            sys.executable,
            "-m",
            "gunicorn",
            "django_login.wsgi",
            "--worker-class",
            "gthread",
            "--workers",
            str(service.workers),
            "--threads",
            str(service.threads),
            "--bind",
            f"{HOST}:{self.port}",
            "--backlog",
            "2048",
            "--keep-alive",
            "60",
            "--timeout",
            "120",
            "--graceful-timeout",
            "5",
            "--log-level",
            "warning",
        ]

    def __enter__(self) -> Server:
        env = self._environment()
        if self.service.stack == "django":
            subprocess.run(
                [sys.executable, "-m", "django", "migrate", "--noinput", "-v", "0"],
                env=env,
                cwd=REPO,
                check=True,
                timeout=120,
            )
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(
                self._command(),
                env=env,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_until_up()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"{self.service.name} exited at start:\n{self.log()}")
            try:
                answered = get(self.url, "/health", timeout=5)[0] == 200
            except OSError:
                answered = False
            # Every worker must be up before the load starts.
            if answered and len(self.workers()) >= self.service.workers:
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.service.name} did not answer within {START_TIMEOUT} s")

    def workers(self) -> list[int]:
        """The process ids of the worker processes."""
        if self._process is None:
            return []
        pid = self._process.pid
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return []
        found = []
        for child in children:
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"resource_tracker" not in command:
                found.append(int(child))
        return found

    def cpu_seconds(self) -> float:
        """The CPU time the workers have used so far, in seconds."""
        total = 0.0
        for pid in self.workers():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def drain(self, *, limit: float = 30.0, idle: float = 0.05) -> bool:
        """Wait until the workers use under `idle` of a core; False if still busy after `limit` s.

        After a load, a server may still be working through logins whose connections the load
        generator has closed; the next load must not share the machine with them.
        """
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            before, started = self.cpu_seconds(), time.monotonic()
            time.sleep(1.0)
            if self.cpu_seconds() - before < idle * (time.monotonic() - started):
                return True
        return False

    def restart(self) -> None:
        """Stop the server and start it again on the same database."""
        self.stop()
        self.port = _free_port()
        self.__enter__()

    def stop(self) -> None:
        """Stop the server and its workers (SIGTERM, then SIGKILL after 20 s)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)

    def log(self) -> str:
        """The server's output so far (its last 4000 characters)."""
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""


def get(url: str, path: str, timeout: float) -> tuple[int, bytes]:
    """``GET`` one path on a fresh connection; return the status and the body."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read(65536)
    finally:
        connection.close()


def _post(connection: http.client.HTTPConnection, path: str, body: dict[str, str]) -> int:
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = connection.getresponse()
    answer.read(65536)
    return answer.status


def register(url: str, users: int, *, callers: int = 4) -> None:
    """Register ``user1`` .. ``user<users>`` through ``POST /register`` (201, or 409 if there)."""
    host, port = url.removeprefix("http://").split(":")

    def one(user: int) -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            for _ in range(50):
                status = _post(
                    connection, "/register", {"username": f"user{user}", "password": password(user)}
                )
                if status in (201, 409):
                    return
                if status != 503:
                    raise RuntimeError(f"registering user{user} answered {status}")
                time.sleep(0.2)
            raise RuntimeError(f"registering user{user}: still busy")
        finally:
            connection.close()

    with ThreadPoolExecutor(callers) as pool:
        list(pool.map(one, range(1, users + 1)))


def plant(server: Server, count: int) -> None:
    """Write users ``planted1`` .. ``planted<count>`` with costly hashes into the database."""
    service = server.service
    size = service.size
    make = planted_twocats if service.hasher == "twocats" else planted_argon2
    with sqlite3.connect(server.database, timeout=20) as db:
        for number in range(1, count + 1):
            stored, name = make(size), f"planted{number}"
            if service.stack == "fastapi":
                db.execute("INSERT OR REPLACE INTO users VALUES (?, ?)", (name, stored))
                continue
            prefix = "twocats" if service.hasher == "twocats" else "argon2"
            db.execute(
                "INSERT OR REPLACE INTO auth_user (password, is_superuser, username, first_name,"
                " last_name, email, is_staff, is_active, date_joined)"
                " VALUES (?, 0, ?, '', '', '', 0, 1, datetime('now'))",
                (prefix + stored, name),
            )
