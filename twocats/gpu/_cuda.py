"""numba's CUDA target, imported only when the ``gpu`` extra is installed.

numba itself still ships a deprecated CUDA target; the kernels are written for the maintained one
of the ``numba-cuda`` package, so its absence is reported as a missing extra rather than left to
fail later in the old target.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, TypeVar

from twocats._extras import install_hint

__all__ = ["cuda", "device", "kernel", "simulated"]

F = TypeVar("F", bound=Callable[..., Any])


def _load() -> Any:
    try:
        importlib.import_module("numba_cuda")
    except ImportError as error:
        raise ImportError(
            "twocats.gpu needs numba-cuda, which is not installed; "
            f"install it with: {install_hint('gpu')} (the gpu extra)"
        ) from error
    from numba import cuda as target

    return target


#: numba's CUDA module (``numba.cuda``), from numba-cuda.
cuda: Any = _load()


def simulated() -> bool:
    """Return whether the kernels run in numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def device(function: F) -> F:
    """Compile ``function`` as a CUDA device function, called from kernels like itself."""
    compiled: F = cuda.jit(device=True)(function)
    return compiled


def kernel(function: Callable[..., None]) -> Any:
    """Compile ``function`` as a CUDA kernel, launched as ``kernel[blocks, threads](...)``."""
    return cuda.jit(function)
