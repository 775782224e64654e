"""Named TwoCats parameter sets.

Each profile is a plain :class:`~twocats.params.Params`; pass it to
:meth:`twocats.PasswordHasher.from_params`.  The timings quoted below were measured on the project
machine (2 cores with AVX-512, compiled ``simd`` backend, warm process, reused memory); run
``twocats tune`` to fit parameters to another machine and time budget.

All profiles keep the reference's block layout (16 KiB blocks, 64-byte sub-blocks, overwrite cost 6)
and use two threads (``parallelism=2``): a login server is usually busy with many requests at once,
so more threads per hash buy lower latency but no more throughput.  They differ in memory, which is
what makes an attacker's hardware expensive, and in the length of the serial multiply chain, which
bounds how much faster custom hardware can run each block.
"""

from __future__ import annotations

from typing import Final

from twocats.params import Params

__all__ = [
    "BUILT_IN",
    "CHEAPEST",
    "DEFAULT",
    "INTERACTIVE",
    "MODERATE",
    "PROFILES",
    "SENSITIVE",
    "get_default_params",
]

INTERACTIVE: Final = Params(mem_cost=16, multiplies=2)
"""64 MiB, 2 multiplies per lane word: for interactive logins on busy servers.

About 25 ms of CPU per hash on the project machine (30-65 ms wall-clock while other jobs loaded
both cores), so a 2-core server still verifies dozens of logins per second, while an attacker pays
for 64 MiB per guess: the memory of libsodium's ``INTERACTIVE`` argon2id preset and of RFC 9106's
second recommendation.
"""

MODERATE: Final = Params(mem_cost=18, multiplies=3)
"""256 MiB, 3 multiplies per lane word: the default.

About 0.13 s of CPU per hash on the project machine (0.25-0.36 s wall-clock while other jobs
loaded both cores, less when it is idle), inside the 0.1-0.5 s a user does not notice at a login
prompt.  Three multiplies is the reference's own choice for memory costs of 10 and above.
"""

SENSITIVE: Final = Params(mem_cost=20, multiplies=3)
"""1 GiB, 3 multiplies per lane word: for rare, high-value operations (disk or vault keys).

About 0.5 s of CPU per hash on the project machine (1-1.35 s wall-clock while other jobs loaded
both cores): for uses where a second per unlock is acceptable and a gibibyte can be set aside
for it.  (RFC 9106's first recommendation uses 2 GiB; raise ``mem_cost`` to 21 where the memory
is there.)
"""

CHEAPEST: Final = Params(
    mem_cost=0,
    multiplies=1,
    lanes=8,
    parallelism=1,
    block_size=32,
    sub_block_size=32,
)
"""1 KiB in 32-byte blocks: the cheapest set that still fills memory.  For tests only.

It runs every part of the algorithm (32 blocks, both addressing modes, the multiply chain, every
hash helper) in microseconds, and offers no protection at all.
"""

DEFAULT: Final = MODERATE
"""The profile :class:`~twocats.PasswordHasher` uses when given no parameters."""

BUILT_IN: Final = (INTERACTIVE, MODERATE, SENSITIVE)
"""The profiles for real use, cheapest first.

A :class:`~twocats.PasswordHasher` accepts stored hashes of each of them (and their upgrades) by
default, whatever its own parameters, so that lowering the cost from one profile to another
never locks anyone out (see :meth:`twocats.kdf.limits.StoredLimits.relative_to`).
"""

PROFILES: Final[dict[str, Params]] = {
    "interactive": INTERACTIVE,
    "moderate": MODERATE,
    "sensitive": SENSITIVE,
    "cheapest": CHEAPEST,
}
"""The profiles by lower-case name (the names the command line accepts)."""


def get_default_params() -> Params:
    """Return the default parameters (:data:`DEFAULT`)."""
    return DEFAULT
