"""Reader for the shared TwoCats known-answer vector schema (JSON lines, one vector per line).

The schema is the one of the team's vector files (``twocats-2015.jsonl``, ``twocats-2014.jsonl``,
``twocats-2014-03.jsonl`` and the reference repository's ``twocats-2015-official.jsonl``): field
names follow the specifications (``startMemCost``, ``blockSize`` in bytes, ...), byte strings are
hex (``password_hex``, ``salt_hex``, ``data_hex``, ``input_hash_hex``, ``output_hex``).  Each record
is dispatched on

* ``algorithm_version``: text starting with "final" (or absent, as in the official file) is the
  2015 algorithm, "timeCost variant" the 2014 one and "March 2014" the 2014-03 one;
* ``api``: the entry point, either the short names of the 2015 file (``extended``, ``client``,
  ``server``, ``update``, ``full``, ``simple``, ``phs``), the C function names of the 2014-03 file,
  or absent for the command-line tool (the extended API with ``memCost`` as start and stop).

A record becomes a :class:`Vector` whose :meth:`Vector.check` runs it on an engine.  Structural
problems (bad JSON, missing fields, bad hex, unknown api) raise :class:`VectorFormatError` while
reading, and that is the only exception reading raises, whatever the text (nesting too deep for
the JSON decoder and integers too long to convert included); parameter problems surface when the
vector runs or its parameters are built, as the usual ``InvalidParametersError``.  Messages quote
values from the file only in ASCII and at most :data:`SHOWN_CHARS` characters of them.

Vectors reproduce the reference's published outputs, so their parameters are built with
``strict=False`` (see :class:`twocats.Params`).  The reference's ``UpdatePassword`` takes
``oldMemCost`` = the stored output's memory cost plus one; :func:`twocats.kdf.update` takes the
stored output's memory cost itself, so the reader subtracts one.
"""

from __future__ import annotations

import hmac
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twocats._bounded_io import read_file_bounded
from twocats.exceptions import TwoCatsError
from twocats.kdf import full_params, phs_params, simple_params
from twocats.params import Params

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine

__all__ = [
    "APIS",
    "Vector",
    "VectorFormatError",
    "load_vectors",
    "parse_vector",
    "read_vectors",
    "selftest_vectors",
]

#: The normalised entry points a vector can name.
APIS = ("extended", "client", "server", "update", "extended+update", "full", "simple", "phs")

#: Every spelling of ``api`` found in the vector files, normalised.
_API_NAMES = {
    None: "extended",
    "extended": "extended",
    "TwoCats_HashPasswordExtended": "extended",
    "client": "client",
    "TwoCats_ClientHashPassword": "client",
    "server": "server",
    "TwoCats_ServerHashPassword": "server",
    "update": "update",
    "TwoCats_UpdatePassword": "update",
    (
        "TwoCats_HashPasswordExtended(start, stop) then "
        "TwoCats_UpdatePassword(oldMemCost, newMemCost)"
    ): "extended+update",
    "full": "full",
    "TwoCats_HashPasswordFull": "full",
    "simple": "simple",
    "TwoCats_HashPassword": "simple",
    "phs": "phs",
    "PHS": "phs",
}

#: Prefixes of ``algorithm_version`` and the variant each one names.
_VERSION_PREFIXES = (("final", "2015"), ("timeCost variant", "2014"), ("March 2014", "2014-03"))

#: Vector fields that map one to one onto Params fields.
_PARAM_FIELDS = (
    ("multiplies", "multiplies"),
    ("lanes", "lanes"),
    ("parallelism", "parallelism"),
    ("blockSize", "block_size"),
    ("subBlockSize", "sub_block_size"),
)

#: The packaged default vectors of ``twocats selftest``.
SELFTEST_RESOURCE = "selftest.jsonl"

#: The most characters of a value from the file quoted in an error message.
SHOWN_CHARS = 40

#: The largest vector file read, in bytes (the largest known file, the reference's, is 1.8 MB);
#: the cap is checked while reading, so ``/dev/zero`` or a FIFO is refused with bounded memory.
MAX_FILE_BYTES = 64 << 20


def _shown(value: str) -> str:
    """A value from the file as messages show it: printable ASCII on one line, never very long.

    Anything else is escaped as in a Python literal, so that a message can always be printed.
    """
    text = ascii(value[:SHOWN_CHARS])[1:-1]
    return text + "..." if len(value) > SHOWN_CHARS else text


class VectorFormatError(TwoCatsError, ValueError):
    """A vector file or record does not follow the schema; the message says where."""


@dataclass(frozen=True)
class Vector:
    """One known-answer vector, ready to run.

    ``settings`` holds the Params fields (extended, client, server, update) or the arguments of the
    convenience API (full, simple, phs).  ``update_to`` is the new mem_cost of an
    ``extended+update`` chain, and ``old_mem_cost`` the stored output's mem_cost for updates.
    """

    id: str
    variant: str
    api: str
    hash_type: str
    settings: Mapping[str, Any] = field(repr=False)
    expected: bytes = field(repr=False)
    password: bytes = field(default=b"", repr=False)
    salt: bytes = field(default=b"", repr=False)
    data: bytes = field(default=b"", repr=False)
    stored: bytes = field(default=b"", repr=False)
    old_mem_cost: int | None = None
    update_to: int | None = None

    def __str__(self) -> str:
        return f"{_shown(self.id)} ({self.variant} {self.api} {_shown(self.hash_type)})"

    def params(self) -> Params:
        """The parameters of the (first) derivation; raises InvalidParametersError if invalid."""
        kwargs = dict(self.settings)
        if self.api == "full":
            return full_params(variant=self.variant, hash_type=self.hash_type, **kwargs)
        if self.api == "simple":
            return simple_params(variant=self.variant, hash_type=self.hash_type, **kwargs)
        if self.api == "phs":
            return phs_params(variant=self.variant, **kwargs)
        return Params(variant=self.variant, hash_type=self.hash_type, strict=False, **kwargs)

    def update_params(self) -> Params:
        """The parameters of the update step of an ``extended+update`` chain."""
        kwargs = dict(self.settings)
        kwargs["mem_cost"] = self.update_to
        return Params(variant=self.variant, hash_type=self.hash_type, strict=False, **kwargs)

    def memory_bytes(self) -> int:
        """The work memory (bytes) running this vector needs."""
        from twocats.kdf.engine import Engine

        params = self.params()
        if self.api == "server":
            return 0
        if self.api == "update":
            return Engine.memory_required(params, old_mem_cost=self.old_mem_cost)
        needed = Engine.memory_required(params)
        if self.api == "extended+update":
            later = Engine.memory_required(self.update_params(), old_mem_cost=self.old_mem_cost)
            needed = max(needed, later)
        return needed

    def derivations(self) -> list[tuple[Params, int | None]]:
        """The parameters of each derivation this vector runs, with the old mem_cost of updates.

        A ``server`` vector runs no derivation, only the final hashing.
        """
        if self.api == "server":
            return []
        if self.api == "update":
            return [(self.params(), self.old_mem_cost)]
        if self.api == "extended+update":
            return [(self.params(), None), (self.update_params(), self.old_mem_cost)]
        return [(self.params(), None)]

    def compute(self, engine: Engine) -> bytes:
        """Run the vector's entry point on ``engine`` and return its output."""
        params = self.params()
        if self.api == "client":
            return engine.client(self.password, self.salt, params, data=self.data)
        if self.api == "server":
            return engine.server(self.stored, params)
        if self.api == "update":
            assert self.old_mem_cost is not None
            return engine.update(self.stored, params, self.old_mem_cost)
        output = engine.derive(self.password, self.salt, params, data=self.data)
        if self.api == "extended+update":
            assert self.old_mem_cost is not None
            return engine.update(output, self.update_params(), self.old_mem_cost)
        return output

    def check(self, engine: Engine) -> bool:
        """Return whether ``engine`` reproduces the expected output (compared in constant time)."""
        return hmac.compare_digest(self.compute(engine), self.expected)


# -- parsing ---------------------------------------------------------------------------------------


class _Record:
    """Typed access to the fields of one JSON record, with errors that say where."""

    def __init__(self, record: Mapping[str, Any], where: str) -> None:
        self.record = record
        self.where = where

    def error(self, message: str) -> VectorFormatError:
        return VectorFormatError(f"{self.where}: {message}")

    def has(self, name: str) -> bool:
        return self.record.get(name) is not None

    def integer(self, name: str) -> int:
        value = self.record.get(name)
        if value is None:
            raise self.error(f"missing field {name!r}")
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"field {name!r} must be an integer")
        return value

    def flag(self, name: str) -> bool:
        value = self.record.get(name, False)
        if not isinstance(value, bool):
            raise self.error(f"field {name!r} must be true or false")
        return value

    def text(self, name: str) -> str:
        value = self.record.get(name)
        if value is None:
            raise self.error(f"missing field {name!r}")
        if not isinstance(value, str):
            raise self.error(f"field {name!r} must be a string")
        return value

    def hexbytes(self, name: str, *, required: bool = True) -> bytes:
        if not self.has(name):
            if required:
                raise self.error(f"missing field {name!r}")
            return b""
        try:
            return bytes.fromhex(self.text(name))
        except ValueError:
            raise self.error(f"field {name!r} is not valid hex") from None


def _variant(record: _Record) -> str:
    version = record.record.get("algorithm_version")
    if version is None:
        return "2015"
    if not isinstance(version, str):
        raise record.error("field 'algorithm_version' must be a string")
    if version in ("2015", "2014", "2014-03"):
        return version
    for prefix, variant in _VERSION_PREFIXES:
        if version.startswith(prefix):
            return variant
    raise record.error(f"unknown algorithm_version '{_shown(version)}'")


def _api(record: _Record) -> str:
    name = record.record.get("api")
    if name is not None and not isinstance(name, str):
        raise record.error("field 'api' must be a string")
    api = _API_NAMES.get(name)
    if api is None:
        raise record.error(f"unknown api '{_shown(str(name))}'")
    return api


def _settings(record: _Record, variant: str, *, costs: bool = True) -> dict[str, Any]:
    """Collect the Params fields of an extended-style record."""
    settings: dict[str, Any] = {}
    if costs:
        if record.has("startMemCost") or record.has("stopMemCost"):
            settings["start_mem_cost"] = record.integer("startMemCost")
            settings["mem_cost"] = record.integer("stopMemCost")
        else:
            settings["mem_cost"] = record.integer("memCost")
    for source, target in _PARAM_FIELDS:
        if record.has(source):
            settings[target] = record.integer(source)
    if variant != "2015" and record.has("timeCost"):
        settings["time_cost"] = record.integer("timeCost")
    if variant != "2014-03" and record.has("overwriteCost"):
        settings["overwrite_cost"] = record.integer("overwriteCost")
    if variant == "2015":
        settings["side_channel_resistant"] = record.flag("sideChannelResistant")
    if variant == "2014-03" and record.has("hashSize"):
        settings["hash_size"] = record.integer("hashSize")
    return settings


def _reference_old_mem_cost(record: _Record) -> int:
    """Convert the reference's oldMemCost (stored mem_cost plus one) to the stored mem_cost."""
    return record.integer("oldMemCost") - 1


def _password_only_settings(record: _Record, api: str) -> dict[str, Any]:
    """The settings of the reference's APIs that take a password and a salt and nothing else."""
    if api == "full":
        return {
            "mem_cost": record.integer("memCost"),
            "parallelism": record.integer("parallelism"),
            "side_channel_resistant": record.flag("sideChannelResistant"),
        }
    if api == "simple":
        return {"mem_cost": record.integer("memCost")}
    return {
        "t_cost": record.integer("t_cost"),
        "m_cost": record.integer("m_cost"),
        "outlen": record.integer("outlen"),
    }


def parse_vector(raw: Mapping[str, Any], *, where: str = "vector") -> Vector:
    """Turn one decoded JSON record into a :class:`Vector` (``where`` prefixes error messages)."""
    if not isinstance(raw, Mapping):
        raise VectorFormatError(f"{where}: a vector must be a JSON object")
    record = _Record(raw, where)
    ident = where
    if record.has("id"):
        ident = record.text("id")
        record.where = f"{where} ({_shown(ident)})"
    variant = _variant(record)
    api = _api(record)
    hash_type = record.text("hash_type")
    expected = record.hexbytes("output_hex")
    common: dict[str, Any] = {
        "id": ident,
        "variant": variant,
        "api": api,
        "hash_type": hash_type,
        "expected": expected,
    }
    if api == "server":
        stored = record.hexbytes("input_hash_hex")
        settings: dict[str, Any] = {}
        if variant == "2014-03":
            settings["hash_size"] = len(stored)
        return Vector(settings=settings, stored=stored, **common)
    if api == "update":
        settings = _settings(record, variant, costs=False)
        settings["mem_cost"] = record.integer("newMemCost")
        return Vector(
            settings=settings,
            stored=record.hexbytes("input_hash_hex"),
            old_mem_cost=_reference_old_mem_cost(record),
            **common,
        )
    password = record.hexbytes("password_hex")
    salt = record.hexbytes("salt_hex")
    if api in ("full", "simple", "phs"):
        settings = _password_only_settings(record, api)
        return Vector(settings=settings, password=password, salt=salt, **common)
    data = record.hexbytes("data_hex", required=False)
    if api == "extended+update":
        return Vector(
            settings=_settings(record, variant),
            data=data,
            old_mem_cost=_reference_old_mem_cost(record),
            update_to=record.integer("newMemCost"),
            password=password,
            salt=salt,
            **common,
        )
    return Vector(
        settings=_settings(record, variant), data=data, password=password, salt=salt, **common
    )


def read_vectors(lines: Iterable[str], *, source: str = "vectors") -> list[Vector]:
    """Parse JSON lines (blank lines are ignored) into vectors."""
    vectors = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise VectorFormatError(f"{where}: not valid JSON ({error.msg})") from None
        except ValueError:
            # The decoder refuses integers of thousands of digits with a plain ValueError.
            raise VectorFormatError(f"{where}: a number is too long") from None
        except RecursionError:
            raise VectorFormatError(f"{where}: nested too deeply") from None
        vectors.append(parse_vector(raw, where=where))
    if not vectors:
        raise VectorFormatError(f"{source}: contains no vectors")
    return vectors


def load_vectors(path: str | Path) -> list[Vector]:
    """Read a JSON-lines vector file of at most :data:`MAX_FILE_BYTES` bytes."""
    path = Path(path)
    try:
        raw = read_file_bounded(path, MAX_FILE_BYTES)
    except OSError as error:
        raise VectorFormatError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise VectorFormatError(f"{path}: is not UTF-8 text") from None
    # Lines end as in a file opened in text mode: at \n, \r or \r\n.
    return read_vectors(io.StringIO(text, newline=None), source=path.name)


def selftest_vectors() -> list[Vector]:
    """The packaged default vectors of ``twocats selftest`` (a subset of the project's own)."""
    text = resources.files("twocats.kdf").joinpath(SELFTEST_RESOURCE).read_text(encoding="utf-8")
    return read_vectors(text.splitlines(), source=SELFTEST_RESOURCE)
