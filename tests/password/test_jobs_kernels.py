"""A planted hash of a kernel shape nothing has compiled yet never holds the hasher's slots.

Each test runs a fresh Python process on an empty kernel cache of its own, so that the planted
shape really compiles: the old behaviour (a compile of seconds inside the only admission slot)
answers the legitimate logins meanwhile with HasherBusyError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from twocats.exceptions import HashLimitError
from twocats.kdf.fill.args import FillKey
from twocats.params import Params
from twocats.password._jobs import Kernels
from twocats.simd import aot, family

# The legitimate users' shape (blake2s, one lane: the cheapest to compile) and a planted one
# (sha512, 16 lanes), both a few KiB.
_SCRIPT = r"""
import json, secrets, threading, time
from twocats import phc
from twocats.exceptions import HasherBusyError, VerifyMismatchError
from twocats.password import PasswordHasher
from twocats.params import Params

own = Params(mem_cost=6, multiplies=1, lanes=1, parallelism=1, block_size=1024, sub_block_size=64)
planted_params = Params(
    mem_cost=4, multiplies=1, hash_type="sha512", lanes=16, parallelism=1, block_size=1024,
    sub_block_size=64,
)
hasher = PasswordHasher.from_params(own, max_concurrency=1, timeout=2.0)
stored = hasher.hash("right")   # the own shape compiles here, before the planted login
planted = phc.encode(
    planted_params, secrets.token_bytes(16), secrets.token_bytes(planted_params.output_size)
)
outcome = {}

def planted_login():
    try:
        hasher.verify(planted, "guess")
    except VerifyMismatchError:
        outcome["planted"] = "mismatch"
    except Exception as error:
        outcome["planted"] = type(error).__name__

thread = threading.Thread(target=planted_login)
thread.start()
logins = {"ok": 0, "busy": 0}
while thread.is_alive() or logins["ok"] == 0:
    try:
        hasher.verify(stored, "right")
        logins["ok"] += 1
    except HasherBusyError:
        logins["busy"] += 1
    time.sleep(0.1)  # a login every tenth of a second, not a busy loop
thread.join()
print(json.dumps({**logins, **outcome, "alive_checks": logins["ok"] + logins["busy"]}))
"""


def test_legitimate_logins_go_on_while_a_planted_shape_compiles(tmp_path: Path) -> None:
    """Logins of the own shape are never refused busy while a new shape compiles elsewhere."""
    env = {**os.environ, "TWOCATS_CACHE_DIR": str(tmp_path / "cache"), "TWOCATS_AOT": "0"}
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["planted"] == "mismatch", result
    assert result["busy"] == 0, result
    # Many logins ran while the planted one was prepared: it did not hold the only slot.
    assert result["ok"] > 1, result
    # The planted shape was compiled into the cache by another process.
    assert any("sha512" in path.name for path in (tmp_path / "cache").rglob("*")), result


def test_a_shape_that_does_not_compile_is_refused_like_a_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shape whose compiling process fails is refused as a HashLimitError, then at once."""
    calls: list[object] = []

    def failing(family_: object, key: object) -> None:
        calls.append(key)

    monkeypatch.setattr(family, "_compiled_by_child", failing)
    monkeypatch.setattr(aot, "load", lambda family_, key: None)
    monkeypatch.setattr(family, "_ready", {})
    monkeypatch.setattr(family, "_failed", set())
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    planted = Params(mem_cost=4, hash_type="sha256", lanes=2, parallelism=1, block_size=1024)
    kernels = Kernels("simd", ())
    for _ in range(2):
        with pytest.raises(HashLimitError, match="sha256 x2"):
            kernels.prepare(planted, 1.0)
    assert calls == [FillKey(2, "simd", 2, 0)]


def test_ready_is_a_lookup_that_an_event_loop_may_make(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ready`` loads nothing (the async calls ask it on the event loop); ``loads_now`` and
    ``prepare`` load the checked artefact, after which ``ready`` says so."""
    loaded: list[object] = []

    def load(family_: object, key: object) -> object:
        loaded.append(key)
        return lambda *args: None

    monkeypatch.setattr(aot, "load", load)
    monkeypatch.setattr(family, "_ready", {})
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    params = Params(mem_cost=4, hash_type="sha256", lanes=2, parallelism=1, block_size=1024)
    kernels = Kernels("simd", ())
    assert not kernels.ready(params)
    assert loaded == []
    assert kernels.loads_now(params)
    assert loaded == [FillKey(2, "simd", 2, 0)]
    assert kernels.ready(params)
