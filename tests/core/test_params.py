"""Parameter validation: the reject file, the bounds table, variant rules and default resolution."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from twocats import kdf
from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASH_TYPES
from twocats.kdf.engine import Engine
from twocats.kdf.vectors import Vector, parse_vector
from twocats.params import BOUNDS, Params, check_update

#: The parameter each case of twocats-rejects.jsonl must be refused for.
REJECTED_PARAMETER = {
    "lanes = 0": "lanes",
    "lanes = 9 > W = 8 (blake2s)": "lanes",
    "lanes = 17 > W = 16 (blake2b)": "lanes",
    "startMemCost > stopMemCost": "start_mem_cost",
    "stopMemCost = 31": "mem_cost",
    "multiplies = 9": "multiplies",
    "parallelism = 0": "parallelism",
    "blockSize = 2^21": "block_size",
    "subBlockSize < 4*lanes (16 < 32)": "sub_block_size",
    "subBlockSize > blockSize": "sub_block_size",
    "blockSize not a power of two (3000)": "block_size",
    "subBlockSize not a power of two (96)": "sub_block_size",
    "blockSize = 0": "block_size",
    "PHS with outlen 64": "outlen",
    "UpdatePassword oldMemCost > newMemCost": "old_mem_cost",
    "ACCEPTED: lanes = 3 (not a power of two; blocks only partly written)": "lanes",
    "ACCEPTED: blockSize 32 with blake2b (first block never initialised; output depends on heap "
    "garbage)": "block_size",
    'ACCEPTED: blockSize 4, subBlockSize 4, lanes 1 (below the "32" claimed in the messages)': (
        "block_size"
    ),
    "ACCEPTED: parallelism 255 at memCost 10 (no memory hashing at all, silently)": "parallelism",
    "Full API / PHS with parallelism (t_cost) = 0": "parallelism",
}

#: A message names the parameter, then its allowed range, then the value given.
MESSAGE = re.compile(r"^(?P<name>\w+) must be (?P<allowed>.+); got (?P<value>.+)$")


#: The password and salt of reject records that name none (as the reference's defaults do).
DEFAULT_INPUTS = {"password_hex": "70617373776f7264", "salt_hex": "73616c74"}

#: The one record twocats accepts: an update by one level, stored at 9 and raised to 10 (the
#: reference's oldMemCost is the stored cost plus one, so its (10, 10) is twocats' (9, 10)).
ACCEPTED_CASES = {"ACCEPTED: UpdatePassword with oldMemCost == newMemCost"}


def _vector(record: dict[str, Any]) -> Vector:
    """Read a reject record through the vector reader, which knows the reference's conventions.

    Among them: the reference's oldMemCost is the stored output's mem_cost plus one.
    """
    return parse_vector({**DEFAULT_INPUTS, **record, "output_hex": ""}, where=record["case"])


def _attempt(record: dict[str, Any], backend: str = "reference") -> bytes:
    """Make the call a reject record describes, through the public API with strict parameters."""
    vector = _vector(record)
    settings = dict(vector.settings)
    if vector.api == "phs":
        return kdf.phs(
            vector.password,
            vector.salt,
            settings["t_cost"],
            settings["m_cost"],
            outlen=settings["outlen"],
            backend=backend,
        )
    if vector.api == "full":
        return kdf.full(
            vector.password, vector.salt, hash_type=vector.hash_type, backend=backend, **settings
        )
    params = Params(hash_type=vector.hash_type, **settings)
    if vector.api == "update":
        assert vector.old_mem_cost is not None
        return kdf.update(vector.stored, params, vector.old_mem_cost, backend=backend)
    assert vector.api == "extended", vector.api
    return kdf.derive(vector.password, vector.salt, params, data=vector.data, backend=backend)


@pytest.fixture
def no_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any work-memory allocation fail the test."""

    def refuse(words: int, params: Params) -> None:
        pytest.fail(f"{words} words of work memory allocated for a rejected request")

    monkeypatch.setattr(Engine, "_allocate", staticmethod(refuse))


def test_every_reject_case_is_known(reject_records: list[dict[str, Any]]) -> None:
    """The table of refused parameters and the accepted cases list exactly the file's 21 cases."""
    assert {r["case"] for r in reject_records} == set(REJECTED_PARAMETER) | ACCEPTED_CASES
    assert not set(REJECTED_PARAMETER) & ACCEPTED_CASES
    assert len(reject_records) == 21


@pytest.mark.usefixtures("no_allocation")
def test_reject_cases_raise_naming_the_parameter(reject_records: list[dict[str, Any]]) -> None:
    """Every refused case raises InvalidParametersError naming its parameter, before any memory."""
    refused = [r for r in reject_records if r["case"] not in ACCEPTED_CASES]
    assert len(refused) == 20
    for record in refused:
        with pytest.raises(InvalidParametersError) as caught:
            _attempt(record)
        message = str(caught.value)
        match = MESSAGE.match(message)
        assert match is not None, message
        assert match["name"] == REJECTED_PARAMETER[record["case"]], message
        assert re.search(r"\d", match["allowed"]), message


def test_accepted_update_case_is_a_one_level_update(
    reject_records: list[dict[str, Any]], twocats_vectors: dict[str, Vector]
) -> None:
    """The reference's UpdatePassword(10, 10) is accepted: stored at 9, raised to 10, as tc-0290."""
    (record,) = (r for r in reject_records if r["case"] in ACCEPTED_CASES)
    published = twocats_vectors["tc-0290"]
    assert (record["oldMemCost"], record["newMemCost"]) == (10, 10)
    vector = _vector(record)
    assert (vector.old_mem_cost, vector.settings["mem_cost"]) == (9, 10)
    assert (published.old_mem_cost, published.settings["mem_cost"]) == (9, 10)
    outputs = [_attempt(record, backend) for backend in ("reference", "scalar", "simd")]
    assert len(outputs[0]) == 32
    assert outputs == [outputs[0]] * 3


def test_invalid_parameters_error_is_a_value_error() -> None:
    """Callers that only know the standard library can catch ValueError."""
    with pytest.raises(ValueError, match=r"^multiplies must be"):
        Params(multiplies=9)


def test_every_published_vector_is_representable(twocats_vectors: dict[str, Vector]) -> None:
    """Every vector of the three files builds valid parameters (with strict=False)."""
    updates = 0
    for vector in twocats_vectors.values():
        params = vector.params()
        if vector.api == "extended+update":
            params = vector.update_params()
        if vector.old_mem_cost is not None:
            check_update(params, vector.old_mem_cost)
            assert 0 <= vector.old_mem_cost < params.mem_cost, vector.id
            updates += 1
    assert len(twocats_vectors) == 217 + 29 + 68
    assert updates == sum(v.api in ("update", "extended+update") for v in twocats_vectors.values())
    assert updates > 0


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("mem_cost", -1, "mem_cost must be an integer from 0 to 30; got -1"),
        ("mem_cost", 31, "mem_cost must be an integer from 0 to 30; got 31"),
        ("start_mem_cost", -1, "start_mem_cost must be an integer from 0 to 30; got -1"),
        ("multiplies", -1, "multiplies must be an integer from 0 to 8; got -1"),
        ("multiplies", 9, "multiplies must be an integer from 0 to 8; got 9"),
        ("lanes", 0, "lanes must be an integer from 1 to 16; got 0"),
        ("lanes", 16, "lanes must be a power of two from 1 to 8 for blake2s; got 16"),
        ("lanes", 6, "lanes must be a power of two from 1 to 8 for blake2s; got 6"),
        ("parallelism", 0, "parallelism must be an integer from 1 to 255; got 0"),
        ("parallelism", 256, "parallelism must be an integer from 1 to 255; got 256"),
        ("block_size", 16, "block_size must be an integer from 32 to 1048576; got 16"),
        ("block_size", 1 << 21, "block_size must be an integer from 32 to 1048576; got 2097152"),
        ("sub_block_size", 2, "sub_block_size must be an integer from 4 to 1048576; got 2"),
        ("overwrite_cost", 256, "overwrite_cost must be an integer from 0 to 255; got 256"),
        ("mem_cost", "10", "mem_cost must be an integer from 0 to 30; got '10'"),
        ("lanes", True, "lanes must be an integer from 1 to 16; got True"),
        ("variant", "2016", "variant must be one of '2015', '2014', '2014-03'; got '2016'"),
        (
            "hash_type",
            "md5",
            "hash_type must be one of blake2s, blake2b, sha256, sha512; got 'md5'",
        ),
        ("side_channel_resistant", 1, "side_channel_resistant must be True or False; got 1"),
    ],
)
def test_bounds_messages(name: str, value: object, message: str) -> None:
    """A value outside the bounds table is refused with the parameter and its range."""
    with pytest.raises(InvalidParametersError) as caught:
        Params(**{name: value})
    assert str(caught.value) == message


#: The documented static bounds of every integer parameter (the reference's limits).
EDGES = {
    "mem_cost": (0, 30),
    "start_mem_cost": (0, 30),
    "time_cost": (0, 30),
    "multiplies": (0, 8),
    "lanes": (1, 16),
    "parallelism": (1, 255),
    "block_size": (32, 1 << 20),
    "sub_block_size": (4, 1 << 20),
    "overwrite_cost": (0, 255),
    "hash_size": (1, 1 << 20),
}


def test_bounds_table_is_the_documented_one() -> None:
    """The bounds table holds exactly the documented limits."""
    assert BOUNDS == EDGES


@pytest.mark.parametrize("name", sorted(EDGES))
def test_bounds_table_edges_are_accepted(name: str) -> None:
    """Both ends of every static bound are accepted in some otherwise valid parameter set."""
    low, high = EDGES[name]
    variant = {"time_cost": "2014", "hash_size": "2014-03"}.get(name, "2015")
    base: dict[str, Any] = {"variant": variant, "mem_cost": 30, "strict": False}
    settings = {
        "mem_cost": [{"mem_cost": low}, {"mem_cost": high}],
        "start_mem_cost": [{"start_mem_cost": low}, {"start_mem_cost": high}],
        "time_cost": [{"time_cost": low}, {"time_cost": high}],
        "multiplies": [{"multiplies": low}, {"multiplies": high}],
        "lanes": [
            {"lanes": low},
            {"lanes": high, "hash_type": "blake2b", "sub_block_size": 64},
        ],
        "parallelism": [{"parallelism": low}, {"parallelism": high}],
        "block_size": [
            {"block_size": low, "sub_block_size": 32},
            {"block_size": high},
        ],
        "sub_block_size": [
            {"sub_block_size": low, "lanes": 1},
            {"sub_block_size": high, "block_size": high},
        ],
        "overwrite_cost": [{"overwrite_cost": low}, {"overwrite_cost": high}],
        "hash_size": [{"hash_size": low}, {"hash_size": high, "block_size": high}],
    }[name]
    for extra in settings:
        params = Params(**{**base, **extra})
        assert getattr(params, name) == extra[name]


def test_defaults_resolve_per_variant() -> None:
    """Defaults resolve after validation; parameters a variant lacks stay None."""
    final = Params(mem_cost=12)
    assert (final.start_mem_cost, final.time_cost, final.overwrite_cost, final.hash_size) == (
        12,
        None,
        6,
        None,
    )
    timecost = Params(variant="2014", mem_cost=12)
    assert (timecost.time_cost, timecost.overwrite_cost, timecost.hash_size) == (0, 6, None)
    march = Params(variant="2014-03", mem_cost=12)
    assert (march.time_cost, march.overwrite_cost, march.hash_size) == (0, None, 32)
    assert Params(mem_cost=12) == Params(mem_cost=12, start_mem_cost=12, overwrite_cost=6)


def test_strict_does_not_take_part_in_equality() -> None:
    """Two equal configurations are equal however strictly they were validated."""
    assert Params(mem_cost=12, strict=False) == Params(mem_cost=12)
    assert hash(Params(mem_cost=12, strict=False)) == hash(Params(mem_cost=12))


def test_params_are_frozen() -> None:
    """A validated parameter set cannot be changed afterwards."""
    params = Params(mem_cost=12)
    with pytest.raises(dataclasses.FrozenInstanceError, match="mem_cost"):
        params.mem_cost = 40  # type: ignore[misc]


@pytest.mark.parametrize(
    ("variant", "name", "value"),
    [
        ("2015", "time_cost", 0),
        ("2015", "hash_size", 32),
        ("2014", "hash_size", 32),
        ("2014", "side_channel_resistant", True),
        ("2014-03", "overwrite_cost", 6),
        ("2014-03", "side_channel_resistant", True),
    ],
)
def test_parameter_the_variant_lacks_is_refused(variant: str, name: str, value: object) -> None:
    """Setting a parameter that the chosen variant does not have is an error naming it."""
    with pytest.raises(InvalidParametersError, match=f"^{name} must be (None|False) for variant"):
        Params(variant=variant, mem_cost=12, **{name: value})


def test_properties() -> None:
    """The derived properties follow the hash type and mem_cost."""
    for code, name in enumerate(HASH_TYPES):
        params = Params(hash_type=name, mem_cost=12)
        assert params.hash_code == code
        assert params.digest_size == (64 if name in ("blake2b", "sha512") else 32)
        assert params.state_words == params.digest_size // 4
        assert params.output_size == params.digest_size
        assert params.memory_bytes == 4 << 20
    assert Params(variant="2014-03", mem_cost=12, hash_size=100).output_size == 100


def test_lanes_must_be_a_power_of_two_up_to_the_state_width() -> None:
    """Lanes 1, 2, 4, 8 suit 32-byte hashes; 16 needs a 64-byte hash; others are refused."""
    for lanes in (1, 2, 4, 8):
        Params(mem_cost=12, lanes=lanes)
    Params(mem_cost=12, hash_type="sha512", lanes=16, sub_block_size=64)
    for lanes in (3, 5, 7, 12):
        with pytest.raises(InvalidParametersError, match=r"^lanes must be a power of two"):
            Params(mem_cost=12, hash_type="sha512", lanes=lanes, sub_block_size=64)


def test_block_size_at_least_the_digest() -> None:
    """A block shorter than the digest would leave block 0 partly unwritten, so it is refused."""
    Params(mem_cost=12, hash_type="blake2b", block_size=64, sub_block_size=32)
    with pytest.raises(InvalidParametersError) as caught:
        Params(mem_cost=12, hash_type="blake2b", block_size=32, sub_block_size=32)
    assert str(caught.value) == (
        "block_size must be a power of two from 64 (the blake2b digest size) to 1048576 bytes; "
        "got 32"
    )


def test_sub_block_size_between_four_lanes_and_block() -> None:
    """The sub-block holds at least one row of lanes and fits in a block."""
    Params(mem_cost=12, lanes=1, block_size=32, sub_block_size=4)
    with pytest.raises(InvalidParametersError) as caught:
        Params(mem_cost=12, lanes=2, block_size=32, sub_block_size=4)
    assert str(caught.value) == (
        "sub_block_size must be a power of two from 4 * lanes (8) to block_size (32); got 4"
    )


def test_strict_requires_memory_hard_work() -> None:
    """Strict parameters need four blocks per region; strict=False accepts the reference's chain."""
    with pytest.raises(InvalidParametersError) as caught:
        Params(mem_cost=6)
    assert str(caught.value).startswith(
        "parallelism must be from 1 to 1 for mem_cost 6 and block_size 16384"
    )
    with pytest.raises(
        InvalidParametersError, match=r"^block_size must be a power of two from 32 to"
    ):
        Params(mem_cost=5, parallelism=1)
    Params(mem_cost=6, parallelism=1)
    assert Params(mem_cost=6, strict=False).parallelism == 2


def test_start_mem_cost_at_most_mem_cost() -> None:
    """The first level cannot come after the last."""
    with pytest.raises(InvalidParametersError) as caught:
        Params(mem_cost=12, start_mem_cost=13)
    assert str(caught.value) == "start_mem_cost must be from 0 to mem_cost (12); got 13"


def test_hash_size_rules_of_march_2014() -> None:
    """hash_size is 1..255 (strict) or up to block_size (strict=False reproduces the truncation)."""
    Params(variant="2014-03", mem_cost=12, hash_size=255)
    for size in (0, 256):
        with pytest.raises(InvalidParametersError, match=r"^hash_size must be"):
            Params(variant="2014-03", mem_cost=12, hash_size=size)
    assert Params(variant="2014-03", mem_cost=12, hash_size=4096, strict=False).hash_size == 4096
    with pytest.raises(
        InvalidParametersError, match=r"^hash_size must be from 1 to 1024; got 2048"
    ):
        Params(variant="2014-03", mem_cost=12, block_size=1024, hash_size=2048, strict=False)


def test_march_2014_sizing_rules() -> None:
    """March 2014 sizes: sub-blocks, lanes per block, the 32-bit wrap and resized levels."""
    with pytest.raises(
        InvalidParametersError, match=r"^sub_block_size must be a power of two from 32"
    ):
        Params(variant="2014-03", mem_cost=12, lanes=1, sub_block_size=16)
    with pytest.raises(InvalidParametersError, match=r"^lanes must be .* block_size / 4 \(8\)"):
        Params(
            variant="2014-03",
            mem_cost=12,
            hash_type="blake2b",
            lanes=16,
            block_size=32,
            sub_block_size=32,
        )
    with pytest.raises(InvalidParametersError, match=r"^parallelism must be from 1 to 63 "):
        Params(variant="2014-03", mem_cost=20, block_size=1 << 20, parallelism=64)
    # At mem_cost 10 a 16 KiB block is resized to 2 KiB, shorter than the 16 KiB sub-block.
    with pytest.raises(InvalidParametersError) as caught:
        Params(variant="2014-03", mem_cost=10, sub_block_size=16384)
    assert str(caught.value) == (
        "sub_block_size must be at most 2048 bytes, the block size level 10 is resized to; "
        "got 16384"
    )


def test_check_update_needs_a_smaller_old_mem_cost() -> None:
    """An update must raise mem_cost; the old one is the stored output's own mem_cost."""
    params = Params(mem_cost=12)
    check_update(params, 11)
    check_update(params, 0)
    for old in (12, 13, -1):
        with pytest.raises(InvalidParametersError) as caught:
            check_update(params, old)
        assert str(caught.value) == f"old_mem_cost must be from 0 to mem_cost - 1 (11); got {old}"
    with pytest.raises(InvalidParametersError, match=r"^old_mem_cost must be an integer"):
        check_update(params, 11.0)  # type: ignore[arg-type]
