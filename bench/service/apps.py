"""The FastAPI example as the HTTP benchmark serves it: ``bench.service.apps:app`` (a factory).

The app is ``examples/fastapi_login.py`` unchanged, built with the hasher the environment names
(see :mod:`bench.service.config`), and wrapped in :class:`Echo`, which copies the request's
``X-Bench`` header into the answer so that the load generator can tell which kind of login each
answer belongs to and when it was sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi_login import create_app
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from bench.service.config import argon2_settings, server_config, twocats_params
from twocats import PasswordHasher
from twocats.integrations.pwdlib import TwoCatsHasher

__all__ = ["Echo", "app", "password_hash"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_TAG = b"x-bench"


class Echo:
    """ASGI middleware: answer with the request's ``X-Bench`` header."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tag = next((v for k, v in scope.get("headers", ()) if k.lower() == _TAG), None)
        if scope["type"] != "http" or tag is None:
            await self.inner(scope, receive, send)
            return

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (_TAG, tag)]
            await send(message)

        await self.inner(scope, receive, tagged)


def password_hash(hasher: str, size: str, timeout: float) -> PasswordHash:
    """The service's pwdlib ``PasswordHash``: twocats with its limits, or argon2id alone."""
    if hasher == "argon2id":
        return PasswordHash((Argon2Hasher(**argon2_settings(size)),))
    params = twocats_params(size)
    core = PasswordHasher.from_params(
        params, timeout=timeout, max_total_memory=2 * params.memory_bytes
    )
    return PasswordHash((TwoCatsHasher(core), Argon2Hasher()))


def app() -> Echo:
    """The example app with the configuration of the environment (uvicorn's ``--factory``)."""
    config = server_config()
    hashing = password_hash(config.hasher, config.size, config.timeout)
    return Echo(create_app(hashing, database=config.database))
