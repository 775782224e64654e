"""A real login service under a real flood: ``python -m bench http [--smoke]``.

Starts the FastAPI example (``examples/fastapi_login.py``, through pwdlib) under uvicorn and the
Django example (``examples/django_login``, JSON login view, SQLite) under gunicorn's threaded
workers, each on 127.0.0.1 with one worker process per core, once with twocats and once with
argon2id at the same memory (pwdlib's ``Argon2Hasher``, Django's ``Argon2PasswordHasher``).  Both
hashers' servers of a stack run side by side and their steps alternate, so that each comparison
sees the same neighbours on the shared machine.  Each service gets registered users and a few
users whose stored hash was planted in the database with costly parameters; then ``wrk`` (with
:file:`mix.lua`) posts logins at 8, 64 and 256 connections, each step bounded in time: 70%
valid, 20% wrong passwords, 9% unknown users, 1% planted hashes.

Per step it reports logins/s (answers 200 and 401), the p50/p95/p99 latency of every answer, the
share of each status, the socket errors, the workers' peak RSS, ``GET /health`` timed every 50 ms
during the step, and the median time of each kind of login (503s left out).  The results go to
``bench/results/http.{json,md,png}``; ``--smoke`` runs two short steps at a few MiB into a
temporary folder.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import load_average, machine
from bench.service.config import HASHERS, STACKS, argon2_settings, twocats_params
from bench.service.report import GOALS, MIB, summary, write
from bench.service.servers import Server, Service, plant, register
from bench.service.wrk import Load, drive, wrk_path
from twocats import PasswordHasher
from twocats._machine import usable_cpus

__all__ = ["main", "run", "smoke", "step_row"]

CONNECTIONS = (8, 64, 256)
#: Seconds per step (the issue allows at most 20).
DURATION = 15.0
WARMUP = 3.0
USERS = 32
PLANTED = 8
#: The examples' admission timeout: a login that waited this long is answered 503.
TIMEOUT = 1.0
#: Django's threads per worker (a waiting login holds one; argon2's memory grows with them).
DJANGO_THREADS = 32


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _ms(value: float | None) -> float | None:
    return None if value is None else 1e3 * value


def step_row(service: Service, load: Load) -> dict[str, Any]:
    """Summarize one step: rates, latencies, statuses, kinds of login, health and memory."""
    answers = load.answers
    times = [a.seconds for a in answers if not math.isnan(a.seconds)]
    statuses: dict[str, int] = {}
    for answer in answers:
        statuses[str(answer.status)] = statuses.get(str(answer.status), 0) + 1
    verdicts = sum(1 for a in answers if a.status in (200, 401))
    kinds: dict[str, dict[str, Any]] = {}
    for kind in ("valid", "wrong", "unknown", "planted"):
        mine = [a for a in answers if a.kind == kind]
        answered = [a.seconds for a in mine if a.status != 503 and not math.isnan(a.seconds)]
        kinds[kind] = {
            "count": len(mine),
            "answered": len(answered),
            "median_ms": _ms(statistics.median(answered)) if answered else None,
        }
    health = [seconds for seconds, _ in load.health]

    def ratio(kind: str) -> float | None:
        mine, wrong = kinds[kind]["median_ms"], kinds["wrong"]["median_ms"]
        return None if mine is None or not wrong else mine / wrong

    return {
        "stack": service.stack,
        "hasher": service.hasher,
        "connections": load.connections,
        "duration_s": load.duration,
        "answers": len(answers),
        "logins_per_s": verdicts / load.duration,
        "answers_per_s": len(answers) / load.duration,
        "p50_ms": _ms(_percentile(times, 0.50)) if times else None,
        "p95_ms": _ms(_percentile(times, 0.95)) if times else None,
        "p99_ms": _ms(_percentile(times, 0.99)) if times else None,
        "status_share": {code: n / len(answers) for code, n in sorted(statuses.items())},
        "status_count": dict(sorted(statuses.items())),
        "busy_without_retry_after": sum(
            1 for a in answers if a.status == 503 and a.retry_after is None
        ),
        "untagged": sum(1 for a in answers if a.kind == "untagged"),
        "socket_errors": load.socket_errors,
        "kinds": kinds,
        "unknown_vs_wrong": ratio("unknown"),
        "planted_vs_wrong": ratio("planted"),
        "health": {
            "probes": len(load.health),
            "failed": sum(1 for _, answered in load.health if not answered),
            "p50_ms": _ms(_percentile(health, 0.50)) if health else None,
            "p99_ms": _ms(_percentile(health, 0.99)) if health else None,
        },
        "rss_peak_mib": [v / MIB for v in load.rss_peak.values()],
        "server_cpu_cores": load.cpu_seconds / load.duration,
        "cpu_ms_per_answer": 1e3 * load.cpu_seconds / len(answers) if answers else None,
    }


def _step(
    server: Server,
    count: int,
    duration: float,
    users: int,
    planted: int,
    seed: int,
    *,
    timing: bool = False,
) -> dict[str, Any]:
    """One load step on an idle server; the server is left idle again (restarted if need be)."""
    before = load_average() or [0.0]
    load = drive(server, count, duration, users=users, planted=planted, seed=seed, timing=timing)
    row = step_row(server.service, load)
    row["load_before"] = before[0]
    row["load_after"] = (load_average() or [0.0])[0]
    started = time.monotonic()
    row["drained"] = server.drain()
    if not row["drained"]:
        server.restart()
    row["drain_s"] = time.monotonic() - started
    return row


def _hash_seconds(size: str) -> float:
    """The median time of one twocats verify at the services' parameters, in this process."""
    hasher = PasswordHasher.from_params(twocats_params(size))
    stored = hasher.hash("bench")
    times = []
    for _ in range(7):
        started = time.perf_counter()
        hasher.verify(stored, "bench")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _software() -> dict[str, str | None]:
    """The versions of the servers, frameworks and peers the services ran on."""
    import importlib.metadata
    import importlib.util

    versions: dict[str, str | None] = {}
    for name in (
        "uvicorn",
        "uvloop",
        "httptools",
        "gunicorn",
        "fastapi",
        "django",
        "pwdlib",
        "argon2-cffi",
    ):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _budgets(size: str) -> dict[str, int]:
    """Each stack's twocats ``max_total_memory`` (Django's is the adapter's shared default)."""
    params = twocats_params(size)
    django = PasswordHasher.from_params(params, salt_len=22).max_total_memory
    return {"fastapi": 2 * params.memory_bytes, "django": django}


def _line(row: dict[str, Any]) -> str:
    share = ", ".join(f"{c}: {s:.0%}" for c, s in row["status_share"].items())
    health = row["health"]["p99_ms"]
    return (
        f"  {row['stack']:>7}/{row['hasher']:<8} {row['connections']:>3} conns: "
        f"{row['logins_per_s']:6.1f} logins/s, p99 {row['p99_ms'] or 0:7.0f} ms, [{share}], "
        f"health p99 {health or 0:.0f} ms, RSS {max(row['rss_peak_mib'], default=0):.0f} MiB"
    )


def run(
    *,
    stacks: Sequence[str] = STACKS,
    connections: Sequence[int] = CONNECTIONS,
    duration: float = DURATION,
    size: str = "full",
    users: int = USERS,
    planted: int = PLANTED,
    timeout: float = TIMEOUT,
    folder: Path,
) -> dict[str, Any]:
    """Run every step of every stack; return the report document."""
    start_load = load_average() or [0.0, 0.0, 0.0]
    rows: list[dict[str, Any]] = []
    hash_s: dict[str, float] = {}
    for stack in stacks:
        services = [
            Service(stack, hasher, size, timeout, threads=DJANGO_THREADS) for hasher in HASHERS
        ]
        servers = [Server(service, folder) for service in services]
        try:
            for server in servers:
                server.__enter__()
                register(server.url, users)
                plant(server, planted)
                drive(server, 8, WARMUP, users=users, planted=planted, seed=99)
            hash_s[stack] = _hash_seconds(size)
            # The first count again at the end: the loaded steps are compared with the mean of
            # the two, measured before and after them on the shared machine.
            for seed, count in enumerate([*connections, connections[0]], start=1):
                for server in servers:
                    rows.append(_step(server, count, duration, users, planted, seed))
                    rows[-1]["round"] = 2 if seed > len(connections) else 1
                    print(_line(rows[-1]), flush=True)
            # Wrong passwords against unknown users on one connection: no queue, and one
            # worker, so that the times compare the work of each answer.
            for server in servers:
                rows.append(_step(server, 1, duration, users, planted, 0, timing=True))
                rows[-1]["timing"] = True
                print(_line(rows[-1]), flush=True)
        finally:
            for server in servers:
                server.stop()
    budgets = _budgets(size)
    document = {
        "suite": "http",
        "title": "A login service under a flood: FastAPI and Django, twocats against argon2id",
        "machine": machine(),
        "load_average_start": start_load,
        "load_average_end": load_average() or [0.0, 0.0, 0.0],
        "config": {
            "size": size,
            "twocats": str(twocats_params(size)),
            "twocats_memory": twocats_params(size).memory_bytes,
            "argon2id": argon2_settings(size),
            "workers": usable_cpus(),
            "django_threads": DJANGO_THREADS,
            "admission_timeout_s": timeout,
            "duration_s": duration,
            "users": users,
            "planted": planted,
            "max_total_memory": budgets,
            "hash_s": hash_s,
            "software": _software(),
        },
        "rows": rows,
        "goals": GOALS,
    }
    document["summary"] = summary(document)
    return document


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench http", description=__doc__)
    parser.add_argument("--stacks", default=",".join(STACKS))
    parser.add_argument("--connections", default=",".join(map(str, CONNECTIONS)))
    parser.add_argument("--duration", type=float, default=DURATION, help="seconds per step")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="two short steps at a few MiB")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and write its results."""
    args = _parser().parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    if wrk_path() is None:
        print("wrk is not installed (Debian: apt-get install wrk)", file=sys.stderr)
        return 1
    stacks = [s for s in args.stacks.split(",") if s]
    unknown = [s for s in stacks if s not in STACKS]
    if unknown or not 0 < args.duration <= 20:
        print(f"stacks are {', '.join(STACKS)}; --duration is 0 to 20 s", file=sys.stderr)
        return 2
    connections = [int(c) for c in args.connections.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-http-") as folder:
        document = run(
            stacks=stacks, connections=connections, duration=args.duration, folder=Path(folder)
        )
    write(document, args.out)
    return 0


def smoke() -> int:
    """Two 2-second steps per service at 4 MiB, into a temporary folder; checks behaviour only."""
    if wrk_path() is None:
        print("wrk is not installed (Debian: apt-get install wrk)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-http-") as folder:
        document = run(
            connections=(4, 16),
            duration=2.0,
            size="smoke",
            users=8,
            planted=2,
            timeout=0.05,
            folder=Path(folder),
        )
        write(document, Path(folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
