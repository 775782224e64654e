"""The numba fill kernel of one lane count, backend, hash type and block hash, and its scratch.

Usage::

    from twocats.kdf.fill.kernels import NumbaFill, fill_kernel, scratch

    kernel = fill_kernel(8, "simd", 0, 0)       # imports numba; compiles on the first call
    kernel(mem, states, *scratch(0), *args.ints())      # args: a FillArgs
    NumbaFill(kernel, 0)(mem, states, args)

Importing the module imports neither numpy nor numba; :func:`fill_kernel` and
:func:`checked_fill` import numba, and :func:`scratch` and :class:`NumbaFill` import numpy.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

from twocats.exceptions import BackendError, InvalidParametersError
from twocats.hashes import HASHES
from twocats.kdf.fill import check
from twocats.kdf.fill.args import (
    CHAINS,
    LANES,
    SCRATCH,
    FillArgs,
    FillKey,
    kernel_name,
    module_name,
)
from twocats.kdf.words import Words

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "FILL_BACKENDS",
    "NumbaFill",
    "check_backend",
    "checked_fill",
    "fill_kernel",
    "fill_variants",
    "scratch",
]

#: The backends with compiled fill kernels (the pure-Python ``reference`` lives in ``twocats.kdf``).
FILL_BACKENDS = ("scalar", "simd")


def check_backend(backend: str) -> None:
    """Raise :class:`~twocats.exceptions.BackendError` unless ``backend`` has fill kernels."""
    if backend not in FILL_BACKENDS:
        raise BackendError(f"backend must be one of {', '.join(FILL_BACKENDS)}, not {backend!r}")


def fill_kernel(lanes: int, backend: str, hash_type: int = 0, variant: int = 0) -> Any:
    """Return the numba region kernel for ``lanes``, ``backend``, hash code and ``variant``.

    ``backend`` is "scalar" or "simd"; ``variant`` 0 is the final/2014 block hash and 1 the March
    2014 one.  The kernel fills one slice of the regions ``p_first, p_first + p_step, ...``; its
    arguments are ``(mem, states, *scratch(variant), *args.ints())`` for a
    :class:`~twocats.kdf.fill.args.FillArgs` ``args``.  Each kernel links the state hash of its own
    hash type only, and is returned once it passed its known-answer check in this process (see
    :func:`checked_fill`), which compiles it or loads it from the cache.  Calling this imports
    numba.
    """
    check_backend(backend)
    return fill_variants(lanes, hash_type, variant).get(backend)


def fill_variants(lanes: int, hash_type: int = 0, variant: int = 0) -> Any:
    """Return the fill kernel of ``lanes``, hash code and ``variant`` as a
    :class:`~twocats.simd._jit.Variants` (both builds), with its known-answer check."""
    if lanes not in LANES:
        raise InvalidParametersError(f"lanes must be one of {', '.join(map(str, LANES))}")
    if not 0 <= hash_type < len(HASHES):
        raise InvalidParametersError("hash_type must be 0, 1, 2 or 3")
    if variant not in (0, 1):
        raise InvalidParametersError("variant must be 0 (final/2014) or 1 (March 2014)")
    facts = HASHES[hash_type]
    if lanes > facts.state_words:
        raise InvalidParametersError(
            f"lanes must be at most {facts.state_words} (the {facts.name} state's words)"
        )
    from twocats.kdf.fill.statehash import STATE_HASHES

    module = importlib.import_module(f"twocats.kdf.fill._generated.{module_name(lanes)}")
    source = getattr(module, kernel_name(CHAINS[variant], lanes))
    kernel = source.specialise(
        facts.name, state_hash=STATE_HASHES[hash_type], N_WORDS=facts.state_words
    )
    return kernel.checked_by(functools.partial(_passes, lanes, hash_type, variant))


def _passes(lanes: int, hash_type: int, variant: int, backend: str) -> bool:
    """The fill kernel's check: :func:`twocats.kdf.fill.check.run_check` gives the reference's."""
    key = FillKey(lanes, backend, hash_type, variant)
    kernel = NumbaFill(fill_kernel(lanes, backend, hash_type, variant), variant)
    return check.run_check(kernel, key) == check.reference_check(key)


def scratch(variant: int) -> tuple[npt.NDArray[Any], ...]:
    """Return fresh scratch arrays for one call of a kernel of ``variant`` (0 or 1)."""
    import numpy as np

    return tuple(np.empty(words, dtype) for _name, dtype, words in SCRATCH[CHAINS[variant]])


class NumbaFill:
    """A numba fill kernel called like an ahead-of-time one: without scratch, on any words.

    ``mem`` and ``states`` may be views (:mod:`twocats.kdf.words`) or numpy arrays; views become
    arrays without a copy; the scratch arrays are made for each call and zeroed after it.
    ``plain`` is for a kernel run as Python (``NUMBA_DISABLE_JIT``), whose uint32 sums wrap on
    purpose.
    """

    def __init__(self, kernel: Any, variant: int, *, plain: bool = False) -> None:
        import numpy as np

        self._kernel = kernel
        self._variant = variant
        self._plain = plain
        self._np = np

    def __call__(self, mem: Words, states: Words, args: FillArgs) -> None:
        np = self._np
        buffers = scratch(self._variant)
        values = (np.asarray(mem), np.asarray(states), *buffers, *args.ints())
        try:
            if self._plain:
                # numpy's error state is per thread.
                with np.errstate(over="ignore"):
                    self._kernel(*values)
            else:
                self._kernel(*values)
        finally:
            # The scratch held words derived from the password.
            for buffer in buffers:
                buffer.fill(0)


def checked_fill(key: FillKey) -> NumbaFill:
    """Return numba's build of ``key``'s fill kernel once it passes its known-answer check.

    The build, compiled or loaded from numba's cache, fills the job of
    :func:`twocats.kdf.fill.check.run_check` before its first use in a process; if the result
    differs from the pure-Python reference's, the reference decides: the kernel compiles afresh,
    with what it calls, ignoring the cache (one warning), and a fresh build that still differs
    raises :class:`~twocats.exceptions.BackendError` (never a wrong hash; see
    :meth:`twocats.simd._jit.Variants.checked_by`).  Under ``NUMBA_DISABLE_JIT`` the kernel is its
    Python source and runs unchecked.
    """
    from twocats.simd import _jit

    kernel = fill_kernel(key.lanes, key.backend, key.hash_type, key.variant)
    return NumbaFill(kernel, key.variant, plain=bool(_jit.config.DISABLE_JIT))
