"""A throwaway PostgreSQL server for tests: initdb and pg_ctl in a temporary directory.

The server listens on 127.0.0.1 on a free port, trusts local connections, and is removed when
stopped.  When the tests run as root it runs as the ``postgres`` user (PostgreSQL refuses root),
which then owns the directory.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PostgresServer", "find_bin_dir"]


def find_bin_dir() -> Path | None:
    """Return the directory of the machine's newest initdb and pg_ctl, or None."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: int(Path(path).parent.name)
    )
    for directory in reversed(candidates):
        if os.access(Path(directory) / "initdb", os.X_OK):
            return Path(directory)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One PostgreSQL server in a temporary directory; :meth:`start` it, then :meth:`stop` it."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="twocats-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of the server's ``postgres`` database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def database_url(self, name: str) -> str:
        """The URL of database `name` on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *command: str) -> None:
        argv = [str(self.bin_dir / command[0]), *command[1:]]
        if self._as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        """Create the cluster and start the server; raises CalledProcessError with its output."""
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        self.resume()

    def halt(self) -> None:
        """Stop the server at once, as a crash would, keeping its data for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def resume(self) -> None:
        """Start the server of the cluster on its port (again, after :meth:`halt`)."""
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off"
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w",
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its directory."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        """Return the server's log, for a failure message."""
        try:
            return (self.root / "log").read_text(errors="replace")
        except OSError:
            return ""
