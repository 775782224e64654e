"""What the HTTP benchmark's services are configured with, shared by the bench and the servers.

The servers read their configuration from the environment the bench starts them with
(:data:`ENV_HASHER`, :data:`ENV_SIZE`, :data:`ENV_DATABASE`, :data:`ENV_TIMEOUT`), so that one
import path serves every variant.  ``full`` is the benchmark: twocats' ``INTERACTIVE`` profile
(64 MiB, parallelism 2) against argon2id at the same 64 MiB (``t=1, p=2``, as in the load
suite); ``smoke`` is a few MiB, for the short run and the tests.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import secrets
from typing import Any

from twocats import phc
from twocats.params import Params
from twocats.profiles import INTERACTIVE

__all__ = [
    "ENV_DATABASE",
    "ENV_HASHER",
    "ENV_SIZE",
    "ENV_TIMEOUT",
    "HASHERS",
    "STACKS",
    "ServerConfig",
    "argon2_settings",
    "planted_argon2",
    "planted_twocats",
    "server_config",
    "setting",
    "twocats_params",
]

#: The example services, each under its own server.
STACKS = ("fastapi", "django")

ENV_HASHER = "BENCH_HTTP_HASHER"
ENV_SIZE = "BENCH_HTTP_SIZE"
ENV_DATABASE = "BENCH_HTTP_DATABASE"
ENV_TIMEOUT = "BENCH_HTTP_TIMEOUT"

#: The hashers a service can run with.
HASHERS = ("twocats", "argon2id")

#: The twocats memory cost of the smoke size: 4 MiB.
_SMOKE_MEM_COST = 12

#: How much costlier than the service's own a planted twocats hash asks to be (memory levels).
PLANTED_TWOCATS_LEVELS = 8
#: A planted argon2 hash asks for this many times the memory and time passes.  Argon2 has no
#: limits, so it is computed in full; the factors stay small enough for a shared machine.
PLANTED_ARGON2_MEMORY = 2
PLANTED_ARGON2_PASSES = 8


def setting(name: str) -> str:
    """Return a setting from the environment the bench started the server with."""
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: the HTTP bench starts its servers with it")
    return value


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """What a server is configured with: its hasher, size, database and login timeout."""

    hasher: str
    size: str
    database: str
    timeout: float


def server_config() -> ServerConfig:
    """Return the configuration of the environment the bench started the server with."""
    return ServerConfig(
        hasher=setting(ENV_HASHER),
        size=setting(ENV_SIZE),
        database=setting(ENV_DATABASE),
        timeout=float(setting(ENV_TIMEOUT)),
    )


def twocats_params(size: str) -> Params:
    """The twocats parameters of a service of `size` (``full`` or ``smoke``)."""
    if size == "full":
        return INTERACTIVE
    return dataclasses.replace(INTERACTIVE, mem_cost=_SMOKE_MEM_COST, start_mem_cost=None)


def argon2_settings(size: str) -> dict[str, int]:
    """argon2id's settings at the memory of :func:`twocats_params` (argon2-cffi's names)."""
    memory_kib = twocats_params(size).memory_bytes // 1024
    return {"time_cost": 1, "memory_cost": memory_kib, "parallelism": 2}


def planted_twocats(size: str) -> str:
    """A stored twocats hash asking for 256 times the service's memory (refused by its limits)."""
    base = twocats_params(size)
    mem_cost = base.mem_cost + PLANTED_TWOCATS_LEVELS
    params = dataclasses.replace(base, mem_cost=mem_cost, start_mem_cost=None)
    return phc.encode(params, secrets.token_bytes(16), secrets.token_bytes(params.output_size))


def planted_argon2(size: str) -> str:
    """A stored argon2id hash asking for more memory and many more passes than the service's."""
    base: dict[str, Any] = argon2_settings(size)
    memory = base["memory_cost"] * PLANTED_ARGON2_MEMORY
    passes = base["time_cost"] * PLANTED_ARGON2_PASSES

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode().rstrip("=")

    return (
        f"$argon2id$v=19$m={memory},t={passes},p={base['parallelism']}"
        f"${b64(secrets.token_bytes(16))}${b64(secrets.token_bytes(32))}"
    )
