"""Deprecated alias of the lane modes, which moved to :mod:`twocats.lanes`.

``MODES`` holds the lane modes of :data:`twocats.lanes.ALGORITHMS` (which also holds the
primitives), ``Mode`` is :class:`twocats.lanes.Algorithm` and ``hash_many`` is
:func:`twocats.lanes.hash_many`; the families are the modules of :mod:`twocats.lanes.modes` and
their references those of :mod:`twocats.lanes.reference`.
"""

from __future__ import annotations

import sys
import warnings

from twocats.lanes import reference
from twocats.lanes.many import hash_many
from twocats.lanes.modes import blake2tree, keccak, lsh, sha1, sha256tree
from twocats.lanes.registry import ALGORITHMS, Algorithm

__all__ = ["MODES", "Mode", "hash_many"]

Mode = Algorithm
MODES = {name: entry for name, entry in ALGORITHMS.items() if not entry.primitive}

# The old module paths (twocats.simd.modes.keccak and the like) name the moved modules.
for _module in (blake2tree, keccak, lsh, sha1, sha256tree, reference):
    sys.modules.setdefault(f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}", _module)

warnings.warn(
    "twocats.simd.modes is deprecated: import ALGORITHMS and hash_many from twocats.lanes, "
    "the mode families from twocats.lanes.modes",
    DeprecationWarning,
    stacklevel=2,
)
