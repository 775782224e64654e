"""Where compiled kernels are cached; importing this module imports no numba.

``cache_root()`` is ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``.  Below it,
:mod:`twocats.simd._jit` keeps one folder per numba version, target ISA and vectorizer mode.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_root"]

#: The environment variable that moves the kernel cache.
CACHE_ENV = "TWOCATS_CACHE_DIR"


def cache_root() -> Path:
    """Return the kernel cache root: ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "twocats"
