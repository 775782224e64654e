"""The example services against hostile input, under their real servers (uvicorn, gunicorn).

A planted 1 GiB argon2 hash is refused like a wrong password and never takes the FastAPI worker
past its ``LOGIN_MEMORY`` (its peak RSS is read from ``/proc``); a malformed argon2 or bcrypt
row, or one with 65,536 lanes, is answered 401 like a wrong password; a body above the limit is
answered 413, declared or sent in chunks; a lone surrogate is a 4xx, never a 500; and no error
answer repeats the password that was sent.
"""

from __future__ import annotations

import base64
import http.client
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.environment import need
from tests.support.foreign_rows import LIBRARY_REFUSES, MALFORMED, OUTPUT, SALT

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HOST = "127.0.0.1"

#: A password no answer may repeat.
SECRET = "tell-no-one-" + "x" * 1100
#: A stored argon2id hash asking for 1 GiB and one pass.
PLANTED_ARGON2 = (
    "$argon2id$v=19$m=1048576,t=1,p=1$"
    + base64.b64encode(bytes(16)).decode().rstrip("=")
    + "$"
    + base64.b64encode(bytes(32)).decode().rstrip("=")
)
#: What the worker may hold besides the hashes' work memory: the interpreter, its libraries.
BASELINE = 300 * 2**20
#: Stored foreign rows that must be answered like a wrong password: malformed, or with more lanes
#: than argon2 verifiers can start threads for.
BROKEN = {
    **MALFORMED,
    **LIBRARY_REFUSES,
    "many lanes": f"$argon2id$v=19$m=524288,t=1,p=65536${SALT}${OUTPUT}",
}


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _request(
    port: int, path: str, body: bytes | Iterator[bytes], headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        chunked = not isinstance(body, bytes)
        connection.request(
            "POST",
            path,
            body,
            {"Content-Type": "application/json", **(headers or {})},
            encode_chunked=chunked,
        )
        answer = connection.getresponse()
        return answer.status, answer.read()
    except (ConnectionResetError, BrokenPipeError):
        # A server may close the connection once it has answered 413 to a body still arriving.
        return 413, b""
    finally:
        connection.close()


def _login(port: int, username: str, password: str) -> tuple[int, bytes]:
    return _request(
        port, "/login", json.dumps({"username": username, "password": password}).encode()
    )


def _start(
    command: list[str], env: dict[str, str], cwd: Path, port: int
) -> subprocess.Popen[bytes]:
    log = open(cwd / "server.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((cwd / "server.log").read_text(errors="replace")[-3000:])
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not answer within 180 s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=20)


def _peak_rss(pid: int) -> int:
    """The process's peak resident set (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _environment(*paths: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), str(REPO), env.get("PYTHONPATH", "")])
    return env


def _hostile_bodies(port: int) -> dict[str, tuple[int, bytes]]:
    """Send each kind of hostile body to /login and /register; return the answers by kind."""
    surrogate = b'{"username": "ada", "password": "\\ud800"}'
    return {
        "declared": _request(port, "/login", b"{" + b" " * (1 << 20) + b"}"),
        "chunked": _request(
            port, "/login", iter([b'{"username": "ada", "password": "'] + [b"y" * 8192] * 64)
        ),
        "surrogate": _request(port, "/login", surrogate),
        "surrogate-register": _request(port, "/register", surrogate),
        "surrogate-name": _request(port, "/register", b'{"username": "\\udfff", "password": "p"}'),
        "long": _login(port, "ada", SECRET),
        "long-register": _request(
            port, "/register", json.dumps({"username": "ada", "password": SECRET}).encode()
        ),
        "bad-json": _request(
            port, "/login", b'{"username": "ada", "password": "' + SECRET.encode()
        ),
    }


def _check_hostile(answers: dict[str, tuple[int, bytes]]) -> None:
    assert answers["declared"][0] == 413, answers["declared"]
    assert answers["chunked"][0] == 413, answers["chunked"]
    for kind, (status, body) in answers.items():
        assert 400 <= status < 500, (kind, status, body[:300])
        assert b"tell-no-one" not in body, (kind, body[:300])
        assert b"ud800" not in body.lower(), (kind, body[:300])


def test_fastapi_example_refuses_a_planted_argon2_hash_within_its_memory(tmp_path: Path) -> None:
    """The FastAPI example: planted 1 GiB argon2 logins are 401 and peak RSS stays bounded."""
    for module in ("uvicorn", "fastapi", "pwdlib", "argon2"):
        if importlib.util.find_spec(module) is None:
            need(f"{module} (pip install -e '.[test]')")
    sys.path.insert(0, str(EXAMPLES))
    try:
        from fastapi_login import LOGIN_MEMORY
    finally:
        sys.path.remove(str(EXAMPLES))
    port = _free_port()
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "fastapi_login:create_app",
        "--host", HOST, "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    server = _start(command, _environment(EXAMPLES), tmp_path, port)
    try:
        with sqlite3.connect(tmp_path / "users.sqlite3", timeout=20) as db:
            db.execute("INSERT INTO users VALUES (?, ?)", ("planted", PLANTED_ARGON2))
            db.executemany("INSERT INTO users VALUES (?, ?)", BROKEN.items())
        with ThreadPoolExecutor(3) as pool:
            statuses = list(pool.map(lambda _: _login(port, "planted", "guess")[0], range(3)))
        broken = {name: _login(port, name, "guess") for name in BROKEN}
        answers = _hostile_bodies(port)
        peak = _peak_rss(server.pid)
        health = http.client.HTTPConnection(HOST, port, timeout=10)
        health.request("GET", "/health")
        assert health.getresponse().status == 200
    finally:
        _stop(server)
    assert statuses == [401, 401, 401]
    assert {name: status for name, (status, _) in broken.items()} == dict.fromkeys(BROKEN, 401)
    assert peak <= LOGIN_MEMORY + BASELINE, peak
    _check_hostile(answers)


def test_django_example_answers_hostile_bodies_with_4xx(tmp_path: Path) -> None:
    """The Django example under gunicorn: 413 for a large body, 400 for a lone surrogate."""
    for module in ("gunicorn", "django", "argon2"):
        if importlib.util.find_spec(module) is None:
            need(f"{module} (pip install -e '.[test]')")
    (tmp_path / "hostile_settings.py").write_text(
        "from django_login.settings import *  # noqa: F403\n"
        f"DATABASES['default']['NAME'] = {str(tmp_path / 'db.sqlite3')!r}  # noqa: F405\n"
    )
    env = _environment(tmp_path, EXAMPLES)
    env["DJANGO_SETTINGS_MODULE"] = "hostile_settings"
    subprocess.run(
        [sys.executable, "-m", "django", "migrate", "--noinput", "-v", "0"],
        env=env, cwd=tmp_path, check=True, timeout=120,
    )  # fmt: skip
    port = _free_port()
    command = [
        sys.executable, "-m", "gunicorn", "django_login.wsgi", "--worker-class", "gthread",
        "--workers", "1", "--threads", "4", "--bind", f"{HOST}:{port}", "--log-level", "warning",
    ]  # fmt: skip
    server = _start(command, env, tmp_path, port)
    try:
        values = {"planted": "argon2" + PLANTED_ARGON2}
        for name, stored in BROKEN.items():
            values[name] = ("bcrypt_sha256$" if stored.startswith("$2") else "argon2") + stored
        with sqlite3.connect(tmp_path / "db.sqlite3", timeout=20) as db:
            db.executemany(
                "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name,"
                " email, is_staff, is_active, date_joined)"
                " VALUES (?, 0, ?, '', '', '', 0, 1, datetime('now'))",
                [(value, name) for name, value in values.items()],
            )
        planted = _login(port, "planted", "guess")
        broken = {name: _login(port, name, "guess")[0] for name in BROKEN}
        answers = _hostile_bodies(port)
    finally:
        _stop(server)
    assert planted[0] == 401, planted
    assert broken == dict.fromkeys(BROKEN, 401)
    _check_hostile(answers)
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.parametrize(
    ("stored", "refused"),
    [
        (PLANTED_ARGON2, True),
        ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo", False),
        ("$2b$31$" + "a" * 53, True),
        ("$2b$12$" + "a" * 53, False),
    ],
)
def test_foreign_limits_follow_the_hasher(stored: str, refused: bool) -> None:
    """Argon2 and bcrypt costs are checked against the default hasher's limits."""
    from twocats.exceptions import HashLimitError
    from twocats.password import PasswordHasher

    hasher = PasswordHasher(max_total_memory=512 * 2**20)
    if refused:
        with pytest.raises(HashLimitError, match="is refused"):
            hasher.check_foreign(stored)
    else:
        assert hasher.check_foreign(stored).memory <= hasher.max_memory
