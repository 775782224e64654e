"""The example login services under a short real flood: real servers, real wrk, real SQLite.

Each test starts one example (FastAPI under uvicorn, Django under gunicorn) with twocats at a few
MiB and an admission timeout far below what the flood makes the logins wait, so that the
overload path runs; wrk then posts logins for two seconds.  The assertions are about behaviour,
never speed: every answer is 200, 401 or 503 with Retry-After, no connection is dropped,
``GET /health`` answers throughout, and the workers' memory stays bounded.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
from pathlib import Path

import pytest

from bench.service.config import twocats_params
from bench.service.servers import Server, Service, password, plant, register
from bench.service.wrk import drive, wrk_path
from tests.support.environment import need

USERS = 4
#: Far below the time a login waits behind 32 connections, so that some are answered 503.
TIMEOUT = 0.002
#: Each worker's memory bound: two hashes' work memory and 300 MB.
RSS_BOUND = 2 * twocats_params("smoke").memory_bytes + 300 * 10**6


def _login(url: str, username: str, secret: str) -> int:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        body = json.dumps({"username": username, "password": secret})
        connection.request("POST", "/login", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


@pytest.mark.parametrize("stack", ["fastapi", "django"])
def test_flooded_service_answers_503_and_stays_up(stack: str, tmp_path: Path) -> None:
    """Flooded, it answers 200, 401 or 503 with Retry-After; health answers; RSS stays bounded."""
    if wrk_path() is None:
        need("wrk (Debian: apt-get install wrk)")
    server = "uvicorn" if stack == "fastapi" else "gunicorn"
    if importlib.util.find_spec(server) is None:
        need(f"{server} (pip install -e '.[test]')")
    service = Service(stack, "twocats", "smoke", timeout=TIMEOUT)
    with Server(service, tmp_path) as server:
        register(server.url, USERS)
        plant(server, 1)
        # Before the flood, each kind of login gets its own answer.
        assert _login(server.url, "user1", password(1)) == 200
        assert _login(server.url, "user1", "wrong") == 401
        assert _login(server.url, "ghost", password(1)) == 401
        assert _login(server.url, "planted1", password(1)) == 401
        load = drive(server, 32, 2, users=USERS, planted=1)
        log = server.log()
    statuses = {answer.status for answer in load.answers}
    assert statuses <= {200, 401, 503}, log
    assert {200, 401, 503} <= statuses
    assert all(a.retry_after == "1" for a in load.answers if a.status == 503)
    assert all(a.kind != "untagged" for a in load.answers)
    assert sum(load.socket_errors.values()) == 0, load.socket_errors
    assert load.health
    assert all(answered for _, answered in load.health)
    assert len(load.rss_peak) == service.workers
    assert all(0 < peak <= RSS_BOUND for peak in load.rss_peak.values()), load.rss_peak
