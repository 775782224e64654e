"""TwoCats key derivation: parameters to output, over a choice of compute backends.

The raw derivation and every entry point of the reference implementation::

    from twocats import Params
    from twocats import kdf

    params = Params(mem_cost=10)
    key = kdf.derive(b"password", b"salt", params)            # client + server
    half = kdf.client(b"password", b"salt", params)           # server relief: client half
    assert kdf.server(half, params) == key                    # ... and server half
    bigger = kdf.update(key, Params(mem_cost=12), old_mem_cost=10)
    assert bigger == kdf.derive(b"password", b"salt", Params(mem_cost=12, start_mem_cost=10))

The convenience APIs of the reference (``full``, ``simple``, ``phs``) derive their parameters
exactly as the reference does; ``full_params``, ``simple_params`` and ``phs_params`` return those
parameters without hashing.

Every function here may be called from many threads at once.  Each thread keeps one default
:class:`Engine` per backend, so repeated calls reuse one work buffer per thread and two running
derivations never share one; the compiled fill releases the GIL, so threads hash in parallel.

Memory is checked before it is allocated: ``max_memory`` (bytes) refuses a request that needs
more with a :class:`~twocats.exceptions.MemoryLimitError` naming ``mem_cost``, the size and the
limit, and no request may exceed what the machine can give
(:func:`twocats.kdf.limits.machine_memory`).  Passwords, salts and data may be up to 4 GiB - 1
bytes long (the algorithm's 32-bit length fields); inputs of 100 MB cost about one hash pass over
them.  Create an ``Engine`` of your own to set a standing limit or to zero the work memory after
use (``wipe``).  Importing this package imports neither numpy nor numba.

This package is the face of two modules: the raw derivation lives in :mod:`twocats.kdf.api`, the
reference's convenience APIs in :mod:`twocats.kdf.compat`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twocats._lazy import lazy_attributes
from twocats.kdf.api import client, default_engine, derive, memory_required, server, update
from twocats.kdf.compat import full, full_params, phs, phs_params, simple, simple_params

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine

__all__ = [
    "Engine",
    "client",
    "default_engine",
    "derive",
    "full",
    "full_params",
    "memory_required",
    "phs",
    "phs_params",
    "server",
    "simple",
    "simple_params",
    "update",
]


__getattr__ = lazy_attributes(__name__, {"Engine": "twocats.kdf.engine"})
