"""TwoCats parameters: one frozen dataclass, validated in one place against one bounds table.

Three published versions of TwoCats are supported (see ``twocats.kdf`` for the algorithms):

``"2015"``
    The final algorithm.  Parameters: everything except ``time_cost`` and ``hash_size``.
``"2014"``
    The timeCost variant (Aug 2014 - Jun 2015): ``time_cost`` repeats the last slice of every main
    level ``2**time_cost`` times; there is no side-channel-resistant mode.
``"2014-03"``
    The March 2014 version quoted on the PHC mailing list: big-endian, ``time_cost`` repeats
    every block hash, variable output length ``hash_size``, no ``overwrite_cost`` (the overwrite
    levels are hard-wired) and no side-channel-resistant mode.

A parameter a version lacks must be left as None (or False); the defaults resolve after validation,
so two equal configurations compare equal.

Validation rejects everything the reference rejects, and also what the reference accepts but
cannot compute deterministically: lanes that are not a power of two, blocks shorter than the digest
(2015 and 2014) or shorter than one row of lanes (2014-03), March 2014 sub-blocks longer than the
block a main level is resized to, and March 2014 sizes whose 32-bit products wrap.

Two kinds of parameter sets are deterministic but weak, and are rejected unless ``strict=False``:

* 2015 and 2014: the memory of ``mem_cost`` is too small for four blocks in each of the
  ``parallelism`` regions, so no level does any memory-hard work and the result is a plain chain of
  hashes (for example ``mem_cost`` 6 with the default 16 KiB blocks and parallelism 2).
* 2014-03: ``hash_size`` of 256 bytes or more.  The reference passes the size through an 8-bit
  parameter, so only the first ``hash_size % 256`` bytes of the output depend on the memory-hard
  work (none at all for multiples of 256).  With ``strict=False`` this behaviour is reproduced bit
  for bit, for compatibility with the reference's outputs.

``strict=False`` exists to reproduce published known-answer vectors; it never admits a parameter set
whose output would be undefined.

Every other integer argument of the library is checked with :func:`check_int`, and every
parameter error is raised by :func:`refuse`, so all of them name the argument and its range alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn, TypeGuard

from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASH_TYPES, HASHES

__all__ = [
    "BOUNDS",
    "VARIANTS",
    "Params",
    "check_int",
    "check_update",
    "refuse",
    "resize_2014_03",
]

#: The three published versions of the algorithm.
VARIANTS = ("2015", "2014", "2014-03")

#: Static inclusive bounds of every integer parameter.  Limits that depend on other parameters
#: (lanes against the digest, sizes against each other, memory against parallelism) are derived from
#: these in ``Params.__post_init__``.
BOUNDS: dict[str, tuple[int, int]] = {
    "mem_cost": (0, 30),
    "start_mem_cost": (0, 30),
    "time_cost": (0, 30),
    "multiplies": (0, 8),
    "lanes": (1, 16),
    "parallelism": (1, 255),
    "block_size": (32, 1 << 20),
    "sub_block_size": (4, 1 << 20),
    "overwrite_cost": (0, 255),
    "hash_size": (1, 1 << 20),
}

#: The largest hash_size the 2014-03 version handles without its 8-bit truncation.
MAX_STRICT_HASH_SIZE = 255

#: March 2014 computes parallelism * 256 * blocklen in 32 bits; this bound on
#: parallelism * block_size (bytes) keeps that product below 2**32.
MAX_PARALLEL_BYTES_2014_03 = 1 << 26

#: Blocks per region that the March 2014 resizing aims for.
MIN_BLOCKS_2014_03 = 256

#: The smallest block length (in words) the March 2014 resizing shrinks a block to.
MIN_RESIZED_BLOCKLEN_2014_03 = 16

#: Which variants have each optional parameter.
_HAS = {
    "time_cost": ("2014", "2014-03"),
    "overwrite_cost": ("2015", "2014"),
    "side_channel_resistant": ("2015",),
    "hash_size": ("2014-03",),
}

_DEFAULT_TIME_COST = 0
_DEFAULT_OVERWRITE_COST = 6
_DEFAULT_HASH_SIZE = 32


#: The most characters of a refused value quoted in an error message.
_SHOWN_CHARS = 60


def refuse(name: str, allowed: str, value: object) -> NoReturn:
    """Raise :class:`~twocats.exceptions.InvalidParametersError` for the argument ``name``.

    The message reads ``"<name> must be <allowed>; got <value>"``.  The refused value is quoted
    shortened (an integer of more than 64 bits by its size, anything else to 60 characters), so
    no message grows with its input.  Never pass a secret as ``value``.
    """
    if isinstance(value, int) and value.bit_length() > 64:
        # Python refuses to print integers of thousands of digits; no message needs them.
        shown = f"an integer of {value.bit_length()} bits"
    else:
        shown = repr(value)
    if len(shown) > _SHOWN_CHARS:
        shown = shown[: _SHOWN_CHARS - 3] + "..."
    raise InvalidParametersError(f"{name} must be {allowed}; got {shown}")


def check_int(
    name: str, value: object, low: int, high: int | None = None, *, allowed: str | None = None
) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) from ``low`` to ``high``; else refuse.

    ``high`` None sets no upper bound.  The message (see :func:`refuse`) names ``name`` and the
    range, ``an integer from 1 to 255`` or ``an integer of at least 1``; ``allowed`` replaces
    that wording where an argument is described otherwise (say, with its unit).
    """
    if not _is_int(value) or value < low or (high is not None and value > high):
        refuse(name, _int_range(low, high) if allowed is None else allowed, value)
    return value


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_range(low: int, high: int | None) -> str:
    return f"an integer of at least {low}" if high is None else f"an integer from {low} to {high}"


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _range(name: str) -> str:
    return _int_range(*BOUNDS[name])


@dataclass(frozen=True)
class Params:
    """A complete, validated TwoCats parameter set.

    ``mem_cost`` is the stopMemCost of the specification: the work memory is ``2**mem_cost`` KiB.
    ``block_size`` and ``sub_block_size`` are in bytes.  See the module documentation for the
    variants, the parameters each one has, and ``strict``.

    ``start_mem_cost`` left out is ``mem_cost``, and :func:`dataclasses.replace` copies that value
    like any other: change the memory of a parameter set with both,
    ``replace(params, mem_cost=16, start_mem_cost=16)``.  With ``mem_cost`` alone a larger memory
    gives hashes shaped like ones upgraded from the old memory cost, and a smaller one is refused.
    """

    variant: str = "2015"
    hash_type: str = "blake2s"
    mem_cost: int = 20
    start_mem_cost: int | None = None
    time_cost: int | None = None
    multiplies: int = 2
    lanes: int = 8
    parallelism: int = 2
    block_size: int = 16384
    sub_block_size: int = 64
    overwrite_cost: int | None = None
    side_channel_resistant: bool = False
    hash_size: int | None = None
    strict: bool = field(default=True, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        self._check_kinds()
        self._check_variant_fields()
        self._resolve_defaults()
        self._check_ranges()
        self._check_combinations()

    # -- properties --------------------------------------------------------------------------------

    @property
    def hash_code(self) -> int:
        """The integer code of the hash type (0 blake2s, 1 blake2b, 2 sha256, 3 sha512)."""
        return HASH_TYPES.index(self.hash_type)

    @property
    def digest_size(self) -> int:
        """Digest size S of the hash type in bytes (32 or 64)."""
        return HASHES[self.hash_code].digest_size

    @property
    def state_words(self) -> int:
        """W = S / 4: the number of 32-bit words of a region state."""
        return self.digest_size // 4

    @property
    def memory_bytes(self) -> int:
        """The work memory the reference allocates: ``1024 << mem_cost`` bytes."""
        return 1024 << self.mem_cost

    @property
    def output_size(self) -> int:
        """Length in bytes of the derived output (the digest size, or hash_size for 2014-03)."""
        return self.hash_size if self.hash_size is not None else self.digest_size

    # -- validation --------------------------------------------------------------------------------

    def _check_kinds(self) -> None:
        """Reject values of the wrong type before anything compares them."""
        if self.variant not in VARIANTS:
            refuse("variant", "one of " + ", ".join(repr(v) for v in VARIANTS), self.variant)
        if self.hash_type not in HASH_TYPES:
            refuse("hash_type", "one of " + ", ".join(HASH_TYPES), self.hash_type)
        for name in BOUNDS:
            value = getattr(self, name)
            optional = name in ("start_mem_cost", "time_cost", "overwrite_cost", "hash_size")
            if value is None and optional:
                continue
            if not _is_int(value):
                refuse(name, _range(name), value)
        for name in ("side_channel_resistant", "strict"):
            if not isinstance(getattr(self, name), bool):
                refuse(name, "True or False", getattr(self, name))

    def _check_variant_fields(self) -> None:
        """Reject a parameter that the chosen variant does not have."""
        for name, variants in _HAS.items():
            if self.variant in variants:
                continue
            value = getattr(self, name)
            if value is None or value is False:
                continue
            has = " and ".join(repr(v) for v in variants)
            absent = "False" if name == "side_channel_resistant" else "None"
            refuse(name, f"{absent} for variant {self.variant!r} (only {has} have it)", value)

    def _resolve_defaults(self) -> None:
        if self.start_mem_cost is None:
            object.__setattr__(self, "start_mem_cost", self.mem_cost)
        if self.time_cost is None and self.variant in _HAS["time_cost"]:
            object.__setattr__(self, "time_cost", _DEFAULT_TIME_COST)
        if self.overwrite_cost is None and self.variant in _HAS["overwrite_cost"]:
            object.__setattr__(self, "overwrite_cost", _DEFAULT_OVERWRITE_COST)
        if self.hash_size is None and self.variant in _HAS["hash_size"]:
            object.__setattr__(self, "hash_size", _DEFAULT_HASH_SIZE)

    def _check_ranges(self) -> None:
        """Check every integer against the static bounds table and the power-of-two rules."""
        for name, (low, high) in BOUNDS.items():
            value = getattr(self, name)
            if value is not None:
                check_int(name, value, low, high)
        words = self.state_words
        if not (_is_power_of_two(self.lanes) and self.lanes <= words):
            refuse("lanes", f"a power of two from 1 to {words} for {self.hash_type}", self.lanes)
        low_block = 32 if self.variant == "2014-03" else self.digest_size
        high_block = BOUNDS["block_size"][1]
        if not (_is_power_of_two(self.block_size) and low_block <= self.block_size):
            extra = "" if self.variant == "2014-03" else f" (the {self.hash_type} digest size)"
            refuse(
                "block_size",
                f"a power of two from {low_block}{extra} to {high_block} bytes",
                self.block_size,
            )

    def _check_combinations(self) -> None:
        """Check the limits that tie parameters together."""
        assert self.start_mem_cost is not None
        if self.start_mem_cost > self.mem_cost:
            refuse("start_mem_cost", f"from 0 to mem_cost ({self.mem_cost})", self.start_mem_cost)
        if self.variant == "2014-03":
            self._check_2014_03()
            return
        low_sub = 4 * self.lanes
        if not (_is_power_of_two(self.sub_block_size) and low_sub <= self.sub_block_size):
            refuse(
                "sub_block_size",
                f"a power of two from 4 * lanes ({low_sub}) to block_size ({self.block_size})",
                self.sub_block_size,
            )
        if self.sub_block_size > self.block_size:
            refuse(
                "sub_block_size",
                f"a power of two from 4 * lanes ({low_sub}) to block_size ({self.block_size})",
                self.sub_block_size,
            )
        if self.strict:
            self._check_memory_hard()

    def _check_memory_hard(self) -> None:
        """Require at least four blocks per region at mem_cost, so the hash is memory-hard."""
        region_bytes = self.memory_bytes // 4
        if region_bytes < self.block_size:
            refuse(
                "block_size",
                f"a power of two from {self.digest_size} to {region_bytes} bytes for mem_cost "
                f"{self.mem_cost} (four blocks per region)",
                self.block_size,
            )
        most = region_bytes // self.block_size
        if self.parallelism > most:
            refuse(
                "parallelism",
                f"from 1 to {most} for mem_cost {self.mem_cost} and block_size {self.block_size} "
                "(four blocks per region; use strict=False to accept a hash without memory work)",
                self.parallelism,
            )

    def _check_2014_03(self) -> None:
        """The March 2014 rules: hash_size, the 32-bit resizing and the resized sub-blocks."""
        assert self.hash_size is not None
        assert self.start_mem_cost is not None
        if not (_is_power_of_two(self.sub_block_size) and self.sub_block_size >= 32):
            refuse(
                "sub_block_size",
                f"a power of two from 32 to block_size ({self.block_size})",
                self.sub_block_size,
            )
        if self.sub_block_size > self.block_size:
            refuse(
                "sub_block_size",
                f"a power of two from 32 to block_size ({self.block_size})",
                self.sub_block_size,
            )
        if 4 * self.lanes > self.block_size:
            refuse(
                "lanes",
                f"a power of two from 1 to block_size / 4 ({self.block_size // 4})",
                self.lanes,
            )
        high_hash = MAX_STRICT_HASH_SIZE if self.strict else self.block_size
        high_hash = min(high_hash, self.block_size)
        if self.hash_size > high_hash:
            note = " (use strict=False for the reference's 8-bit truncation)" if self.strict else ""
            refuse("hash_size", f"from 1 to {high_hash}{note}", self.hash_size)
        most = MAX_PARALLEL_BYTES_2014_03 // self.block_size - 1
        if self.parallelism > most:
            refuse(
                "parallelism",
                f"from 1 to {most} for block_size {self.block_size} (32-bit sizing)",
                self.parallelism,
            )
        _check_main_levels(self, self.start_mem_cost)


def check_update(params: Params, old_mem_cost: int) -> None:
    """Validate an update of a stored output made with ``old_mem_cost`` to ``params.mem_cost``.

    ``old_mem_cost`` is the mem_cost the stored output was derived with; the update runs the levels
    ``old_mem_cost + 1 .. params.mem_cost``, so it must be smaller than ``params.mem_cost``.
    """
    if not _is_int(old_mem_cost):
        refuse("old_mem_cost", _int_range(0, params.mem_cost - 1), old_mem_cost)
    if not 0 <= old_mem_cost < params.mem_cost:
        refuse("old_mem_cost", f"from 0 to mem_cost - 1 ({params.mem_cost - 1})", old_mem_cost)
    _check_main_levels(params, old_mem_cost + 1)


def resize_2014_03(
    mem_cost: int, parallelism: int, blocklen: int, sub_blocklen: int
) -> tuple[int, int, int, int]:
    """Return ``(parallelism, blocklen, sub_blocklen, blocks_per_region)`` of a March 2014 level.

    The product in the loop test is taken mod 2**32 as in the reference; parameter validation
    rejects every parameter set for which that wrap could matter.
    """
    memlen = 256 << mem_cost
    bpt = 4 * (memlen // (4 * parallelism * blocklen))
    if bpt < MIN_BLOCKS_2014_03:
        bpt = MIN_BLOCKS_2014_03
        while (parallelism * bpt * blocklen) & 0xFFFFFFFF > memlen:
            if blocklen > MIN_RESIZED_BLOCKLEN_2014_03:
                blocklen //= 2
            elif parallelism > 1:
                parallelism = max(1, memlen // (bpt * blocklen))
            else:
                bpt = memlen // (parallelism * blocklen)
    # The reference meant to clamp the sub-block to the block; it sets it to the block instead
    # whenever the block is longer, so the sub-block randomisation is off (§7 of the 2014-03 spec).
    if blocklen > sub_blocklen:
        sub_blocklen = blocklen
    return parallelism, blocklen, sub_blocklen, bpt


def _check_main_levels(params: Params, first_main: int) -> None:
    """Check that every main level from ``first_main`` to ``mem_cost`` is well defined.

    For 2014-03 the password-dependent slices of a main level read sub-blocks of the requested
    size from blocks that the resizing may have shrunk; a sub-block longer than the resized block
    leaves memory unwritten, so it is rejected.  The other variants need no check here.
    """
    if params.variant != "2014-03":
        return
    for m in range(first_main, params.mem_cost + 1):
        _, blocklen, sub_blocklen, _ = resize_2014_03(
            m, params.parallelism, params.block_size // 4, params.sub_block_size // 4
        )
        if sub_blocklen > blocklen:
            refuse(
                "sub_block_size",
                f"at most {4 * blocklen} bytes, the block size level {m} is resized to",
                params.sub_block_size,
            )
