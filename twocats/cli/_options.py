"""Options shared by the twocats commands: sizes, durations and work, backends, JSON, limits and
the TwoCats parameters.

Nothing here imports numpy or numba: ``twocats --help`` and argument parsing must stay instant.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import click

from twocats._units import format_size
from twocats.cli._common import F, UsageFailure
from twocats.cli._limits import verify_limits
from twocats.hashes import HASH_TYPES
from twocats.params import BOUNDS, VARIANTS, Params

if TYPE_CHECKING:
    from twocats.password import Target

    # click.ParamType is generic only from click 8.2 on; subscript it for the type checker only.
    _IntParam = click.ParamType[int]
    _FloatParam = click.ParamType[float]
else:
    _IntParam = _FloatParam = click.ParamType

# Sizes and durations ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Quantity:
    """How to read one kind of number with a unit, and what to say when it is wrong.

    ``pattern`` matches the number and the unit, ``units`` maps a unit (in lower case) to its
    scale in the base unit.
    """

    noun: str
    pattern: re.Pattern[str]
    units: Mapping[str, float]
    expected: str
    too_big: str

    def read(
        self,
        kind: _IntParam | _FloatParam,
        value: Any,
        param: click.Parameter | None,
        ctx: click.Context | None,
    ) -> float:
        """Return `value` in the base unit (bytes, seconds), or fail through `kind`."""
        if str(value).strip().startswith("-"):
            kind.fail(f"a {self.noun} must be positive", param, ctx)
        match = self.pattern.fullmatch(str(value))
        unit = self.units.get(match.group(2).lower()) if match else None
        if match is None or unit is None:
            kind.fail(self.expected, param, ctx)
        scaled = float(match.group(1)) * unit
        if not math.isfinite(scaled):
            kind.fail(self.too_big, param, ctx)
        if scaled <= 0:
            kind.fail(f"a {self.noun} must be positive", param, ctx)
        return scaled


_SIZES: Final = _Quantity(
    noun="size",
    pattern=re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*"),
    units={
        "": 1,
        "b": 1,
        "k": 1 << 10,
        "kib": 1 << 10,
        "kb": 1000,
        "m": 1 << 20,
        "mib": 1 << 20,
        "mb": 1000**2,
        "g": 1 << 30,
        "gib": 1 << 30,
        "gb": 1000**3,
        "t": 1 << 40,
        "tib": 1 << 40,
        "tb": 1000**4,
    },
    expected="expected a size such as 1GiB, 512MiB or 2GB",
    too_big="the size is too large",
)
_DURATIONS: Final = _Quantity(
    noun="duration",
    pattern=re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s)\s*"),
    units={"us": 1e-6, "ms": 1e-3, "s": 1.0},
    expected="expected a duration with a unit, such as 250ms or 0.5s",
    too_big="the duration is too long",
)


class SizeType(_IntParam):
    """A byte count such as ``1GiB``, ``512MiB``, ``64M`` (binary) or ``2GB`` (decimal)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        size = int(_SIZES.read(self, value, param, ctx))
        if size <= 0:
            self.fail("a size must be positive", param, ctx)
        return size


class DurationType(_FloatParam):
    """A duration with a unit: ``250ms``, ``0.5s`` or ``800us``; the value is in seconds."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        return _DURATIONS.read(self, value, param, ctx)


class WorkType(_IntParam):
    """An estimated work as CPU time (``250ms``, ``2s``); the value is in work units (CPU ns)."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        return max(1, round(DurationType().convert(value, param, ctx) * 1e9))


SIZE: Final = SizeType()
DURATION: Final = DurationType()
WORK: Final = WorkType()


def max_memory_option(default_help: str) -> Callable[[F], F]:
    """Add ``--max-memory``."""
    return click.option(
        "--max-memory",
        type=SIZE,
        default=None,
        help=f"Refuse to use more memory than this, e.g. 4GiB (default: {default_help}).",
    )


def stored_limits_options(what: str) -> Callable[[F], F]:
    """Add ``--max-memory`` and ``--max-work``, the limits of :func:`verify_limits`, for `what`."""
    from twocats.kdf.limits import MEMORY_RATIO, WORK_RATIO, format_work

    default = verify_limits(None)

    def decorate(function: F) -> F:
        function = click.option(
            "--max-work",
            type=WORK,
            default=None,
            help=f"Refuse {what} whose work is estimated above this CPU time, e.g. 2s (default: "
            f"{format_work(default.max_work)}, {WORK_RATIO:g} times the work of the costliest "
            "built-in profile, or of a default-profile hash at --max-memory where that is more).",
        )(function)
        return click.option(
            "--max-memory",
            type=SIZE,
            default=None,
            help=f"Refuse {what} needing more memory than this, e.g. 2GiB (default: "
            f"{format_size(default.max_memory)}, the memory of the largest built-in profile, or "
            f"{MEMORY_RATIO:g} times that of the default profile where that is more).",
        )(function)

    return decorate


# Parameters ------------------------------------------------------------------------------------

# The options take any integer and show the static range from the one bounds table; Params checks
# the value, and its message names the parameter and its allowed range.

_PARAM_OPTIONS: Final = (
    ("variant", "--variant", click.Choice(VARIANTS), "Algorithm version."),
    ("hash_type", "--hash-type", click.Choice(HASH_TYPES), "Hash function."),
    ("mem_cost", "--mem-cost", click.INT, "Memory is 2**N KiB (20 = 1 GiB)."),
    ("start_mem_cost", "--start-mem-cost", click.INT, "First memory level (up to --mem-cost)."),
    ("time_cost", "--time-cost", click.INT, "Repetitions 2**N (2014 variants)."),
    ("multiplies", "--multiplies", click.INT, "Serial multiplies per lane word."),
    ("lanes", "--lanes", click.INT, "SIMD lanes: a power of two (16 for 64-bit hashes only)."),
    ("parallelism", "--parallelism", click.INT, "Threads (memory regions)."),
    ("block_size", "--block-size", click.INT, "Block size in bytes (power of two)."),
    ("sub_block_size", "--sub-block-size", click.INT, "Sub-block size in bytes (power of two)."),
    ("overwrite_cost", "--overwrite-cost", click.INT, "Overwrite levels (2015, 2014)."),
    ("hash_size", "--hash-size", click.INT, "Output bytes (2014-03 only)."),
)
_PARAM_NAMES: Final = (*(name for name, *_ in _PARAM_OPTIONS), "side_channel_resistant")
# Fields that exist only in some variants; switching variant resets them to the new one's default.
_VARIANT_FIELDS: Final = {
    "time_cost": None,
    "overwrite_cost": None,
    "hash_size": None,
    "side_channel_resistant": False,
}


def params_options(function: F) -> F:
    """Add ``--profile``, ``--params`` and one option per TwoCats parameter."""
    from twocats.profiles import PROFILES

    function = click.option(
        "--side-channel-resistant/--no-side-channel-resistant",
        default=None,
        help="Data-independent addressing in every slice (2015 only).",
    )(function)
    for name, flag, kind, text in reversed(_PARAM_OPTIONS):
        bounds = BOUNDS.get(name)
        metavar = None if bounds is None else f"{bounds[0]}-{bounds[1]}"
        function = click.option(flag, name, type=kind, default=None, metavar=metavar, help=text)(
            function
        )
    function = click.option(
        "--insecure",
        is_flag=True,
        help="Allow the cheapest profile, which offers no protection at all (for tests only).",
    )(function)
    function = click.option(
        "--params",
        "phc_params",
        metavar="PHC",
        default=None,
        help="Start from a PHC parameter string such as 'twocats tune' prints.",
    )(function)
    return click.option(
        "--profile",
        type=click.Choice(list(PROFILES), case_sensitive=False),
        default=None,
        help="Start from a named profile (default: moderate).",
    )(function)


def build_target(options: dict[str, Any]) -> Target:
    """Build the target of an upgrade from the options of :func:`params_options`.

    ``--mem-cost`` alone is a memory cost target, anything else the exact set
    :func:`build_params` builds (see :class:`twocats.password.Target`).  The options are removed.
    """
    from twocats.password import Target

    given = [name for name in _PARAM_NAMES if options.get(name) is not None]
    by_name = options.get("profile") is not None or options.get("phc_params") is not None
    if given == ["mem_cost"] and not by_name:
        mem_cost: int = options["mem_cost"]
        for name in ("profile", "phc_params", "insecure", *_PARAM_NAMES):
            options.pop(name, None)
        return Target.memory(mem_cost)
    return Target.exactly(build_params(options))


def target_given(options: dict[str, Any]) -> bool:
    """Return True if any option of :func:`params_options` names a target."""
    named = ("profile", "phc_params", *_PARAM_NAMES)
    return any(options.get(name) is not None for name in named)


def lost_dollars_hint(name: str, text: str) -> str | None:
    """Return a hint if `text` (given as `name`) looks like a PHC string whose $ signs were lost.

    Inside double quotes the shell replaces ``$twocats``, ``$v`` and ``$m`` by empty variables,
    so ``"$twocats$v=2015$m=12"`` arrives as ``=2015=12`` (and Django's ``twocats$twocats$v=...``
    as ``twocats=2015...``): fields with ``=`` and not one ``$``.
    """
    if "$" in text or "=" not in text:
        return None
    return (
        f"{name} has no $ signs: inside double quotes the shell replaces $v, $m and the like "
        f"by (empty) variables; put {name} in single quotes"
    )


def build_params(options: dict[str, Any]) -> Params:
    """Build Params from the options of :func:`params_options`, removing them from `options`."""
    from twocats.exceptions import InvalidHashError
    from twocats.phc import decode_params
    from twocats.profiles import DEFAULT, PROFILES

    profile = options.pop("profile", None)
    phc_params = options.pop("phc_params", None)
    insecure = options.pop("insecure", False)
    changes = {name: options.pop(name, None) for name in _PARAM_NAMES}
    changes = {name: value for name, value in changes.items() if value is not None}
    if profile is not None and phc_params is not None:
        raise UsageFailure("--profile and --params cannot be used together")
    if profile is not None and profile.lower() == "cheapest" and not insecure:
        raise UsageFailure(
            "the cheapest profile offers no protection at all and is meant for tests; pass "
            "--insecure to use it anyway"
        )
    if phc_params is not None:
        try:
            base = decode_params(phc_params)
        except InvalidHashError as error:
            hint = lost_dollars_hint("--params", phc_params)
            if hint is None:
                raise
            raise UsageFailure(f"{error}; {hint}") from None
    elif profile is not None:
        base = PROFILES[profile.lower()]
    else:
        base = DEFAULT
    fields = dataclasses.asdict(base)
    if changes.get("variant", base.variant) != base.variant:
        fields.update(_VARIANT_FIELDS)
    keeps_start = base.start_mem_cost == base.mem_cost
    if "mem_cost" in changes and "start_mem_cost" not in changes and keeps_start:
        fields["start_mem_cost"] = None
    fields.update(changes)
    return Params(**fields)
