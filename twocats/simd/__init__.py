"""The compiler floor of both products: numba, its cache, ISA levels, assembly and artefacts.

Public names (loaded when first touched, so ``import twocats.simd`` stays cheap)::

    BACKENDS, resolve_backend, available_backends, simd_isa, describe_backends

Kernel authors use ``twocats.simd._jit`` (decorators and cache); the layout of the compiled layer is
described in CONTRIBUTING.md.
"""

from __future__ import annotations

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

__all__ = [
    "BACKENDS",
    "available_backends",
    "describe_backends",
    "resolve_backend",
    "simd_isa",
]

_load = lazy_attributes(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    return _load(name)
