"""How the bulk upgrade reads stored values: prefixes kept, other kinds named, verdicts."""

from __future__ import annotations

import dataclasses

import pytest

from twocats import phc
from twocats.bulk import reasons, rows
from twocats.bulk.checks import is_upgrade_of, recomputed_equal
from twocats.bulk.reasons import FAILURE_REASONS
from twocats.bulk.rows import judge
from twocats.bulk.values import (
    MAX_VALUE_LENGTH,
    OTHER_KINDS,
    StoredValue,
    Unreadable,
    other_kind,
    split_twocats,
)
from twocats.password import Difference, PasswordHasher, Target, Upgraders
from twocats.profiles import CHEAPEST

OLD = dataclasses.replace(CHEAPEST, mem_cost=3, start_mem_cost=3)
TARGET = PasswordHasher.from_params(dataclasses.replace(OLD, mem_cost=6))
STORED = PasswordHasher.from_params(OLD).hash("password")


@pytest.mark.parametrize("prefix", ["", "twocats", "twocats$", "my_app-2"])
def test_prefix_is_split_off_and_kept(prefix: str) -> None:
    """A bare PHC string or one behind an algorithm name splits into prefix and PHC string."""
    parts = split_twocats(prefix + STORED)
    assert parts == StoredValue(prefix, STORED)
    assert parts.with_phc("$twocats$new") == prefix + "$twocats$new"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaA", "argon2"),
        ("argon2$argon2id$v=19$m=102400,t=2,p=8$c2FsdA$aGFzaA", "argon2"),
        ("$2b$12$" + "a" * 53, "bcrypt"),
        ("bcrypt_sha256$$2b$12$" + "a" * 53, "bcrypt"),
        ("pbkdf2_sha256$870000$salt$aGFzaA==", "pbkdf2"),
        ("$pbkdf2-sha256$29000$c2FsdA$aGFzaA", "pbkdf2"),
        ("scrypt$16384$salt$8$1$aGFzaA==", "scrypt"),
        ("", "empty"),
        (None, "empty"),
        ("plain text", "malformed"),
        (12345, "malformed"),
        (Unreadable("not UTF-8"), "malformed"),
    ],
)
def test_other_kinds_are_named_by_shape(value: object, kind: str) -> None:
    """Values of other algorithms get their kind, and nothing else is taken for TwoCats."""
    assert split_twocats(value) is None
    assert other_kind(value) == kind
    assert kind in OTHER_KINDS


FULL = Target.exactly(TARGET.params)
UPGRADERS = Upgraders(FULL)


def test_verdicts_against_the_target() -> None:
    """Lower cost: upgrade; same or higher: current; other lanes: needs password, by parameter."""
    at_target = TARGET.hash("password")
    higher = PasswordHasher.from_params(dataclasses.replace(OLD, mem_cost=7)).hash("password")
    lanes = PasswordHasher.from_params(dataclasses.replace(OLD, lanes=4)).hash("password")
    assert judge(STORED, UPGRADERS).kind == rows.UPGRADE
    assert judge("twocats$" + STORED, UPGRADERS).stored == StoredValue("twocats$", STORED)
    assert judge(at_target, UPGRADERS).kind == rows.CURRENT
    assert judge(higher, UPGRADERS) == rows.Verdict(rows.CURRENT, StoredValue("", higher), 7)
    other = judge(lanes, UPGRADERS)
    assert other.kind == rows.NEEDS_PASSWORD
    assert other.differences == (Difference("lanes", 4, 8),)
    assert judge(STORED[:-2], UPGRADERS).kind == "malformed"
    argon = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaA"
    assert judge(argon, UPGRADERS).kind == "argon2"


def test_a_memory_cost_alone_keeps_each_hash_s_other_parameters() -> None:
    """With a memory cost alone, a hash of other lanes is upgraded within its own family."""
    lanes = PasswordHasher.from_params(dataclasses.replace(OLD, lanes=4)).hash("password")
    verdict = judge(lanes, Upgraders(Target.memory(6)))
    assert verdict.kind == rows.UPGRADE
    assert verdict.upgrader == dataclasses.replace(OLD, lanes=4, mem_cost=6, start_mem_cost=6)
    assert judge(STORED, Upgraders(Target.memory(3))).kind == rows.CURRENT


def test_stored_hash_over_the_work_limit_is_refused_with_its_reason() -> None:
    """A hash to upgrade whose work is over the limits is refused, never computed."""
    planted = STORED.replace("v=2015", "v=2014").replace("m=3,", "m=3,t=30,", 1)
    verdict = judge(planted, Upgraders(Target.memory(6)))
    assert verdict.kind == rows.REFUSED
    assert verdict.reason == reasons.OVER_WORK_LIMIT
    assert verdict.reason in FAILURE_REASONS


def test_hash_above_the_target_is_current_even_over_the_limits() -> None:
    """A stored hash above the target is current: it is never computed, so never refused."""
    small = TARGET.params.memory_bytes
    big = PasswordHasher.from_params(dataclasses.replace(OLD, mem_cost=8)).hash("password")
    assert judge(big, Upgraders(FULL, max_memory=small)).kind == rows.CURRENT
    assert judge(big, Upgraders(Target.memory(6), max_memory=small)).kind == rows.CURRENT


def test_the_longest_twocats_value_fits_the_bound() -> None:
    """A value of the longest prefix and a PHC string of the decoder's limit is read whole."""
    longest = "a" * 64 + "$" + "$twocats$" + "x" * (1024 - len("$twocats$"))
    assert len(longest) == MAX_VALUE_LENGTH
    assert split_twocats(longest) is not None


def test_a_result_must_be_the_upgrade_of_its_row() -> None:
    """Only the canonical string of the same salt and parameters at the new cost passes."""
    new = TARGET.upgrade(STORED)
    other_salt = PasswordHasher.from_params(OLD).hash("password")
    other_params = PasswordHasher.from_params(dataclasses.replace(OLD, lanes=4)).hash("x")
    stored = phc.decode(STORED)
    assert is_upgrade_of(new, stored, 6)
    assert not is_upgrade_of(new, stored, 7)
    assert not is_upgrade_of(TARGET.upgrade(other_salt), stored, 6)
    assert not is_upgrade_of(TARGET.hash("password"), stored, 6)
    assert not is_upgrade_of(STORED, stored, 6)
    assert not is_upgrade_of(other_params, stored, 6)
    assert not is_upgrade_of(new + "A", stored, 6)
    assert not is_upgrade_of(new.encode(), stored, 6)
    assert not is_upgrade_of(None, stored, 6)


def test_a_recomputed_result_must_match() -> None:
    """The main process's own upgrade of a sampled row must equal the worker's result."""
    good = [(TARGET, STORED, TARGET.upgrade(STORED))]
    forged = TARGET.upgrade(STORED)
    flipped = forged[:-2] + ("A" if forged[-2] != "A" else "B") + forged[-1]
    assert recomputed_equal(good)
    assert not recomputed_equal([(TARGET, STORED, flipped)])
    assert recomputed_equal([])


def test_one_result_of_every_worker_is_recomputed() -> None:
    """A worker's forged result never hides among another worker's honest ones: each worker has
    one of its results recomputed, whatever the sample."""
    honest = TARGET.upgrade(STORED)
    forged = honest[:-2] + ("A" if honest[-2] != "A" else "B") + honest[-1]
    upgrades = [(TARGET, STORED, honest)] * 6 + [(TARGET, STORED, forged)]
    workers = ["honest"] * 6 + ["forger"]
    for _ in range(20):
        assert not recomputed_equal(upgrades, workers)
