"""Differential tests: simd == scalar == reference on small random parameters and inputs.

The parameters cover every variant, hash type, lane count, block and sub-block size, parallelism,
multiply count, time cost, overwrite cost, side-channel mode and 2014-03 output size, with at most
32 KiB of memory so that the pure-Python reference stays quick.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.strategies import param_sets
from twocats.kdf.engine import Engine
from twocats.params import Params

#: The largest memory cost drawn (32 KiB).
MAX_MEM_COST = 5

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def small_params() -> st.SearchStrategy[Params]:
    """Any valid parameter set of at most 32 KiB, of any variant and hash type.

    ``strict=False`` also admits sets whose small levels do no memory work, as the reference does.
    """
    return param_sets(
        max_mem_cost=MAX_MEM_COST,
        max_block_size=2048,
        max_parallelism=4,
        max_time_cost=2,
        max_overwrite_cost=8,
        strict=False,
    )


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
