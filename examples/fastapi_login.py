"""A FastAPI login service that stores twocats hashes through pwdlib, in SQLite.

Run it from a checkout with ``pip install -e '.[pwdlib]' fastapi 'uvicorn[standard]'`` and, from
this folder, ``uvicorn --factory fastapi_login:create_app --host 127.0.0.1 --workers 2`` (one
worker process per core; the users live in ``users.sqlite3``), then::

    curl -X POST localhost:8000/register -H 'content-type: application/json' \\
         -d '{"username": "ada", "password": "correct horse battery staple"}'
    curl -X POST localhost:8000/login -H 'content-type: application/json' \\
         -d '{"username": "ada", "password": "correct horse battery staple"}'

New passwords are hashed with twocats; users stored with argon2 (the hasher pwdlib recommends)
still log in, and their hash is replaced by a twocats one as they do.

Under a flood of logins the service stays up: twocats hashes are verified with ``averify``, which
waits for the hasher without blocking the event loop (``GET /health`` keeps answering), and a login
that waited ``LOGIN_TIMEOUT`` seconds in vain is answered ``503`` with ``Retry-After``.  The
hasher's ``max_total_memory`` bounds the memory of all hashes together, argon2 ones included:
they are verified in the twocats hasher's admission slots and within its limits
(:class:`~twocats.integrations.pwdlib.AdmittedHasher`).  A login naming an unknown user, or a user
whose stored hash is corrupt or asks for more than the hasher's limits (twocats or argon2), costs
one ordinary verification (``averify_unknown``) and gets the same ``401`` as a wrong password, so
the answer's time tells neither which users exist nor whose hash was tampered with.

A request body above ``MAX_BODY`` bytes is answered ``413`` before it is read; a body that is not
valid is answered ``422`` with the place and kind of each error and never the value sent (a
password, or text that is not valid Unicode, such as a lone surrogate ``"\\ud800"``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pwdlib import PasswordHash
from pwdlib.exceptions import UnknownHashError
from pwdlib.hashers.argon2 import Argon2Hasher
from pydantic import BaseModel, Field, SecretStr, field_validator
from starlette.concurrency import run_in_threadpool

from twocats import HasherBusyError, InvalidHashError, PasswordHasher, VerifyMismatchError
from twocats.integrations.pwdlib import AdmittedHasher, TwoCatsHasher

#: How long a login waits for the hasher, in seconds, before it is answered 503.
LOGIN_TIMEOUT = 1.0
#: The Retry-After of a 503, in seconds.
RETRY_AFTER = 1
#: The work memory of all hashes of one worker process together, in bytes.
LOGIN_MEMORY = 512 * 2**20
#: The largest request body read, in bytes; a larger one is answered 413.
MAX_BODY = 16 * 2**10

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Credentials(BaseModel):
    """A login or registration request; the password never appears in a repr or a log."""

    username: str = Field(min_length=1, max_length=150)
    password: SecretStr = Field(min_length=1, max_length=1024)

    @field_validator("username", "password", mode="before")
    @classmethod
    def _unicode(cls, value: object) -> object:
        """Refuse text that is not valid Unicode (a lone surrogate cannot be stored or hashed)."""
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("must be valid Unicode text") from None
        return value


class BodyLimit:
    """ASGI middleware: answer 413 to a request whose body is larger than `limit` bytes.

    A declared ``Content-Length`` above the limit is answered before anything is read; a body
    sent in chunks is counted as it arrives, and refused once it grows past the limit.
    """

    def __init__(self, inner: ASGIApp, limit: int = MAX_BODY) -> None:
        self.inner = inner
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        declared = dict(scope.get("headers", ())).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await JSONResponse(_TOO_LARGE, 413)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    # FastAPI answers an HTTPException raised while it reads the body.
                    raise HTTPException(413, _TOO_LARGE["detail"])
            return message

        await self.inner(scope, counted, send)


_TOO_LARGE = {"detail": "the request body is too large"}


async def _invalid(request: Request, error: Exception) -> JSONResponse:
    """Answer 422 with where and what each error is, never the value sent (a password)."""
    assert isinstance(error, RequestValidationError)
    detail = [
        {"loc": list(item.get("loc", ())), "msg": item.get("msg", ""), "type": item.get("type", "")}
        for item in error.errors()
    ]
    return JSONResponse({"detail": detail}, status_code=422)


class UserStore:
    """User names and their stored hashes in a SQLite table, shared by the worker processes."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        # Several worker processes write to the file: wait for its lock rather than fail.
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS users (username TEXT PRIMARY KEY, password TEXT NOT NULL)"
        )

    def get(self, username: str) -> str | None:
        """Return the stored hash of `username`, or None for an unknown user."""
        with self._lock:
            row = self._db.execute(
                "SELECT password FROM users WHERE username = ?", (username,)
            ).fetchone()
        return None if row is None else str(row[0])

    def add(self, username: str, stored: str) -> bool:
        """Add a user; return False if the name is taken."""
        with self._lock:
            try:
                self._db.execute("INSERT INTO users VALUES (?, ?)", (username, stored))
            except sqlite3.IntegrityError:
                return False
        return True

    def replace(self, username: str, old: str, new: str) -> None:
        """Replace the hash `old` of `username` by `new`; a password changed meanwhile wins."""
        with self._lock:
            self._db.execute(
                "UPDATE users SET password = ? WHERE username = ? AND password = ?",
                (new, username, old),
            )


def default_password_hash() -> PasswordHash:
    """twocats first (default profile, bounded wait and memory), then argon2 for older users."""
    hasher = PasswordHasher(timeout=LOGIN_TIMEOUT, max_total_memory=LOGIN_MEMORY)
    return PasswordHash((TwoCatsHasher(hasher), AdmittedHasher(Argon2Hasher(), hasher)))


def _busy() -> HTTPException:
    return HTTPException(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "too many logins at once, try again shortly",
        headers={"Retry-After": str(RETRY_AFTER)},
    )


def create_app(
    password_hash: PasswordHash | None = None, database: str | Path = "users.sqlite3"
) -> FastAPI:
    """Return the app; `password_hash` defaults to :func:`default_password_hash`."""
    hashing = password_hash or default_password_hash()
    current = hashing.current_hasher
    # The twocats hasher itself, for its asyncio calls, its timeout and its decoy verification.
    core = current.hasher if isinstance(current, TwoCatsHasher) else None
    # The decoy of an unknown user is shaped like this stored hash, so that it does the same
    # work.  After an offline upgrade (`twocats upgrade-db`), use an upgraded stored hash here.
    decoy = hashing.hash("no such user")
    users = UserStore(database)
    app = FastAPI(title="twocats login example")
    app.state.users = users
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_middleware(BodyLimit, limit=MAX_BODY)

    async def hash_password(password: str) -> str:
        if core is not None:
            return await core.ahash(password)
        return await run_in_threadpool(hashing.hash, password)

    async def spend_decoy(password: str) -> None:
        """Spend one verification's time and memory on a login that cannot succeed."""
        if core is None:
            await run_in_threadpool(hashing.verify, password, decoy)
            return
        with contextlib.suppress(VerifyMismatchError):
            await core.averify_unknown(password, like=decoy)

    async def verify(password: str, stored: str | None) -> tuple[bool, str | None]:
        """Return whether `password` matches `stored`, and a new hash if it should be replaced."""
        if stored is None:
            await spend_decoy(password)
            return False, None
        if core is not None and TwoCatsHasher.identify(stored):
            try:
                await core.averify(stored, password)
            except VerifyMismatchError:
                return False, None
            except InvalidHashError:
                # Corrupt, or refused by the limits before any work: cost what a verify costs.
                await spend_decoy(password)
                return False, None
            if not core.needs_rehash(stored):
                return True, None
            try:
                return True, await core.ahash(password)
            except HasherBusyError:
                # The login succeeded; the hash is replaced at a later one.
                return True, None
        if core is not None:
            try:
                core.check_foreign(stored)
            except InvalidHashError:
                # Not argon2, or above the limits: refused before any work, as a twocats hash.
                await spend_decoy(password)
                return False, None
        try:
            # Another hasher's hash (argon2 from before the switch to twocats): pwdlib verifies
            # it in one of the twocats hasher's slots, and hashes the password anew with
            # twocats, in a worker thread.
            return await run_in_threadpool(hashing.verify_and_update, password, stored)
        except UnknownHashError:
            await spend_decoy(password)
            return False, None

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/register", status_code=status.HTTP_201_CREATED)
    async def register(credentials: Credentials) -> dict[str, str]:
        try:
            stored = await hash_password(credentials.password.get_secret_value())
        except HasherBusyError:
            raise _busy() from None
        if not users.add(credentials.username, stored):
            raise HTTPException(status.HTTP_409_CONFLICT, "this user name is taken")
        return {"username": credentials.username}

    @app.post("/login")
    async def login(credentials: Credentials) -> dict[str, str]:
        stored = users.get(credentials.username)
        try:
            valid, updated = await verify(credentials.password.get_secret_value(), stored)
        except HasherBusyError:
            raise _busy() from None
        if not valid:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong user name or password")
        if updated is not None and stored is not None:
            users.replace(credentials.username, stored, updated)
        return {"username": credentials.username}

    return app


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(create_app(), host="127.0.0.1", port=8000)
