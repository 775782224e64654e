"""The compiled layer of the password hash; numba and numpy are imported lazily, on first use.

Public names (loaded when first touched, so ``import twocats.simd`` stays cheap)::

    BACKENDS, resolve_backend, available_backends, simd_isa, describe_backends

Kernel authors use ``twocats.simd._jit`` (decorators and cache); the layout of the compiled layer is
described in CONTRIBUTING.md.  Lane hashing (``hash_many`` and the lane modes) is
:mod:`twocats.lanes`; its old names here (``hash_many``, ``hash_many_array``, ``hash_many_fixed``,
``ALGORITHMS``, ``DIGEST_SIZES``, ``reference``) still work and warn ``DeprecationWarning``.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from twocats._lazy import lazy_attributes

if TYPE_CHECKING:
    from twocats.simd.registry import (
        BACKENDS,
        available_backends,
        describe_backends,
        resolve_backend,
        simd_isa,
    )

_LAZY = {
    "BACKENDS": "twocats.simd.registry",
    "available_backends": "twocats.simd.registry",
    "describe_backends": "twocats.simd.registry",
    "resolve_backend": "twocats.simd.registry",
    "simd_isa": "twocats.simd.registry",
}

#: Names that moved to twocats.lanes: old name -> what to use instead.
_MOVED = {
    "ALGORITHMS": "twocats.lanes.PRIMITIVES",
    "DIGEST_SIZES": "twocats.lanes.ALGORITHMS[name].digest_size",
    "hash_many": "twocats.lanes.hash_many",
    "hash_many_array": "twocats.lanes.hash_many_array",
    "hash_many_fixed": "twocats.lanes.hash_many_fixed",
    "reference": "twocats.lanes.reference",
}


def _moved(name: str) -> Any:
    """The value an old name stands for, from its new home."""
    import twocats.lanes

    if name == "reference":
        # The old module, whose ALGORITHMS the new one calls FUNCTIONS.
        return importlib.import_module("twocats.simd.reference")
    if name == "ALGORITHMS":
        return twocats.lanes.PRIMITIVES
    if name == "DIGEST_SIZES":
        return {
            key: entry.digest_size
            for key, entry in twocats.lanes.ALGORITHMS.items()
            if entry.primitive
        }
    return getattr(twocats.lanes, name)


__all__ = [
    "BACKENDS",
    "available_backends",
    "describe_backends",
    "resolve_backend",
    "simd_isa",
]

_load = lazy_attributes(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    instead = _MOVED.get(name)
    if instead is not None:
        warnings.warn(
            f"twocats.simd.{name} is deprecated: use {instead}", DeprecationWarning, stacklevel=2
        )
        return _moved(name)
    return _load(name)
