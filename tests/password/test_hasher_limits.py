"""Limits for stored and file-supplied parameters, relative to the hasher's own work."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import weakref
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats import kdf, phc
from twocats.exceptions import (
    HashLimitError,
    HashMemoryLimitError,
    InvalidParametersError,
    MemoryLimitError,
)
from twocats.hashes import HASH_TYPES
from twocats.kdf import core, limits
from twocats.kdf.geometry import SliceJob
from twocats.kdf.limits import StoredLimits, WorkUnits, check_stored_params
from twocats.params import Params
from twocats.password import PasswordHasher, verify_limits_for
from twocats.profiles import CHEAPEST, INTERACTIVE, MODERATE, SENSITIVE

SALT = bytes(range(16))
PASSWORD = b"correct horse battery staple"


class CountingSeam:
    """A fill_slice that fills nothing and counts what the orchestration asks of it."""

    def __init__(self) -> None:
        self.calls = self.blocks = self.sub_blocks = self.rows = self.multiplies = 0

    def __call__(
        self, mem: npt.NDArray[np.uint32], states: npt.NDArray[np.uint32], job: SliceJob
    ) -> None:
        self.calls += 1
        expanded = 1 if not job.dependent and job.done == 0 and job.per_slice else 0
        count = job.parallelism * (job.per_slice - expanded)
        repeats = 1 << job.time_cost if job.variant == 1 else 1
        self.blocks += count
        self.sub_blocks += count * repeats * (job.blocklen // job.sub_blocklen)
        rows = count * repeats * (job.blocklen // job.lanes)
        self.rows += rows
        self.multiplies += rows * job.multiplies

    def units(self) -> WorkUnits:
        """The counts as work units."""
        return WorkUnits(self.calls, self.blocks, self.sub_blocks, self.rows, self.multiplies)


@contextlib.contextmanager
def _zeros(words: int) -> Iterator[npt.NDArray[np.uint32]]:
    yield np.zeros(max(words, 1), dtype=np.uint32)


def counted(params: Params, old_mem_cost: int | None = None) -> WorkUnits:
    """Run the real orchestration over a counting seam and return its counts."""
    seam = CountingSeam()
    if old_mem_cost is None:
        core.client_output(params, PASSWORD, SALT, b"", seam, _zeros)
    else:
        stored = bytes(params.output_size)
        core.update_output(params, stored, old_mem_cost, seam, _zeros)
    return seam.units()


def _grid() -> Iterator[Params]:
    """Every variant, hash type and block shape over small memory costs (valid sets only)."""
    shapes = itertools.product(
        ("2015", "2014", "2014-03"),
        HASH_TYPES,
        (0, 5, 10),
        (32, 64, 1024, 16384),
        (32, 64, 16384),
        (1, 8),
        (1, 3),
        (0, 2),
    )
    for variant, hash_type, mem_cost, block, sub_block, lanes, parallelism, time_cost in shapes:
        with contextlib.suppress(InvalidParametersError):
            yield Params(
                variant=variant,
                hash_type=hash_type,
                mem_cost=mem_cost,
                time_cost=None if variant == "2015" else time_cost,
                multiplies=time_cost,
                lanes=lanes,
                parallelism=parallelism,
                block_size=block,
                sub_block_size=min(sub_block, block),
                strict=False,
            )


def test_work_units_equal_the_counted_seam_calls_over_a_grid() -> None:
    """For every variant, hash type and block shape the model counts what the seam is asked."""
    grid = list(_grid())
    assert len(grid) > 300
    for params in grid:
        assert limits.work_units(params) == counted(params), params


@settings(max_examples=150, deadline=None)
@given(
    variant=st.sampled_from(("2015", "2014", "2014-03")),
    hash_type=st.sampled_from(HASH_TYPES),
    mem_cost=st.integers(0, 12),
    start_drop=st.integers(0, 12),
    time_cost=st.integers(0, 3),
    multiplies=st.integers(0, 8),
    lanes=st.sampled_from((1, 2, 4, 8)),
    parallelism=st.integers(1, 4),
    block_log=st.integers(5, 14),
    sub_block_log=st.integers(2, 14),
    upgrade=st.booleans(),
)
def test_work_units_equal_the_counted_seam_calls_for_any_shape(
    variant: str,
    hash_type: str,
    mem_cost: int,
    start_drop: int,
    time_cost: int,
    multiplies: int,
    lanes: int,
    parallelism: int,
    block_log: int,
    sub_block_log: int,
    upgrade: bool,
) -> None:
    """Hypothesis over stored-hash shapes, derivations and upgrades: counts match the seam."""
    try:
        params = Params(
            variant=variant,
            hash_type=hash_type,
            mem_cost=mem_cost,
            start_mem_cost=max(0, mem_cost - start_drop),
            time_cost=None if variant == "2015" else time_cost,
            multiplies=multiplies,
            lanes=lanes,
            parallelism=parallelism,
            block_size=1 << block_log,
            sub_block_size=1 << min(sub_block_log, block_log),
            strict=False,
        )
    except InvalidParametersError:
        return
    old = mem_cost - 1 if upgrade and mem_cost > 0 else None
    assert limits.work_units(params, old_mem_cost=old) == counted(params, old)


# -- the default limits follow the costliest parameters a server may have stored ------------------

PLANTED = {
    "sha512 in 64-byte blocks": Params(
        hash_type="sha512",
        mem_cost=19,
        multiplies=0,
        parallelism=1,
        block_size=64,
        sub_block_size=32,
    ),
    "2014, time_cost 20": Params(
        variant="2014",
        mem_cost=0,
        time_cost=20,
        multiplies=0,
        parallelism=1,
        block_size=32,
        sub_block_size=32,
    ),
    "2014-03, time_cost 25": Params(
        variant="2014-03",
        mem_cost=0,
        time_cost=25,
        multiplies=0,
        parallelism=1,
        block_size=32,
        sub_block_size=32,
    ),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_hashes_of_issue_10_are_refused_by_default(name: str) -> None:
    """Planted shapes costing more than 2.5 SENSITIVE verifies are refused before any work."""
    encoded = phc.encode(PLANTED[name], SALT, bytes(PLANTED[name].output_size))
    with pytest.raises(HashLimitError, match="more than max_work") as caught:
        PasswordHasher().check_hash(encoded)
    assert "2.5 times the work of the sensitive profile" in str(caught.value)


def test_a_planted_hash_costs_at_most_the_documented_ratio_of_a_verify() -> None:
    """The largest accepted work is 23 default-profile verifies and 150 INTERACTIVE ones."""
    for params, ratio in ((MODERATE, 23), (INTERACTIVE, 150)):
        hasher = PasswordHasher.from_params(params)
        assert 0.95 * ratio < hasher.max_work / hasher.limits.work_of(params) < ratio
    sensitive = PasswordHasher.from_params(SENSITIVE)
    assert sensitive.max_work == int(limits.WORK_RATIO * limits.estimated_work(SENSITIVE))


@settings(max_examples=200, deadline=None)
@given(
    variant=st.sampled_from(("2015", "2014", "2014-03")),
    hash_type=st.sampled_from(HASH_TYPES),
    mem_cost=st.integers(0, 20),
    time_cost=st.integers(0, 30),
    multiplies=st.integers(0, 8),
    lanes=st.sampled_from((1, 2, 4, 8)),
    parallelism=st.integers(1, 8),
    block_log=st.integers(5, 14),
)
def test_every_accepted_stored_hash_is_within_the_limits(
    variant: str,
    hash_type: str,
    mem_cost: int,
    time_cost: int,
    multiplies: int,
    lanes: int,
    parallelism: int,
    block_log: int,
) -> None:
    """Whatever its shape, an accepted stored hash is within 2.5x the work of SENSITIVE."""
    try:
        params = Params(
            variant=variant,
            hash_type=hash_type,
            mem_cost=mem_cost,
            time_cost=None if variant == "2015" else time_cost,
            multiplies=multiplies,
            lanes=lanes,
            parallelism=parallelism,
            block_size=1 << block_log,
            sub_block_size=32,
        )
    except InvalidParametersError:
        return
    hasher = PasswordHasher()
    costliest = hasher.limits.work_of(SENSITIVE)
    assert hasher.max_work == int(limits.WORK_RATIO * costliest)
    try:
        hasher.limits.check(params)
    except HashLimitError:
        return
    assert hasher.limits.work_of(params) <= limits.WORK_RATIO * costliest
    assert limits.estimated_work(params) <= limits.WORK_RATIO * costliest
    assert kdf.memory_required(params) <= SENSITIVE.memory_bytes


def test_own_and_upgraded_hashes_pass_the_default_limits() -> None:
    """The hasher's own hashes, also upgraded from far below, pass its default limits."""
    hasher = PasswordHasher()
    for start in (0, 10, 17, 18):
        own = dataclasses.replace(MODERATE, start_mem_cost=start)
        assert hasher.check_hash(phc.encode(own, SALT, bytes(32))) == own


def test_an_operator_raises_the_limits_explicitly() -> None:
    """max_memory and max_work accept costlier stored hashes, and say so in their messages."""
    bigger = phc.encode(Params(mem_cost=21, multiplies=3), SALT, bytes(32))
    with pytest.raises(HashMemoryLimitError, match=r"more than max_memory \(1 GiB"):
        PasswordHasher().check_hash(bigger)
    assert PasswordHasher(max_memory=2 << 30).check_hash(bigger).mem_cost == 21
    planted = phc.encode(PLANTED["2014, time_cost 20"], SALT, bytes(32))
    generous = PasswordHasher(max_work=10**13)
    assert generous.max_work == 10**13
    assert generous.check_hash(planted).time_cost == 20
    with pytest.raises(HashLimitError, match=r"max_work \(0.001 s, set by the caller\)"):
        PasswordHasher.from_params(CHEAPEST, max_work=10**6).check_hash(planted)


def test_check_stored_params_is_the_check_of_verify() -> None:
    """The function for the command line refuses with the same errors and messages as verify."""
    planted = PLANTED["sha512 in 64-byte blocks"]
    with pytest.raises(HashLimitError) as direct:
        check_stored_params(planted, MODERATE)
    with pytest.raises(HashLimitError) as through_verify:
        PasswordHasher().verify(phc.encode(planted, SALT, bytes(64)), PASSWORD)
    assert str(direct.value) == str(through_verify.value)
    with pytest.raises(HashMemoryLimitError, match="the vector is refused: mem_cost=21"):
        check_stored_params(Params(mem_cost=21), MODERATE, subject="the vector")
    check_stored_params(Params(mem_cost=21), MODERATE, max_memory=2 << 30)


# -- upgrade runs stored parameters too ------------------------------------------------------------


def test_upgrade_of_a_planted_hash_is_refused_like_verify() -> None:
    """The upgrade of issue 10 (2014, t=30, to mem_cost 1) is refused before any work."""
    planted = dataclasses.replace(PLANTED["2014, time_cost 20"], time_cost=30)
    target = dataclasses.replace(planted, mem_cost=1)
    with pytest.raises(HashLimitError, match="the upgrade is refused: its work is estimated"):
        check_stored_params(target, MODERATE, old_mem_cost=0, subject="the upgrade")
    with pytest.raises(InvalidParametersError, match="below the work of the hasher's own"):
        PasswordHasher.from_params(target, max_work=10**9)


def test_upgrade_within_the_limits_still_works() -> None:
    """An ordinary upgrade passes the limits and equals the direct hash."""
    small = dataclasses.replace(CHEAPEST, mem_cost=2, start_mem_cost=2)
    stored = PasswordHasher.from_params(small).hash(PASSWORD, salt=SALT)
    bigger = PasswordHasher.from_params(dataclasses.replace(small, mem_cost=4))
    upgraded = bigger.upgrade(stored)
    direct = PasswordHasher.from_params(dataclasses.replace(small, mem_cost=4, start_mem_cost=2))
    assert upgraded == direct.hash(PASSWORD, salt=SALT)


# -- memory that outlives its owner ----------------------------------------------------------------


def test_a_dropped_hasher_frees_its_memory_without_the_collector() -> None:
    """With gc disabled, dropping a hasher (or an engine) frees its work area at once."""
    params = dataclasses.replace(CHEAPEST, mem_cost=10, block_size=1024)
    gc.disable()
    try:
        hasher = PasswordHasher.from_params(params)
        hasher.hash(PASSWORD)
        (engine,) = hasher._pool._free
        assert engine._buffer is not None
        buffer = weakref.ref(engine._buffer.obj)
        del engine, hasher
        assert buffer() is None
        engine = kdf.Engine()
        engine.derive(PASSWORD, SALT, params)
        assert engine._buffer is not None
        buffer = weakref.ref(engine._buffer.obj)
        del engine
        assert buffer() is None
    finally:
        gc.enable()


def test_an_engine_grown_for_an_unusual_hash_does_not_stay_grown() -> None:
    """After verifying a larger stored hash, the kept work area is the hasher's own size."""
    own = dataclasses.replace(CHEAPEST, mem_cost=6, block_size=1024)
    hasher = PasswordHasher.from_params(own, max_memory=1 << 20)
    larger = PasswordHasher.from_params(dataclasses.replace(own, mem_cost=10))
    hasher.verify(larger.hash(PASSWORD), PASSWORD)
    assert all(engine.buffer_bytes <= own.memory_bytes for engine in hasher._pool._free)
    hasher.hash(PASSWORD)
    assert [engine.buffer_bytes for engine in hasher._pool._free] == [own.memory_bytes]


def test_hashes_a_hasher_makes_verify_with_its_default_limits() -> None:
    """A hasher verifies its own hashes by default; verify_limits_for says what others need."""
    for params in (Params(mem_cost=12, multiplies=0, block_size=32, sub_block_size=32), CHEAPEST):
        hasher = PasswordHasher.from_params(params)
        assert hasher.verify(hasher.hash(PASSWORD), PASSWORD)
    big = Params(mem_cost=21)
    memory, work = verify_limits_for(big)
    assert memory == 2 << 30
    with pytest.raises(HashMemoryLimitError):
        PasswordHasher().check_hash(phc.encode(big, SALT, bytes(32)))
    verifier = PasswordHasher(max_memory=memory, max_work=work)
    assert verifier.check_hash(phc.encode(big, SALT, bytes(32))) == big


# -- construction ----------------------------------------------------------------------------------


def test_non_strict_parameters_are_refused_at_construction() -> None:
    """from_params(Params(..., strict=False)) that fail strict validation raise at once."""
    weak = Params(mem_cost=6, strict=False)
    with pytest.raises(InvalidParametersError, match="strict=False fail strict validation"):
        PasswordHasher.from_params(weak)
    fine = Params(mem_cost=12, strict=False)
    assert PasswordHasher.from_params(fine).hash(PASSWORD)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("max_memory", 0),
        ("max_memory", True),
        ("max_work", -1),
        ("max_work", 1.5),
        ("max_concurrency", 0),
        ("max_concurrency", "2"),
        ("max_total_memory", 0),
        ("max_total_memory", 2.0),
        ("timeout", 0),
        ("timeout", -1.0),
        ("timeout", float("nan")),
        ("timeout", "1"),
    ],
)
def test_bad_values_of_the_new_arguments_name_them(argument: str, value: object) -> None:
    """Each bad limit or timeout is an InvalidParametersError naming the argument."""
    with pytest.raises(InvalidParametersError, match=argument):
        PasswordHasher.from_params(CHEAPEST, **{argument: value})


def test_limits_that_contradict_each_other_are_refused() -> None:
    """A budget below the own need, or max_memory above the budget, is refused."""
    with pytest.raises(MemoryLimitError, match="more than max_total_memory"):
        PasswordHasher(max_total_memory=1 << 20)
    with pytest.raises(InvalidParametersError, match=r"max_memory .* is more than max_total"):
        PasswordHasher(max_memory=1 << 30, max_total_memory=512 << 20)
    with pytest.raises(InvalidParametersError, match="max_work"):
        PasswordHasher(max_work=1000)


def test_the_stored_limits_object_is_frozen() -> None:
    """StoredLimits is a frozen record."""
    stored = StoredLimits.relative_to(MODERATE)
    assert stored.max_memory == 2 * MODERATE.memory_bytes
    with pytest.raises(dataclasses.FrozenInstanceError):
        stored.max_work = 0  # type: ignore[misc]


def test_kdf_entry_points_take_the_same_work_limit() -> None:
    """derive, client, update and Engine refuse work above max_work with the same message."""
    planted = PLANTED["2014, time_cost 20"]
    target = dataclasses.replace(planted, mem_cost=1)
    calls = {
        "derive": lambda: kdf.derive(PASSWORD, SALT, planted, max_work=10**8),
        "client": lambda: kdf.client(PASSWORD, SALT, planted, max_work=10**8),
        "update": lambda: kdf.update(bytes(32), target, 0, max_work=10**8),
        "Engine": lambda: kdf.Engine().derive(PASSWORD, SALT, planted, max_work=10**8),
    }
    for call in calls.values():
        with pytest.raises(
            HashLimitError, match=r"the derivation is refused: .* more than max_work"
        ):
            call()
    assert kdf.derive(PASSWORD, SALT, CHEAPEST, max_work=10**8) == kdf.derive(
        PASSWORD, SALT, CHEAPEST
    )


# -- lowering the cost never locks anyone out ------------------------------------------------------


@pytest.mark.parametrize(
    "own",
    [INTERACTIVE, dataclasses.replace(MODERATE, mem_cost=17, start_mem_cost=17), CHEAPEST],
    ids=["interactive", "mem_cost 17", "cheapest"],
)
def test_hashes_of_every_built_in_profile_pass_a_lower_hasher(own: Params) -> None:
    """A hasher set below a profile still accepts that profile's hashes, upgraded ones too."""
    hasher = PasswordHasher.from_params(own)
    for profile in (INTERACTIVE, MODERATE, SENSITIVE):
        for start in (profile.mem_cost, profile.mem_cost - 6):
            stored = dataclasses.replace(profile, start_mem_cost=start)
            encoded = phc.encode(stored, SALT, bytes(32))
            assert hasher.check_hash(encoded) == stored
            # An upgrade of the own parameters is up to date; every other shape is rehashed.
            assert hasher.needs_rehash(encoded) is (profile != own)


def test_previous_parameters_are_accepted_only_when_declared() -> None:
    """Parameters costlier than every profile pass once declared as previous, and not before."""
    earlier = Params(mem_cost=20, multiplies=8, lanes=1, sub_block_size=32)
    encoded = phc.encode(earlier, SALT, bytes(32))
    with pytest.raises(HashLimitError, match=r"more than max_work .*sensitive profile\)"):
        PasswordHasher.from_params(INTERACTIVE).check_hash(encoded)
    declared = PasswordHasher.from_params(INTERACTIVE, previous=[earlier])
    assert declared.previous == (earlier,)
    assert declared.check_hash(encoded) == earlier
    assert "earlier parameters (hash_type=blake2s, mem_cost=20" in declared.limits.work_basis
    with pytest.raises(HashMemoryLimitError):
        declared.check_hash(phc.encode(dataclasses.replace(earlier, mem_cost=21), SALT, bytes(32)))


@pytest.mark.parametrize("previous", [MODERATE, "moderate", [MODERATE, "moderate"], 3])
def test_previous_must_hold_params(previous: object) -> None:
    """previous takes an iterable of Params, and refuses anything else by type."""
    with pytest.raises(TypeError, match="previous must"):
        PasswordHasher(previous=previous)  # type: ignore[arg-type]


def test_explicit_memory_limit_ignores_profiles_above_it() -> None:
    """Profiles refused for their memory do not raise the work limit either."""
    small = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 20)
    assert small.limits.work_basis == "2.5 times the work of a default-profile hash at max_memory"
