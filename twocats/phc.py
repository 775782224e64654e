"""Strict, canonical PHC strings for TwoCats hashes.

A TwoCats hash string has five ``$``-separated fields::

    $twocats$v=<variant>$<parameters>$<salt>$<hash>

* ``v`` is the algorithm version: ``2015`` (the final algorithm), ``2014`` (the timeCost variant) or
  ``201403`` (the March 2014 version; the PHC format allows only digits in a version, so the
  ``"2014-03"`` of :class:`~twocats.params.Params` is written without its hyphen).
* ``<parameters>`` is a comma-separated list of ``key=value`` pairs in the fixed order of the
  table below.  ``m`` is always present; every other parameter is omitted when it has its default
  value, and a parameter the variant does not have never appears.
* ``<salt>`` and ``<hash>`` are standard base64 (RFC 4648 §4 alphabet) without ``=`` padding, and
  the unused trailing bits of the last character are zero.

====  ========================  ==========================  ==============  ==================
key   Params field              value                       default         variants
====  ========================  ==========================  ==============  ==================
h     hash_type                 blake2s, blake2b, sha256,   blake2s         all
                                sha512
m     mem_cost                  decimal (required)          none            all
s     start_mem_cost            decimal                     equal to ``m``  all
t     time_cost                 decimal                     0               2014, 2014-03
x     multiplies                decimal                     2               all
l     lanes                     decimal                     8               all
p     parallelism               decimal                     2               all
b     block_size (bytes)        decimal                     16384           all
sb    sub_block_size (bytes)    decimal                     64              all
o     overwrite_cost            decimal                     6               2015, 2014
r     side_channel_resistant    ``1``                       0 (off)         2015
d     hash_size (bytes)         decimal                     32              2014-03
====  ========================  ==========================  ==============  ==================

The defaults are fixed here, independently of :class:`~twocats.params.Params`, so that the meaning
of a stored string can never change.  Decimals are canonical: ``0`` or a digit 1-9 followed by at
most six more digits (no sign, no leading zeros, no spaces).  The value ranges are those of
:class:`~twocats.params.Params`.  Salts are :data:`MIN_SALT_BYTES` to :data:`MAX_SALT_BYTES` bytes.
The hash is the algorithm's whole output: 32 bytes for blake2s and sha256, 64 bytes for blake2b and
sha512, and ``d`` bytes (:data:`MIN_OUTPUT_BYTES` to 255) for the March 2014 version.  Parameter
sets that :class:`~twocats.params.Params` accepts only with ``strict=False`` cannot be stored.

Decoding accepts exactly the strings :func:`encode` produces, so decoding and re-encoding gives the
same string back.  Anything else (other fields, other key orders, repeated keys, default values
written out, padding, non-zero trailing bits, non-ASCII text, out-of-range values) raises
:class:`~twocats.exceptions.InvalidHashError`, and that is the only exception decoding ever raises.
Error messages name the field or parameter at fault but never repeat the input, which might be a
password pasted into the wrong place.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Final

from twocats.exceptions import InvalidHashError
from twocats.hashes import HASH_TYPES
from twocats.params import Params

__all__ = [
    "MAX_ENCODED_LENGTH",
    "MAX_SALT_BYTES",
    "MIN_OUTPUT_BYTES",
    "MIN_SALT_BYTES",
    "PHC_ID",
    "PHCHash",
    "decode",
    "decode_params",
    "encode",
    "encode_params",
    "extract_parameters",
    "split_prefix",
    "strict_problem",
]

#: The PHC function identifier.
PHC_ID: Final = "twocats"

#: Shortest salt accepted, in bytes (PHC recommends 16; 8 is argon2's minimum).
MIN_SALT_BYTES: Final = 8

#: Longest salt accepted, in bytes.
MAX_SALT_BYTES: Final = 64

#: Shortest output accepted for verification, in bytes (the PHC guideline's 80 bits).
MIN_OUTPUT_BYTES: Final = 10

#: The longest string the decoder looks at (the longest valid string is about 520 characters: a
#: March 2014 hash of 255 bytes with every parameter written out and a 64-byte salt).
MAX_ENCODED_LENGTH: Final = 1024

_PREFIX: Final = f"${PHC_ID}$"

# Variant name (as in Params) <-> version digits in the string.
_VERSION_OF_VARIANT: Final = {"2015": "2015", "2014": "2014", "2014-03": "201403"}
_VARIANT_OF_VERSION: Final = {code: name for name, code in _VERSION_OF_VARIANT.items()}

# The fixed parameter order: (key, Params field).
_KEYS: Final = (
    ("h", "hash_type"),
    ("m", "mem_cost"),
    ("s", "start_mem_cost"),
    ("t", "time_cost"),
    ("x", "multiplies"),
    ("l", "lanes"),
    ("p", "parallelism"),
    ("b", "block_size"),
    ("sb", "sub_block_size"),
    ("o", "overwrite_cost"),
    ("r", "side_channel_resistant"),
    ("d", "hash_size"),
)
_FIELD_OF_KEY: Final = dict(_KEYS)
_POSITION_OF_KEY: Final = {key: index for index, (key, _) in enumerate(_KEYS)}

# Which keys each variant has.
_COMMON_KEYS: Final = frozenset({"h", "m", "s", "x", "l", "p", "b", "sb"})
_VARIANT_KEYS: Final = {
    "2015": _COMMON_KEYS | {"o", "r"},
    "2014": _COMMON_KEYS | {"t", "o"},
    "2014-03": _COMMON_KEYS | {"t", "d"},
}

# Fixed defaults.  "s" defaults to the value of "m" and "m" has no default; both are handled apart.
_DEFAULTS: Final[dict[str, Any]] = {
    "h": "blake2s",
    "t": 0,
    "x": 2,
    "l": 8,
    "p": 2,
    "b": 16384,
    "sb": 64,
    "o": 6,
    "r": False,
    "d": 32,
}

_DECIMAL: Final = re.compile(r"0|[1-9][0-9]{0,6}")
_B64: Final = re.compile(r"[A-Za-z0-9+/]*")


@dataclass(frozen=True)
class PHCHash:
    """A decoded TwoCats hash string: the parameters, the salt and the stored output.

    The salt and the output are left out of the ``repr`` (only their lengths are shown).
    """

    params: Params
    salt: bytes = field(repr=False)
    digest: bytes = field(repr=False)

    def __repr__(self) -> str:
        return (
            f"PHCHash(params={self.params!r}, salt=<{len(self.salt)} bytes>, "
            f"digest=<{len(self.digest)} bytes>)"
        )

    def encode(self) -> str:
        """Return the canonical string of this hash."""
        return encode(self.params, self.salt, self.digest)


def _b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii").rstrip("=")


def _decode_base64(padded: str) -> bytes | None:
    """Return the bytes of padded base64 text, or None if it is not valid."""
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _b64decode(text: str, what: str) -> bytes:
    """Decode canonical unpadded base64, rejecting every other spelling of the same bytes."""
    if _B64.fullmatch(text) is None:
        raise InvalidHashError(f"the {what} is not unpadded standard base64 (A-Z a-z 0-9 + /)")
    if len(text) % 4 == 1:
        raise InvalidHashError(f"the {what} has an impossible base64 length")
    raw = _decode_base64(text + "=" * (-len(text) % 4))
    if raw is None:
        # Raised outside the handler, so that no exception holding the input is chained to it.
        raise InvalidHashError(f"the {what} is not valid base64")
    if _b64encode(raw) != text:
        raise InvalidHashError(f"the {what} has non-zero unused bits in its last base64 character")
    return raw


def _b64_chars(nbytes: int) -> int:
    """Return the length of the unpadded base64 encoding of `nbytes` bytes."""
    return (4 * nbytes + 2) // 3


def _params_segment(params: Params) -> str:
    """Return the ``v=...$key=value,...`` part of the string for `params`."""
    keys = _VARIANT_KEYS[params.variant]
    pieces: list[str] = []
    for key, name in _KEYS:
        if key not in keys:
            continue
        value = getattr(params, name)
        if key == "m":
            pieces.append(f"m={value}")
            continue
        default = params.mem_cost if key == "s" else _DEFAULTS[key]
        if value == default:
            continue
        if key == "r":
            pieces.append("r=1")
        else:
            pieces.append(f"{key}={value}")
    return f"v={_VERSION_OF_VARIANT[params.variant]}${','.join(pieces)}"


def encode_params(params: Params) -> str:
    """Return the parameter string (no salt, no hash) of `params`, e.g. ``$twocats$v=2015$m=18``.

    This is the prefix every hash made with `params` starts with.
    """
    return _PREFIX + _params_segment(params)


def encode(params: Params, salt: bytes, digest: bytes) -> str:
    """Return the canonical hash string for `params`, `salt` and the algorithm's output `digest`.

    Raises :class:`~twocats.exceptions.InvalidHashError` if the salt length is outside
    :data:`MIN_SALT_BYTES`..:data:`MAX_SALT_BYTES` or `digest` is not the output size of `params`.
    """
    if not params.strict:
        # A string must decode again, and decoding validates strictly.
        problem = strict_problem(params)
        if problem is not None:
            raise InvalidHashError(f"these parameters cannot be stored: {problem}")
    if not MIN_SALT_BYTES <= len(salt) <= MAX_SALT_BYTES:
        raise InvalidHashError(
            f"salt length must be {MIN_SALT_BYTES} to {MAX_SALT_BYTES} bytes, got {len(salt)}"
        )
    expected = params.output_size
    if len(digest) != expected:
        raise InvalidHashError(
            f"hash length must be {expected} bytes for these parameters, got {len(digest)}"
        )
    if expected < MIN_OUTPUT_BYTES:
        raise InvalidHashError(f"hash_size must be at least {MIN_OUTPUT_BYTES} in a hash string")
    return f"{encode_params(params)}${_b64encode(salt)}${_b64encode(digest)}"


def strict_problem(params: Params) -> str | None:
    """Return why ``params`` fail strict validation, or None if they pass (or are strict)."""
    if params.strict:
        return None
    try:
        dataclasses.replace(params, strict=True)
    except ValueError as exc:
        return str(exc)
    return None


def _as_text(encoded: object) -> str:
    if isinstance(encoded, (bytes, bytearray, memoryview)):
        raw = bytes(encoded)
        # Checked without a codec, whose error would hold the input (a password pasted here).
        if not raw.isascii():
            raise InvalidHashError("a twocats hash string is ASCII text")
        encoded = raw.decode("ascii")
    if not isinstance(encoded, str):
        raise InvalidHashError(
            f"a twocats hash string must be str or bytes, not {type(encoded).__name__}"
        )
    if len(encoded) > MAX_ENCODED_LENGTH:
        raise InvalidHashError(f"a twocats hash string has at most {MAX_ENCODED_LENGTH} characters")
    if not encoded.isascii():
        raise InvalidHashError("a twocats hash string is ASCII text")
    return encoded


def _parse_value(key: str, text: str) -> Any:
    if key == "h":
        if text not in HASH_TYPES:
            raise InvalidHashError(f"parameter 'h' must be one of {', '.join(HASH_TYPES)}")
        return text
    if key == "r":
        if text != "1":
            raise InvalidHashError("parameter 'r' can only be 1 (it is omitted when off)")
        return True
    if _DECIMAL.fullmatch(text) is None:
        raise InvalidHashError(
            f"parameter {key!r} must be a canonical decimal (no sign, no leading zeros, "
            "at most 7 digits)"
        )
    return int(text)


def _parse_params(version: str, segment: str) -> Params:
    """Parse the version and parameter fields into validated Params."""
    if not version.startswith("v="):
        raise InvalidHashError("the second field must be the version, v=2015, v=2014 or v=201403")
    variant = _VARIANT_OF_VERSION.get(version[2:])
    if variant is None:
        raise InvalidHashError("unknown version: expected v=2015, v=2014 or v=201403")
    allowed = _VARIANT_KEYS[variant]
    values: dict[str, Any] = {}
    last = -1
    for piece in segment.split(","):
        key, sep, text = piece.partition("=")
        if not sep:
            raise InvalidHashError("parameters must be written key=value, separated by commas")
        if key not in _POSITION_OF_KEY:
            raise InvalidHashError("unknown parameter key")
        if key not in allowed:
            raise InvalidHashError(f"parameter {key!r} does not exist in version {variant}")
        position = _POSITION_OF_KEY[key]
        if key in values:
            raise InvalidHashError(f"parameter {key!r} appears twice")
        if position < last:
            raise InvalidHashError(
                "parameters are out of order; the order is " + ",".join(k for k, _ in _KEYS)
            )
        last = position
        value = _parse_value(key, text)
        default = values.get("m") if key == "s" else _DEFAULTS.get(key)
        if key != "m" and value == default:
            raise InvalidHashError(f"parameter {key!r} has its default value and must be omitted")
        values[key] = value
    if "m" not in values:
        raise InvalidHashError("parameter 'm' (mem_cost) is required")
    kwargs: dict[str, Any] = {"variant": variant}
    for key, name in _KEYS:
        if key in allowed:
            default = values["m"] if key == "s" else _DEFAULTS.get(key)
            kwargs[name] = values.get(key, default)
    params, problem = _build_params(kwargs)
    if params is None:
        # Params names the parameter and its allowed range; raised outside the handler so that
        # nothing is chained to it.
        raise InvalidHashError(f"parameters out of range: {problem}")
    return params


def _build_params(kwargs: dict[str, Any]) -> tuple[Params | None, str]:
    """Return the Params of ``kwargs``, or None and the validation message."""
    try:
        return Params(**kwargs), ""
    except ValueError as exc:
        return None, str(exc)


def _fields(encoded: str | bytes, what: str, form: str, count: int) -> list[str]:
    """Return the ``count`` fields after ``$twocats$``; ``what`` and ``form`` name the string."""
    text = _as_text(encoded)
    if not text.startswith(_PREFIX):
        raise InvalidHashError(f"not a {what} (it must start with $twocats$)")
    fields = text[len(_PREFIX) :].split("$")
    if len(fields) != count:
        raise InvalidHashError(f"a {what} has the form {form}")
    return fields


def decode_params(encoded: str | bytes) -> Params:
    """Decode a PHC parameter string (``$twocats$v=...$...`` with no salt and no hash).

    Raises :class:`~twocats.exceptions.InvalidHashError` for anything :func:`encode_params` would
    not have produced.
    """
    version, segment = _fields(encoded, "twocats parameter string", "$twocats$v=...$params", 2)
    return _parse_params(version, segment)


def decode(encoded: str | bytes) -> PHCHash:
    """Decode a hash string into its parameters, salt and output.

    Raises :class:`~twocats.exceptions.InvalidHashError` (and nothing else, whatever the input) for
    anything :func:`encode` would not have produced.
    """
    version, segment, salt_text, digest_text = _fields(
        encoded, "twocats hash", "$twocats$v=...$params$salt$hash", 4
    )
    params = _parse_params(version, segment)
    if not _b64_chars(MIN_SALT_BYTES) <= len(salt_text) <= _b64_chars(MAX_SALT_BYTES):
        raise InvalidHashError(f"the salt must be {MIN_SALT_BYTES} to {MAX_SALT_BYTES} bytes long")
    salt = _b64decode(salt_text, "salt")
    if not MIN_SALT_BYTES <= len(salt) <= MAX_SALT_BYTES:
        raise InvalidHashError(f"the salt must be {MIN_SALT_BYTES} to {MAX_SALT_BYTES} bytes long")
    expected = params.output_size
    if expected < MIN_OUTPUT_BYTES:
        raise InvalidHashError(f"parameter 'd' must be at least {MIN_OUTPUT_BYTES} in a hash")
    if len(digest_text) != _b64_chars(expected):
        raise InvalidHashError(f"the hash must be {expected} bytes long for these parameters")
    digest = _b64decode(digest_text, "hash")
    return PHCHash(params, salt, digest)


#: The longest framework prefix :func:`split_prefix` accepts: a name of 64 characters and its "$".
MAX_PREFIX_LENGTH: Final = 65

# A framework's algorithm name before the PHC string, with or without a "$" of its own: Django's
# ``twocats$twocats$...`` is ``twocats`` then the PHC string.
_FRAMEWORK_PREFIX: Final = re.compile(
    rf"([A-Za-z][A-Za-z0-9_-]{{0,{MAX_PREFIX_LENGTH - 2}}}\$?)?(\${PHC_ID}\$.*)", re.DOTALL
)


def split_prefix(value: str) -> tuple[str, str] | None:
    """Split a stored value into its framework prefix ('' if none) and the PHC string behind it.

    The prefix is an algorithm name such as Django's (a value copied from Django's column reads
    ``twocats$twocats$v=...``, the prefix ``twocats``).  Returns None if `value` does not hold a
    TwoCats PHC string; the PHC string itself is left to :func:`decode` to check.
    """
    match = _FRAMEWORK_PREFIX.fullmatch(value)
    if match is None:
        return None
    return match.group(1) or "", match.group(2)


def extract_parameters(encoded: str | bytes) -> Params:
    """Return the parameters of a hash string (decoded as strictly as :func:`decode` does)."""
    return decode(encoded).params
