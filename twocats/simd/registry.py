"""Names of the compute backends and the choice between them; importing this imports no numba.

Usage::

    from twocats.simd.registry import resolve_backend, available_backends, simd_isa

    backend = resolve_backend(None)      # $TWOCATS_BACKEND, else "simd"
    backend = resolve_backend("scalar")  # validated; unknown names raise BackendError
    available_backends()                 # ("reference", "scalar", "simd")
    simd_isa()                           # e.g. "AVX-512 (znver4)"
    describe_backends()                  # all of the above in one dict

The backends are:

* ``reference``: plain Python, slow and obvious; it defines truth.
* ``scalar``: the compiled kernels built with every LLVM vectorizer off.
* ``simd``: the same kernel source built with the vectorizers on, for the ISA ``simd_isa()`` names.
"""

from __future__ import annotations

import os

from twocats.exceptions import BackendError

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "COMPILED",
    "available_backends",
    "check_compiled",
    "describe_backends",
    "resolve_backend",
    "simd_isa",
]

#: Every backend name, slowest first.
BACKENDS = ("reference", "scalar", "simd")

#: The backends whose kernels are compiled.
COMPILED = ("scalar", "simd")

#: The environment variable that forces a backend when the caller passes none.
BACKEND_ENV = "TWOCATS_BACKEND"

_DEFAULT = "simd"


def resolve_backend(name: str | None) -> str:
    """Return the backend to use: ``name``, else ``$TWOCATS_BACKEND``, else ``"simd"``."""
    chosen = name
    if chosen is None:
        chosen = os.environ.get(BACKEND_ENV) or _DEFAULT
    if chosen not in BACKENDS:
        allowed = ", ".join(BACKENDS)
        source = "backend" if name is not None else BACKEND_ENV
        raise BackendError(f"{source} must be one of {allowed}, not {chosen!r}")
    return chosen


def check_compiled(backend: str) -> str:
    """Return ``backend`` if its kernels are compiled; else raise
    :class:`~twocats.exceptions.BackendError`."""
    if backend not in COMPILED:
        raise BackendError(f"backend must be one of {', '.join(COMPILED)}, not {backend!r}")
    return backend


def available_backends() -> tuple[str, ...]:
    """Return the backends this installation can run (every backend ships with the package)."""
    return BACKENDS


def _target() -> tuple[str, str]:
    """Return the CPU name and feature string numba compiles for, honouring numba's overrides."""
    import llvmlite.binding as llvm

    cpu_name = os.environ.get("NUMBA_CPU_NAME") or llvm.get_host_cpu_name()
    features = os.environ.get("NUMBA_CPU_FEATURES")
    if features is None:
        # numba passes the host features for every CPU name except "generic".
        features = "" if cpu_name == "generic" else llvm.get_host_cpu_features().flatten()
    return cpu_name, features


def simd_isa() -> str:
    """Name the instruction set the simd backend compiles for, e.g. ``"AVX-512 (znver4)"``."""
    from twocats.simd.isa import best_tier, enabled_features, features_tier, host_arch

    cpu_name, features = _target()
    width = ", 256-bit preferred" if "prefer-256-bit" in enabled_features(features) else ""
    tier = best_tier(features)
    if tier is None and host_arch() == "aarch64":
        tier = features_tier(cpu_name, features)
    if tier is not None:
        return f"{tier} ({cpu_name}{width})"
    if not features:
        # An empty feature string means the CPU name alone decides; name that model.
        return f"baseline of {cpu_name}"
    return f"no SIMD extension ({cpu_name})"


def describe_backends() -> dict[str, object]:
    """Describe the backends: which exist, the default here, and the simd backend's ISA."""
    return {
        "backends": available_backends(),
        "default": resolve_backend(None),
        "simd_isa": simd_isa(),
    }
