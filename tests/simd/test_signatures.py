"""Every entry kernel compiles one signature: a second one would double its compile time.

Entry kernels are those the library calls from Python (the fills, the lane schedulers and lane
compressions); their callees may also be compiled for the other argument types of direct test calls.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from twocats import kdf
from twocats.lanes import hash_many_fixed
from twocats.params import Params
from twocats.simd import _jit

#: The modules of the fill kernels (not of the state hash's compressions, their callees), of the
#: lane kernels and of the hash_many scheduler.
_COMPILED = (
    "twocats.kdf.fill._generated.fill_",
    "twocats.lanes._generated.",
    "twocats.lanes.scheduler",
)

compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="needs compiled kernels (NUMBA_DISABLE_JIT is set)"
)


@compiled_only
def test_fills_and_lane_hashes_of_every_hash_type_compile_one_signature_each() -> None:
    """After fills of every hash type and variant and every lane hash, no kernel has two."""
    for hash_type, lanes in (("blake2s", 8), ("blake2b", 16), ("sha256", 4), ("sha512", 2)):
        params = Params(hash_type=hash_type, lanes=lanes, mem_cost=8, parallelism=2)
        kdf.derive(b"pw", b"salt", params, backend="simd")
        kdf.derive(b"pw", b"salt", params, backend="scalar")
    kdf.derive(b"pw", b"salt", Params(variant="2014-03", mem_cost=10, parallelism=1))
    for algorithm in ("blake2s", "blake2b", "sha256", "sha512"):
        hash_many_fixed(np.zeros((3, 64), np.uint8), algorithm)
    kernels = [
        obj
        for obj in gc.get_objects()
        # type() rather than isinstance(): a lazy proxy (Django's settings) answers isinstance by
        # evaluating itself.
        if issubclass(type(obj), Dispatcher) and obj.py_func.__module__.startswith(_COMPILED)
    ]
    assert kernels
    several = {k.py_func.__qualname__: len(k.signatures) for k in kernels if len(k.signatures) > 1}
    assert several == {}
