"""Graph names as the command line writes them, and the builder each one stands for.

* ``argon2d``, ``argon2i``, ``argon2id``, optionally with ``:t=T,lanes=L,v=V`` (default 1 pass,
  1 lane, version 1.3; ``v=1.2.1`` replaces the overwritten block instead of XORing it in);
* ``twocats``, optionally with ``:PROFILE`` (a name of :data:`twocats.profiles.PROFILES`, default
  ``moderate``) or ``:$twocats$...`` (a PHC parameter string); a PHC string alone works too;
* ``power:GAMMA``, the generic one-pass graph with reference distance ``U**GAMMA``.

``blocks`` sizes the Argon2 and power graphs (default :data:`DEFAULT_BLOCKS`).  A TwoCats graph
has the blocks its parameters give; with ``blocks`` its memory cost (and start cost, alike) is
moved so that its largest level has that many blocks, which must then be a power of two.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Final

from twocats.exceptions import InvalidHashError, InvalidParametersError
from twocats.kdf import geometry
from twocats.kdf.geometry import LevelPlan
from twocats.params import Params
from twocats.perf.tradeoff import graphs
from twocats.perf.tradeoff.graphs import Graph

__all__ = ["DEFAULT_BLOCKS", "GRAPH_FORMS", "GraphSpec", "parse_graph", "twocats_params"]

#: Blocks of an Argon2 or power graph when none are asked for: 64 MiB of 1 KiB blocks.
DEFAULT_BLOCKS: Final = 1 << 16

#: The forms a graph name takes, for messages.
GRAPH_FORMS: Final = (
    "argon2d, argon2i or argon2id (optionally :t=T,lanes=L,v=1.3|1.2.1), twocats (optionally "
    ":PROFILE or :$twocats$... parameters) or power:GAMMA"
)


@dataclasses.dataclass(frozen=True)
class GraphSpec:
    """A parsed graph name: what to build for each seed."""

    name: str
    build: Callable[[int], Graph]


def _refuse(text: str, why: str) -> InvalidParametersError:
    return InvalidParametersError(f"GRAPH {text!r}: {why}; GRAPH is one of {GRAPH_FORMS}")


def _argon2_options(text: str, options: str) -> tuple[int, int, str]:
    """Read ``t=T,lanes=L,v=V`` (any may be left out)."""
    values = {"t": 1, "lanes": 1}
    version = "1.3"
    for item in filter(None, options.split(",")):
        key, _, value = item.partition("=")
        if key == "v":
            if value not in graphs.ARGON2_VERSIONS:
                raise _refuse(text, f"v must be one of {', '.join(graphs.ARGON2_VERSIONS)}")
            version = value
            continue
        if key not in values or not value.isdigit():
            raise _refuse(text, f"{item!r} is not t=T, lanes=L or v=V")
        values[key] = int(value)
    if not 1 <= values["t"] <= 16:
        raise _refuse(text, f"t must be from 1 to 16; got {values['t']}")
    if not 1 <= values["lanes"] <= 64:
        raise _refuse(text, f"lanes must be from 1 to 64; got {values['lanes']}")
    return values["t"], values["lanes"], version


def twocats_params(text: str, blocks: int | None) -> Params:
    """The TwoCats parameters a graph name's profile or PHC string names, sized to ``blocks``."""
    from twocats.phc import decode_params
    from twocats.profiles import MODERATE, PROFILES

    if not text:
        params = MODERATE
    elif text.startswith("$twocats$"):
        try:
            params = decode_params(text)
        except InvalidHashError as error:
            raise InvalidParametersError(f"GRAPH twocats parameters: {error}") from None
    elif text in PROFILES:
        params = PROFILES[text]
    else:
        names = ", ".join(PROFILES)
        raise InvalidParametersError(
            f"GRAPH twocats:{text}: not a profile ({names}) nor a $twocats$ parameter string"
        )
    if blocks is None:
        return params
    largest = max((plan.parallelism * plan.blocks_per_region for plan in _plans(params)), default=0)
    if largest == 0 or blocks & (blocks - 1):
        raise InvalidParametersError(
            f"--blocks must be a power of two for a TwoCats graph; got {blocks}"
        )
    shift = int(math.log2(blocks)) - int(math.log2(largest))
    start = params.start_mem_cost if params.start_mem_cost is not None else params.mem_cost
    try:
        return dataclasses.replace(
            params, mem_cost=params.mem_cost + shift, start_mem_cost=start + shift
        )
    except InvalidParametersError as error:
        raise InvalidParametersError(f"--blocks {blocks} for this TwoCats graph: {error}") from None


def _plans(params: Params) -> list[LevelPlan]:
    return [plan for plan in geometry.plan(params) if plan.fills]


def parse_graph(text: str, blocks: int | None = None) -> GraphSpec:
    """Return the builder that ``text`` names (see the module text); raise for anything else."""
    size = DEFAULT_BLOCKS if blocks is None else blocks
    head, _, options = text.partition(":")
    if head in graphs.ARGON2_KINDS:
        passes, lanes, version = _argon2_options(text, options)
        if size < 8 * lanes:
            raise InvalidParametersError(
                f"--blocks must be at least 8 per lane ({8 * lanes}) for {text}; got {size}"
            )
        suffix = "" if version == "1.3" else f",v={version}"
        return GraphSpec(
            f"{head}:t={passes},lanes={lanes}{suffix}",
            functools.partial(graphs.argon2, head, size, passes, lanes, version=version),
        )
    if head == "power":
        try:
            gamma = float(options)
        except ValueError:
            raise _refuse(text, "GAMMA must be a number, as in power:2") from None
        if not (math.isfinite(gamma) and 0.25 <= gamma <= 16):
            raise _refuse(text, f"GAMMA must be from 0.25 to 16; got {options}")
        return GraphSpec(f"power:{gamma:g}", functools.partial(graphs.power, gamma, size))
    if head == "twocats" or text.startswith("$twocats$"):
        params = twocats_params(options if head == "twocats" else text, blocks)
        return GraphSpec(graphs.twocats_name(params), functools.partial(graphs.twocats, params))
    raise _refuse(text, "unknown graph")
