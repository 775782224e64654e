"""PasswordHasher: round trips, mismatches, rehash checks, upgrades without the password, limits."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from twocats import kdf, phc
from twocats._units import format_size
from twocats.exceptions import (
    InvalidHashError,
    InvalidParametersError,
    MemoryLimitError,
    TwoCatsError,
    VerifyMismatchError,
)
from twocats.hashes import HASH_TYPES
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST, DEFAULT, SENSITIVE

VECTORS = Path(__file__).parents[1] / "vectors" / "twocats-2015.jsonl"

#: The message of every password mismatch.
MISMATCH = r"^The password does not match the supplied hash$"
SALT = bytes(range(16))


def tiny(
    variant: str = "2015", hash_type: str = "blake2s", mem_cost: int = 1, **extra: Any
) -> Params:
    """Return CHEAPEST-sized parameters for any variant and hash type."""
    block = 64 if hash_type in ("blake2b", "sha512") else 32
    fields: dict[str, Any] = {
        "variant": variant,
        "hash_type": hash_type,
        "mem_cost": mem_cost,
        "multiplies": 1,
        "parallelism": 1,
        "block_size": block,
        "sub_block_size": block,
    }
    fields.update(extra)
    return Params(**fields)


@pytest.mark.parametrize("variant", ["2015", "2014", "2014-03"])
@pytest.mark.parametrize("hash_type", HASH_TYPES)
def test_round_trip_every_variant_and_hash_type(variant: str, hash_type: str) -> None:
    """A hash verifies its password and rejects another, for every variant and hash type."""
    hasher = PasswordHasher.from_params(tiny(variant, hash_type))
    encoded = hasher.hash("correct horse")
    assert encoded.startswith(phc.encode_params(hasher.params) + "$")
    assert hasher.verify(encoded, "correct horse") is True
    with pytest.raises(VerifyMismatchError, match=MISMATCH):
        hasher.verify(encoded, "correct horsf")
    assert not hasher.needs_rehash(encoded)


def test_hash_is_the_kdf_output() -> None:
    """The stored output is exactly kdf.derive with the string's parameters, salt and pepper."""
    params = tiny(mem_cost=3)
    hasher = PasswordHasher.from_params(params, secret=b"pepper")
    decoded = phc.decode(hasher.hash(b"pw", salt=SALT))
    assert decoded.salt == SALT
    assert decoded.digest == kdf.derive(b"pw", SALT, params, data=b"pepper")


def test_known_answer_vector() -> None:
    """A reference vector with a 16-byte salt comes out of hash() bit for bit."""
    vector = next(
        json.loads(line) for line in VECTORS.open() if json.loads(line)["id"] == "tc-0163"
    )
    params = Params(
        hash_type=vector["hash_type"],
        mem_cost=vector["stopMemCost"],
        start_mem_cost=vector["startMemCost"],
        multiplies=vector["multiplies"],
        lanes=vector["lanes"],
        parallelism=vector["parallelism"],
        block_size=vector["blockSize"],
        sub_block_size=vector["subBlockSize"],
        overwrite_cost=vector["overwriteCost"],
    )
    hasher = PasswordHasher.from_params(params)
    encoded = hasher.hash(
        bytes.fromhex(vector["password_hex"]), salt=bytes.fromhex(vector["salt_hex"])
    )
    assert phc.decode(encoded).digest.hex() == vector["output_hex"]
    assert hasher.verify(encoded, vector["password_ascii"])


def test_str_is_utf8_and_bytes_pass_through() -> None:
    """A str password hashes as its UTF-8 bytes; other types are a TypeError."""
    hasher = PasswordHasher.from_params(CHEAPEST)
    encoded = hasher.hash("pässwörd ✓", salt=SALT)
    assert hasher.verify(encoded, "pässwörd ✓".encode())
    assert hasher.hash("pässwörd ✓".encode(), salt=SALT) == encoded
    with pytest.raises(TypeError, match=r"^password must be str or bytes, not int$"):
        hasher.hash(12345)  # type: ignore[arg-type]


def test_random_salts_differ() -> None:
    """Two hashes of one password use different salts of the configured length."""
    hasher = PasswordHasher.from_params(CHEAPEST, salt_len=24)
    first, second = (phc.decode(hasher.hash("pw")) for _ in range(2))
    assert len(first.salt) == len(second.salt) == 24
    assert first.salt != second.salt


def test_pepper_is_required_to_verify() -> None:
    """A peppered hash verifies only with the same pepper."""
    peppered = PasswordHasher.from_params(CHEAPEST, secret=b"server secret")
    encoded = peppered.hash("pw")
    assert peppered.verify(encoded, "pw")
    for other in (
        PasswordHasher.from_params(CHEAPEST),
        PasswordHasher.from_params(CHEAPEST, secret=b"server secreT"),
    ):
        with pytest.raises(VerifyMismatchError, match=MISMATCH):
            other.verify(encoded, "pw")


def test_verify_rejects_malformed_hash() -> None:
    """verify raises InvalidHashError for a non-canonical string, before any hashing."""
    hasher = PasswordHasher.from_params(CHEAPEST)
    encoded = hasher.hash("pw")
    with pytest.raises(InvalidHashError, match=r"^parameter 'm' must be a canonical decimal"):
        hasher.verify(encoded.replace("m=0", "m=00"), "pw")
    with pytest.raises(InvalidHashError, match=r"^not a twocats hash \(it must start with"):
        hasher.verify("$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$aGFzaA", "pw")


def test_mismatch_message_has_no_secret() -> None:
    """The mismatch error names no password, salt or pepper, and the repr hides the pepper."""
    hasher = PasswordHasher.from_params(CHEAPEST, secret=b"pepper-value")
    encoded = hasher.hash("pw", salt=SALT)
    with pytest.raises(VerifyMismatchError) as info:
        hasher.verify(encoded, "hunter2-password")
    assert "hunter2" not in str(info.value)
    assert "pepper-value" not in repr(hasher)
    assert "secret=<set>" in repr(hasher)


def test_needs_rehash() -> None:
    """needs_rehash is False only for this hasher's parameters and at least its salt length."""
    hasher = PasswordHasher.from_params(tiny(mem_cost=2))
    current = hasher.hash("pw")
    assert not hasher.needs_rehash(current)
    assert not hasher.needs_rehash(current.encode("ascii"))
    for other in (
        tiny(mem_cost=1),
        tiny(mem_cost=3),
        tiny(mem_cost=2, multiplies=2),
        tiny(mem_cost=2, start_mem_cost=1, lanes=4),
    ):
        assert hasher.needs_rehash(PasswordHasher.from_params(other).hash("pw"))
    short_salt = PasswordHasher.from_params(tiny(mem_cost=2), salt_len=8).hash("pw")
    assert hasher.needs_rehash(short_salt)


@pytest.mark.parametrize("variant", ["2015", "2014", "2014-03"])
def test_upgrade_equals_direct_hash(variant: str) -> None:
    """Upgrading without the password equals hashing at the new cost with the old start level."""
    old = tiny(variant, mem_cost=1)
    new = tiny(variant, mem_cost=4)
    stored = PasswordHasher.from_params(old, secret=b"pepper").hash("pw", salt=SALT)
    # The upgrading hasher does not know the pepper: upgrade never needs it.
    upgrader = PasswordHasher.from_params(new)
    assert upgrader.can_upgrade(stored)
    upgraded = upgrader.upgrade(stored)
    direct = PasswordHasher.from_params(
        dataclasses.replace(new, start_mem_cost=old.start_mem_cost), secret=b"pepper"
    ).hash("pw", salt=SALT)
    assert upgraded == direct
    peppered = PasswordHasher.from_params(new, secret=b"pepper")
    assert peppered.verify(upgraded, "pw")
    assert not peppered.needs_rehash(upgraded)
    with pytest.raises(VerifyMismatchError, match=MISMATCH):
        peppered.verify(upgraded, "wrong")


def test_upgrade_in_steps_equals_one_upgrade() -> None:
    """Two successive upgrades give the same string as one upgrade to the final cost."""
    stored = PasswordHasher.from_params(tiny(mem_cost=1)).hash("pw", salt=SALT)
    step = PasswordHasher.from_params(tiny(mem_cost=2)).upgrade(stored)
    final = PasswordHasher.from_params(tiny(mem_cost=4))
    assert final.upgrade(step) == final.upgrade(stored)


def test_upgrade_leaves_current_hashes_alone() -> None:
    """A hash at or above the hasher's memory cost comes back unchanged."""
    hasher = PasswordHasher.from_params(tiny(mem_cost=2))
    for mem_cost in (2, 3):
        stored = PasswordHasher.from_params(tiny(mem_cost=mem_cost)).hash("pw")
        assert hasher.upgrade(stored) == stored
        assert not hasher.can_upgrade(stored)


def test_upgrade_refuses_other_parameters() -> None:
    """Parameters other than the memory cost cannot change without the password."""
    stored = PasswordHasher.from_params(tiny(mem_cost=1, multiplies=2)).hash("pw")
    hasher = PasswordHasher.from_params(tiny(mem_cost=3))
    assert not hasher.can_upgrade(stored)
    with pytest.raises(InvalidParametersError, match="differs in multiplies"):
        hasher.upgrade(stored)


def test_stored_hash_over_memory_limit_is_refused() -> None:
    """A planted hash asking for more memory than max_memory fails before any allocation."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 20)
    planted = phc.encode(Params(mem_cost=11), SALT, bytes(32))
    with pytest.raises(MemoryLimitError) as info:
        hasher.verify(planted, "pw")
    assert str(info.value) == (
        "the stored hash is refused: mem_cost=11 needs 2 MiB of work memory (2097152 bytes), "
        "more than max_memory (1 MiB, 1048576 bytes)"
    )
    with pytest.raises(MemoryLimitError, match=r"^the stored hash is refused: mem_cost=11 needs"):
        hasher.check_hash(planted)
    huge = phc.encode(Params(mem_cost=30), SALT, bytes(32))
    with pytest.raises(MemoryLimitError, match="mem_cost=30 needs 1 TiB"):
        PasswordHasher().verify(huge, "pw")


def test_own_parameters_over_limit_are_refused() -> None:
    """A hasher whose own parameters exceed max_memory (or the machine) cannot be built."""
    with pytest.raises(MemoryLimitError, match="mem_cost=12"):
        PasswordHasher.from_params(Params(mem_cost=12), max_memory=1 << 20)
    with pytest.raises(MemoryLimitError, match="mem_cost=30 needs 1 TiB"):
        PasswordHasher(mem_cost=30)


def test_default_memory_limit() -> None:
    """The default limit is the largest built-in profile or twice the own memory, within budget."""
    assert PasswordHasher.from_params(CHEAPEST).max_memory == SENSITIVE.memory_bytes
    big = PasswordHasher.from_params(Params(mem_cost=21), max_total_memory=3 << 30)
    assert big.max_memory == 3 << 30
    low = PasswordHasher.from_params(CHEAPEST, max_total_memory=1 << 20)
    assert low.max_memory == 1 << 20
    assert low.limits.memory_name == "max_total_memory"


def test_constructor_arguments() -> None:
    """The default profile is used and adjusted by the cost keywords; bad values are refused."""
    assert PasswordHasher().params == DEFAULT
    tuned = PasswordHasher(mem_cost=12, multiplies=4, parallelism=1)
    assert tuned.params == dataclasses.replace(
        DEFAULT, mem_cost=12, start_mem_cost=12, multiplies=4, parallelism=1
    )
    with pytest.raises(InvalidParametersError, match="salt_len"):
        PasswordHasher(salt_len=7)
    with pytest.raises(InvalidParametersError, match="multiplies"):
        PasswordHasher(multiplies=9)
    with pytest.raises(InvalidParametersError, match="max_memory"):
        PasswordHasher(max_memory=0)
    with pytest.raises(InvalidParametersError, match="salt must be 8 to 64"):
        PasswordHasher.from_params(CHEAPEST).hash("pw", salt=b"short")
    with pytest.raises(TypeError, match=r"^secret must be bytes or None$"):
        PasswordHasher.from_params(CHEAPEST, secret="text")  # type: ignore[arg-type]


def test_errors_are_in_the_hierarchy() -> None:
    """Every error the hasher raises on purpose is a TwoCatsError; input errors are ValueErrors."""
    for error in (InvalidHashError, InvalidParametersError, MemoryLimitError):
        assert issubclass(error, TwoCatsError)
        assert issubclass(error, ValueError)
    assert issubclass(VerifyMismatchError, TwoCatsError)


def test_format_size() -> None:
    """Sizes are written with binary units."""
    assert format_size(512) == "512 bytes"
    assert format_size(3 << 19) == "1.5 MiB"
    assert format_size(1 << 40) == "1 TiB"


def test_threads_share_one_hasher() -> None:
    """8 threads hashing and verifying at once get exactly the single-threaded results."""
    hasher = PasswordHasher.from_params(tiny(mem_cost=3))
    passwords = [f"password {i}" for i in range(16)]
    salts = [bytes([i]) * 16 for i in range(16)]
    expected = [hasher.hash(pw, salt=salt) for pw, salt in zip(passwords, salts, strict=True)]
    failures: list[str] = []
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        try:
            rounds(worker)
        except Exception as exc:  # A thread's exception would otherwise vanish.
            failures.append(repr(exc))

    def rounds(worker: int) -> None:
        for round_ in range(12):
            index = (worker * 5 + round_) % 16
            if hasher.hash(passwords[index], salt=salts[index]) != expected[index]:
                failures.append(f"hash {index}")
            hasher.verify(expected[index], passwords[index])
            try:
                hasher.verify(expected[index], passwords[(index + 1) % 16])
            except VerifyMismatchError:
                continue
            failures.append(f"wrong password accepted for {index}")

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_release_frees_pooled_memory() -> None:
    """release() empties the pool of work areas; the hasher keeps working afterwards."""
    hasher = PasswordHasher.from_params(tiny(mem_cost=3))
    encoded = hasher.hash("pw")
    assert hasher._pool._free
    hasher.release()
    assert not hasher._pool._free
    assert hasher.verify(encoded, "pw")
