"""A FastAPI login service that stores twocats hashes through pwdlib.

Run it with ``pip install -e '.[pwdlib]' fastapi uvicorn && python examples/fastapi_login.py``
(from a checkout)
(it listens on 127.0.0.1:8000), then::

    curl -X POST localhost:8000/register -H 'content-type: application/json' \\
         -d '{"username": "ada", "password": "correct horse battery staple"}'
    curl -X POST localhost:8000/login -H 'content-type: application/json' \\
         -d '{"username": "ada", "password": "correct horse battery staple"}'

New passwords are hashed with twocats; users stored with argon2 (the hasher pwdlib recommends)
still log in, and their hash is replaced by a twocats one as they do.  The user table is a
dictionary in memory, to keep the example short.
"""

from __future__ import annotations

import threading

from fastapi import FastAPI, HTTPException, status
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from pydantic import BaseModel, Field, SecretStr

from twocats.integrations.pwdlib import TwoCatsHasher


class Credentials(BaseModel):
    """A login or registration request; the password never appears in a repr or a log."""

    username: str = Field(min_length=1, max_length=150)
    password: SecretStr = Field(min_length=1, max_length=1024)


def create_app(password_hash: PasswordHash | None = None) -> FastAPI:
    """Return the app; `password_hash` defaults to twocats first, then argon2."""
    hashing = password_hash or PasswordHash((TwoCatsHasher(), Argon2Hasher()))
    # Run when the user name is unknown, so that the answer takes as long as for a known one.
    decoy = hashing.current_hasher
    absent = None if isinstance(decoy, TwoCatsHasher) else hashing.hash("no such user")
    users: dict[str, str] = {}
    lock = threading.Lock()
    app = FastAPI(title="twocats login example")
    app.state.users = users

    @app.post("/register", status_code=status.HTTP_201_CREATED)
    def register(credentials: Credentials) -> dict[str, str]:
        stored = hashing.hash(credentials.password.get_secret_value())
        with lock:
            if credentials.username in users:
                raise HTTPException(status.HTTP_409_CONFLICT, "this user name is taken")
            users[credentials.username] = stored
        return {"username": credentials.username}

    @app.post("/login")
    def login(credentials: Credentials) -> dict[str, str]:
        with lock:
            stored = users.get(credentials.username)
        password = credentials.password.get_secret_value()
        if stored is None:
            if isinstance(decoy, TwoCatsHasher):
                decoy.dummy_verify(password)
            else:
                hashing.verify(password, absent or "")
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong user name or password")
        valid, updated = hashing.verify_and_update(password, stored)
        if not valid:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong user name or password")
        if updated is not None:
            with lock:
                # Only replace the hash that was verified: a password change meanwhile wins.
                if users.get(credentials.username) == stored:
                    users[credentials.username] = updated
        return {"username": credentials.username}

    return app


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(create_app(), host="127.0.0.1", port=8000)
