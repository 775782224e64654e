"""Lane hash primitives and compiled kernels; numba and numpy are imported lazily, on first use.

Public names (loaded when first touched, so ``import twocats.simd`` stays cheap)::

    hash_many(messages, algorithm="sha256", *, backend=None, lanes=None) -> list[bytes]
    hash_many_array(messages, algorithm="sha256", *, backend=None, lanes=None) -> np.ndarray
    hash_many_fixed(array, algorithm="sha256", *, backend=None, lanes=None) -> np.ndarray
    ALGORITHMS, DIGEST_SIZES                  # "blake2s", "blake2b", "sha256", "sha512"
    BACKENDS, resolve_backend, available_backends, simd_isa, describe_backends
    reference                                 # plain-Python hashes (truth)

Kernel authors use ``twocats.simd._jit`` (decorators and cache); the layout of the compiled layer is
described in CONTRIBUTING.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from twocats.lanes import reference
    from twocats.lanes.many import (
        ALGORITHMS,
        DIGEST_SIZES,
        hash_many,
        hash_many_array,
        hash_many_fixed,
    )
    from twocats.simd.registry import (
        BACKENDS,
        available_backends,
        describe_backends,
        resolve_backend,
        simd_isa,
    )

_LAZY = {
    "ALGORITHMS": "twocats.lanes.many",
    "DIGEST_SIZES": "twocats.lanes.many",
    "hash_many": "twocats.lanes.many",
    "hash_many_array": "twocats.lanes.many",
    "hash_many_fixed": "twocats.lanes.many",
    "BACKENDS": "twocats.simd.registry",
    "available_backends": "twocats.simd.registry",
    "describe_backends": "twocats.simd.registry",
    "resolve_backend": "twocats.simd.registry",
    "simd_isa": "twocats.simd.registry",
}

__all__ = [
    "ALGORITHMS",
    "BACKENDS",
    "DIGEST_SIZES",
    "available_backends",
    "describe_backends",
    "hash_many",
    "hash_many_array",
    "hash_many_fixed",
    "reference",
    "resolve_backend",
    "simd_isa",
]


def __getattr__(name: str) -> Any:
    if name == "reference":
        return importlib.import_module("twocats.lanes.reference")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'twocats.simd' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
