"""Differential tests: simd == scalar == reference on small random parameters and inputs.

The parameters cover every variant, hash type, lane count, block and sub-block size, parallelism,
multiply count, time cost, overwrite cost, side-channel mode and 2014-03 output size, with at most
32 KiB of memory so that the pure-Python reference stays quick.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from twocats.exceptions import InvalidParametersError
from twocats.kdf.engine import Engine
from twocats.params import DIGEST_SIZES, HASH_TYPES, VARIANTS, Params

#: The largest memory cost drawn (32 KiB).
MAX_MEM_COST = 5

POWERS = tuple(1 << n for n in range(2, 12))

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@st.composite
def small_params(draw: st.DrawFn) -> Params:
    """Draw a valid parameter set of at most 32 KiB, of any variant and hash type."""
    variant = draw(st.sampled_from(VARIANTS))
    hash_type = draw(st.sampled_from(HASH_TYPES))
    digest = DIGEST_SIZES[HASH_TYPES.index(hash_type)]
    lanes = draw(st.sampled_from([n for n in (1, 2, 4, 8, 16) if n <= digest // 4]))
    parallelism = draw(st.integers(1, 4))
    if variant == "2014-03":
        low_block, low_sub = max(32, 4 * lanes), 32
    else:
        low_block, low_sub = max(digest, 4 * lanes), 4 * lanes
    block_size = draw(st.sampled_from([b for b in POWERS if low_block <= b <= 2048]))
    sub_block_size = draw(st.sampled_from([s for s in POWERS if low_sub <= s <= block_size]))
    mem_cost = draw(st.integers(0, MAX_MEM_COST))
    fields = {
        "variant": variant,
        "hash_type": hash_type,
        "mem_cost": mem_cost,
        "start_mem_cost": draw(st.integers(0, mem_cost)),
        "multiplies": draw(st.integers(0, 8)),
        "lanes": lanes,
        "parallelism": parallelism,
        "block_size": block_size,
        "sub_block_size": sub_block_size,
    }
    if variant != "2015":
        fields["time_cost"] = draw(st.integers(0, 2))
    if variant != "2014-03":
        fields["overwrite_cost"] = draw(st.integers(0, 8))
    if variant == "2015":
        fields["side_channel_resistant"] = draw(st.booleans())
    if variant == "2014-03":
        fields["hash_size"] = draw(st.integers(1, min(255, block_size)))
    try:
        # strict=False also admits sets whose small levels do no memory work, as the reference.
        return Params(**fields, strict=False)
    except InvalidParametersError:
        reject()


INPUT = st.binary(max_size=40)


@SETTINGS
@given(params=small_params(), password=INPUT, salt=INPUT, data=INPUT)
def test_derive_agrees_on_every_backend(
    engine_for: Callable[[str], Engine], params: Params, password: bytes, salt: bytes, data: bytes
) -> None:
    """simd, scalar and reference derive the same output."""
    outputs = {
        backend: engine_for(backend).derive(password, salt, params, data=data)
        for backend in ("reference", "scalar", "simd")
    }
    assert outputs["simd"] == outputs["reference"]
    assert outputs["scalar"] == outputs["reference"]


@settings(SETTINGS, max_examples=15)
@given(params=small_params(), stored=st.binary(min_size=64, max_size=64))
def test_update_agrees_on_every_backend(
    engine_for: Callable[[str], Engine], params: Params, stored: bytes
) -> None:
    """simd, scalar and reference update a stored output to one more level identically."""
    target = Params(**{**_fields(params), "mem_cost": params.mem_cost + 1}, strict=False)
    stored = stored[: target.output_size].ljust(target.output_size, b"\0")
    outputs = {
        backend: engine_for(backend).update(stored, target, params.mem_cost)
        for backend in ("reference", "scalar", "simd")
    }
    assert outputs["simd"] == outputs["reference"]
    assert outputs["scalar"] == outputs["reference"]


def _fields(params: Params) -> dict[str, object]:
    names = (
        "variant",
        "hash_type",
        "start_mem_cost",
        "time_cost",
        "multiplies",
        "lanes",
        "parallelism",
        "block_size",
        "sub_block_size",
        "overwrite_cost",
        "side_channel_resistant",
        "hash_size",
    )
    return {name: getattr(params, name) for name in names}
