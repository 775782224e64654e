"""The strict PHC string format: canonical encoding, exact round trips, every rejection class."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.strategies import param_sets
from twocats import phc
from twocats.exceptions import InvalidHashError
from twocats.hashes import HASH_TYPES
from twocats.params import Params

SALT = bytes(range(16))
DIGEST = bytes(range(100, 132))
BASE = Params(mem_cost=14)
VALID = phc.encode(BASE, SALT, DIGEST)
SALT_TEXT = VALID.split("$")[4]
DIGEST_TEXT = VALID.split("$")[5]


def _with(
    version: str = "v=2015", params: str = "m=14", salt: str = SALT_TEXT, digest: str = DIGEST_TEXT
) -> str:
    return f"$twocats${version}${params}${salt}${digest}"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii").rstrip("=")


def _bump_last(text: str) -> str:
    """Return `text` with its last base64 character replaced by the next one (sets a spare bit)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return text[:-1] + alphabet[alphabet.index(text[-1]) + 1]


def test_valid_string_layout() -> None:
    """The canonical string has the documented fields, unpadded base64 and the required m."""
    assert f"$twocats$v=2015$m=14${_b64(SALT)}${_b64(DIGEST)}" == VALID
    assert "=" not in SALT_TEXT + DIGEST_TEXT


def test_defaults_match_params() -> None:
    """The format's fixed defaults are the defaults Params resolves to for every variant."""
    defaults = phc._DEFAULTS
    plain = Params()
    assert plain.hash_type == defaults["h"]
    assert plain.multiplies == defaults["x"]
    assert plain.lanes == defaults["l"]
    assert plain.parallelism == defaults["p"]
    assert plain.block_size == defaults["b"]
    assert plain.sub_block_size == defaults["sb"]
    assert plain.overwrite_cost == defaults["o"]
    assert plain.side_channel_resistant is defaults["r"]
    assert Params(variant="2014").time_cost == defaults["t"]
    march = Params(variant="2014-03")
    assert march.time_cost == defaults["t"]
    assert march.hash_size == defaults["d"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (Params(mem_cost=14), "$twocats$v=2015$m=14"),
        (Params(mem_cost=20, start_mem_cost=18), "$twocats$v=2015$m=20,s=18"),
        (
            Params(
                hash_type="blake2b",
                mem_cost=12,
                multiplies=0,
                lanes=16,
                parallelism=1,
                block_size=1024,
                sub_block_size=128,
                overwrite_cost=0,
                side_channel_resistant=True,
            ),
            "$twocats$v=2015$h=blake2b,m=12,x=0,l=16,p=1,b=1024,sb=128,o=0,r=1",
        ),
        (
            Params(variant="2014", mem_cost=13, time_cost=3, overwrite_cost=2),
            "$twocats$v=2014$m=13,t=3,o=2",
        ),
        (
            Params(variant="2014-03", hash_type="sha256", mem_cost=11, time_cost=1, hash_size=16),
            "$twocats$v=201403$h=sha256,m=11,t=1,d=16",
        ),
    ],
)
def test_encode_params_canonical(params: Params, expected: str) -> None:
    """Parameter strings keep the fixed order, omit defaults and decode back to equal Params."""
    assert phc.encode_params(params) == expected
    assert phc.decode_params(expected) == params


def test_round_trip_every_variant_and_hash_type() -> None:
    """Every variant with every hash type round-trips through encode and decode exactly."""
    for variant in ("2015", "2014", "2014-03"):
        for hash_type in HASH_TYPES:
            params = Params(variant=variant, hash_type=hash_type, mem_cost=10, block_size=1024)
            digest = bytes(range(params.output_size))
            encoded = phc.encode(params, SALT, digest)
            decoded = phc.decode(encoded)
            assert (decoded.params, decoded.salt, decoded.digest) == (params, SALT, digest)
            assert decoded.encode() == encoded
            assert phc.extract_parameters(encoded.encode("ascii")) == params


def test_repr_hides_salt_and_digest() -> None:
    """The repr of a decoded hash shows lengths, never the salt or the output."""
    text = repr(phc.decode(VALID))
    assert "16 bytes" in text
    assert "32 bytes" in text
    assert repr(SALT) not in text
    assert repr(DIGEST) not in text


@pytest.mark.parametrize(
    ("salt", "digest", "fragment"),
    [
        (b"x" * 7, DIGEST, "salt length"),
        (b"x" * 65, DIGEST, "salt length"),
        (SALT, DIGEST[:31], "hash length"),
        (SALT, DIGEST + b"x", "hash length"),
    ],
)
def test_encode_rejects_bad_lengths(salt: bytes, digest: bytes, fragment: str) -> None:
    """Encoding refuses salts outside 8..64 bytes and outputs of the wrong size."""
    with pytest.raises(InvalidHashError, match=fragment):
        phc.encode(BASE, salt, digest)


def test_encode_rejects_non_strict_and_short_outputs() -> None:
    """Parameters only valid with strict=False, and outputs under 80 bits, cannot be stored."""
    loose = Params(variant="2014-03", mem_cost=10, hash_size=300, strict=False)
    with pytest.raises(InvalidHashError, match="cannot be stored"):
        phc.encode(loose, SALT, bytes(300))
    short = Params(variant="2014-03", mem_cost=10, hash_size=9)
    with pytest.raises(InvalidHashError, match="at least 10"):
        phc.encode(short, SALT, bytes(9))


MALFORMED = {
    # Not a twocats string at all.
    "other algorithm": VALID.replace("$twocats$", "$argon2id$"),
    "no leading dollar": VALID[1:],
    "upper-case id": VALID.replace("twocats", "TwoCats"),
    "empty": "",
    "only the id": "$twocats$",
    "parameter string only": "$twocats$v=2015$m=14",
    "salt but no hash": f"$twocats$v=2015$m=14${SALT_TEXT}",
    "extra field": VALID + "$AAAA",
    "trailing dollar": VALID + "$",
    "trailing newline": VALID + "\n",
    "leading space": " " + VALID,
    # Version.
    "missing version": f"$twocats$m=14${SALT_TEXT}${DIGEST_TEXT}",
    "unknown version": _with(version="v=2016"),
    "hyphenated version": _with(version="v=2014-03"),
    "version leading zero": _with(version="v=02015"),
    "version key": _with(version="V=2015"),
    # Parameter list syntax.
    "empty parameters": _with(params=""),
    "no equals sign": _with(params="m14"),
    "empty value": _with(params="m="),
    "trailing comma": _with(params="m=14,"),
    "double comma": _with(params="m=14,,x=3"),
    "space after comma": _with(params="m=14, x=3"),
    "unknown key": _with(params="m=14,q=1"),
    "upper-case key": _with(params="M=14"),
    "missing m": _with(params="x=3"),
    "duplicate key": _with(params="m=14,m=14"),
    "duplicate later key": _with(params="m=14,x=3,x=3"),
    "reordered keys": _with(params="x=3,m=14"),
    "reordered later keys": _with(params="m=14,l=4,x=3"),
    "key of another variant (t in 2015)": _with(params="m=14,t=1"),
    "key of another variant (d in 2015)": _with(params="m=14,d=20"),
    "key of another variant (r in 2014)": _with(version="v=2014", params="m=14,r=1"),
    "key of another variant (o in 2014-03)": _with(version="v=201403", params="m=14,o=2"),
    # Decimal canonicity.
    "leading zero": _with(params="m=014"),
    "zero with leading zero": _with(params="m=14,x=00"),
    "plus sign": _with(params="m=+14"),
    "minus sign": _with(params="m=-14"),
    "negative zero": _with(params="m=14,x=-0"),
    "exponent": _with(params="m=1e1"),
    "hex": _with(params="m=0xe"),
    "eight digits": _with(params="m=14,b=16777216"),
    "huge number": _with(params="m=" + "9" * 5000),
    "decimal point": _with(params="m=14.0"),
    # Defaults written out (non-canonical).
    "default hash type": _with(params="h=blake2s,m=14"),
    "default start": _with(params="m=14,s=14"),
    "default multiplies": _with(params="m=14,x=2"),
    "default lanes": _with(params="m=14,l=8"),
    "default parallelism": _with(params="m=14,p=2"),
    "default block size": _with(params="m=14,b=16384"),
    "default sub-block size": _with(params="m=14,sb=64"),
    "default overwrite": _with(params="m=14,o=6"),
    "flag off written": _with(params="m=14,r=0"),
    "default time cost": _with(version="v=2014", params="m=14,t=0"),
    "default hash size": _with(version="v=201403", params="m=14,d=32"),
    # Out-of-range values.
    "unknown hash type": _with(params="h=md5,m=14"),
    "memory too large": _with(params="m=31"),
    "start above m": _with(params="m=14,s=15"),
    "too many multiplies": _with(params="m=14,x=9"),
    "lanes not a power of two": _with(params="m=14,l=3"),
    "too many lanes for blake2s": _with(params="m=14,l=16"),
    "zero parallelism": _with(params="m=14,p=0"),
    "parallelism above 255": _with(params="m=14,p=256"),
    "block not a power of two": _with(params="m=14,b=1000"),
    "block too large": _with(params="m=14,b=2097152"),
    "sub-block above block": _with(params="m=14,b=1024,sb=2048"),
    "not memory-hard": _with(params="m=6"),
    "time cost too large": _with(version="v=2014", params="m=14,t=31"),
    "flag value 2": _with(params="m=14,r=2"),
    "hash size under 80 bits": _with(version="v=201403", params="m=14,d=9", digest=_b64(bytes(9))),
    "hash size above 255": _with(version="v=201403", params="m=14,d=256", digest=_b64(bytes(256))),
    # Salt field.
    "salt bad character": _with(salt=SALT_TEXT[:-1] + "!"),
    "salt url-safe alphabet": _with(salt=SALT_TEXT[:-1] + "-"),
    "salt padded": _with(salt=SALT_TEXT + "=="),
    "salt impossible length": _with(salt=SALT_TEXT + "AAA"),
    "salt trailing bits": _with(salt=_bump_last(SALT_TEXT)),
    "salt too short": _with(salt=_b64(bytes(7))),
    "salt too long": _with(salt=_b64(bytes(65))),
    "salt empty": _with(salt=""),
    # Hash field.
    "hash too short": _with(digest=_b64(bytes(31))),
    "hash too long": _with(digest=_b64(bytes(33))),
    "hash for blake2b": _with(digest=_b64(bytes(64))),
    "hash padded": _with(digest=DIGEST_TEXT + "="),
    "hash trailing bits": _with(digest=_bump_last(DIGEST_TEXT)),
    "hash bad character": _with(digest=DIGEST_TEXT[:-1] + "*"),
    "hash empty": _with(digest=""),
    # Encoding of the string itself.
    "non-ascii": VALID.replace("m=14", "m=1\u0664"),
    "nul byte": VALID.replace("m=14", "m=14\x00"),
    "far too long": VALID + "A" * phc.MAX_ENCODED_LENGTH,
}


#: What each rejected string is refused for: the whole message, naming the field and the rule.
CAUSES = {
    "block not a power of two": (
        "parameters out of range: block_size must be a power of two from 32 (the blake2s "
        "digest size) to 1048576 bytes; got 1000"
    ),
    "block too large": (
        "parameters out of range: block_size must be an integer from 32 to 1048576; got 2097152"
    ),
    "decimal point": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "default block size": "parameter 'b' has its default value and must be omitted",
    "default hash size": "parameter 'd' has its default value and must be omitted",
    "default hash type": "parameter 'h' has its default value and must be omitted",
    "default lanes": "parameter 'l' has its default value and must be omitted",
    "default multiplies": "parameter 'x' has its default value and must be omitted",
    "default overwrite": "parameter 'o' has its default value and must be omitted",
    "default parallelism": "parameter 'p' has its default value and must be omitted",
    "default start": "parameter 's' has its default value and must be omitted",
    "default sub-block size": "parameter 'sb' has its default value and must be omitted",
    "default time cost": "parameter 't' has its default value and must be omitted",
    "double comma": "parameters must be written key=value, separated by commas",
    "duplicate key": "parameter 'm' appears twice",
    "duplicate later key": "parameter 'x' appears twice",
    "eight digits": (
        "parameter 'b' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "empty": "not a twocats hash (it must start with $twocats$)",
    "empty parameters": "parameters must be written key=value, separated by commas",
    "empty value": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "exponent": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "extra field": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "far too long": "a twocats hash string has at most 1024 characters",
    "flag off written": "parameter 'r' can only be 1 (it is omitted when off)",
    "flag value 2": "parameter 'r' can only be 1 (it is omitted when off)",
    "hash bad character": "the hash is not unpadded standard base64 (A-Z a-z 0-9 + /)",
    "hash empty": "the hash must be 32 bytes long for these parameters",
    "hash for blake2b": "the hash must be 32 bytes long for these parameters",
    "hash padded": "the hash must be 32 bytes long for these parameters",
    "hash size above 255": (
        "parameters out of range: hash_size must be from 1 to 255 (use strict=False for "
        "the reference's 8-bit truncation); got 256"
    ),
    "hash size under 80 bits": "parameter 'd' must be at least 10 in a hash",
    "hash too long": "the hash must be 32 bytes long for these parameters",
    "hash too short": "the hash must be 32 bytes long for these parameters",
    "hash trailing bits": "the hash has non-zero unused bits in its last base64 character",
    "hex": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "huge number": "a twocats hash string has at most 1024 characters",
    "hyphenated version": "unknown version: expected v=2015, v=2014 or v=201403",
    "key of another variant (d in 2015)": "parameter 'd' does not exist in version 2015",
    "key of another variant (o in 2014-03)": "parameter 'o' does not exist in version 2014-03",
    "key of another variant (r in 2014)": "parameter 'r' does not exist in version 2014",
    "key of another variant (t in 2015)": "parameter 't' does not exist in version 2015",
    "lanes not a power of two": (
        "parameters out of range: lanes must be a power of two from 1 to 8 for blake2s; got 3"
    ),
    "leading space": "not a twocats hash (it must start with $twocats$)",
    "leading zero": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "memory too large": "parameters out of range: mem_cost must be an integer from 0 to 30; got 31",
    "minus sign": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "missing m": "parameter 'm' (mem_cost) is required",
    "missing version": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "negative zero": (
        "parameter 'x' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "no equals sign": "parameters must be written key=value, separated by commas",
    "no leading dollar": "not a twocats hash (it must start with $twocats$)",
    "non-ascii": "a twocats hash string is ASCII text",
    "not memory-hard": (
        "parameters out of range: parallelism must be from 1 to 1 for mem_cost 6 and "
        "block_size 16384 (four blocks per region; use strict=False to accept a hash without "
        "memory work); got 2"
    ),
    "nul byte": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "only the id": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "other algorithm": "not a twocats hash (it must start with $twocats$)",
    "parallelism above 255": (
        "parameters out of range: parallelism must be an integer from 1 to 255; got 256"
    ),
    "parameter string only": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "plus sign": (
        "parameter 'm' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
    "reordered keys": "parameters are out of order; the order is h,m,s,t,x,l,p,b,sb,o,r,d",
    "reordered later keys": "parameters are out of order; the order is h,m,s,t,x,l,p,b,sb,o,r,d",
    "salt bad character": "the salt is not unpadded standard base64 (A-Z a-z 0-9 + /)",
    "salt but no hash": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "salt empty": "the salt must be 8 to 64 bytes long",
    "salt impossible length": "the salt has an impossible base64 length",
    "salt padded": "the salt is not unpadded standard base64 (A-Z a-z 0-9 + /)",
    "salt too long": "the salt must be 8 to 64 bytes long",
    "salt too short": "the salt must be 8 to 64 bytes long",
    "salt trailing bits": "the salt has non-zero unused bits in its last base64 character",
    "salt url-safe alphabet": "the salt is not unpadded standard base64 (A-Z a-z 0-9 + /)",
    "space after comma": "unknown parameter key",
    "start above m": (
        "parameters out of range: start_mem_cost must be from 0 to mem_cost (14); got 15"
    ),
    "sub-block above block": (
        "parameters out of range: sub_block_size must be a power of two from 4 * lanes "
        "(32) to block_size (1024); got 2048"
    ),
    "time cost too large": (
        "parameters out of range: time_cost must be an integer from 0 to 30; got 31"
    ),
    "too many lanes for blake2s": (
        "parameters out of range: lanes must be a power of two from 1 to 8 for blake2s; got 16"
    ),
    "too many multiplies": (
        "parameters out of range: multiplies must be an integer from 0 to 8; got 9"
    ),
    "trailing comma": "parameters must be written key=value, separated by commas",
    "trailing dollar": "a twocats hash has the form $twocats$v=...$params$salt$hash",
    "trailing newline": "the hash must be 32 bytes long for these parameters",
    "unknown hash type": "parameter 'h' must be one of blake2s, blake2b, sha256, sha512",
    "unknown key": "unknown parameter key",
    "unknown version": "unknown version: expected v=2015, v=2014 or v=201403",
    "upper-case id": "not a twocats hash (it must start with $twocats$)",
    "upper-case key": "unknown parameter key",
    "version key": "the second field must be the version, v=2015, v=2014 or v=201403",
    "version leading zero": "unknown version: expected v=2015, v=2014 or v=201403",
    "zero parallelism": (
        "parameters out of range: parallelism must be an integer from 1 to 255; got 0"
    ),
    "zero with leading zero": (
        "parameter 'x' must be a canonical decimal (no sign, no leading zeros, at most 7 digits)"
    ),
}


def test_every_rejection_has_its_cause() -> None:
    """The table of causes covers exactly the rejection classes."""
    assert set(CAUSES) == set(MALFORMED)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_decode_rejects(name: str) -> None:
    """Each malformed or non-canonical class is an InvalidHashError with its own cause."""
    with pytest.raises(InvalidHashError) as caught:
        phc.decode(MALFORMED[name])
    assert str(caught.value) == CAUSES[name]


FULL = _with(params="h=sha512,m=9,s=3,x=0,l=16,p=3,b=256,sb=128,o=0,r=1", digest=_b64(bytes(64)))


def test_valid_neighbours_of_rejects_decode() -> None:
    """The valid strings the rejection classes are derived from decode (the tests are sharp)."""
    assert phc.decode(FULL).encode() == FULL
    assert len(phc.decode(_with(salt=SALT_TEXT + "AA")).salt) == 18
    assert phc.decode(_with(params="m=14,x=3")).params.multiplies == 3
    assert phc.decode(_with(params="m=14,s=13")).params.start_mem_cost == 13
    assert phc.decode(_with(params="m=14,r=1")).params.side_channel_resistant
    assert phc.decode(_with(version="v=2014", params="m=14,t=1")).params.time_cost == 1
    assert phc.decode(_with(params="m=30")).params.mem_cost == 30
    march = _with(version="v=201403", params="m=14,d=10", digest=_b64(bytes(10)))
    assert phc.decode(march).params.hash_size == 10


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "a twocats hash string must be str or bytes, not NoneType"),
        (14, "a twocats hash string must be str or bytes, not int"),
        (1.5, "a twocats hash string must be str or bytes, not float"),
        (["$twocats$"], "a twocats hash string must be str or bytes, not list"),
        (b"\xff\xfe", "a twocats hash string is ASCII text"),
        (bytearray(b"$twocats$"), "a twocats hash has the form $twocats$v=...$params$salt$hash"),
    ],
)
def test_decode_rejects_other_types(value: Any, message: str) -> None:
    """Inputs that are not ASCII str or bytes raise InvalidHashError, not TypeError."""
    with pytest.raises(InvalidHashError) as caught:
        phc.decode(value)
    assert str(caught.value) == message


def test_decode_accepts_bytes() -> None:
    """An ASCII bytes hash string decodes like the str one."""
    assert phc.decode(VALID.encode("ascii")) == phc.decode(VALID)


def test_error_messages_do_not_echo_input() -> None:
    """A rejected string (perhaps a password pasted by mistake) never appears in the message."""
    secret = "hunter2-correct-horse"
    for candidate in (secret, f"$twocats$v=2015$m={secret}$a$b", _with(salt=secret)):
        with pytest.raises(InvalidHashError) as info:
            phc.decode(candidate)
        assert secret not in str(info.value)


def test_decode_params_rejects_full_hash() -> None:
    """decode_params takes only a parameter string; decode takes only a full hash."""
    with pytest.raises(InvalidHashError, match=r"^a twocats parameter string has the form "):
        phc.decode_params(VALID)
    assert phc.decode_params("$twocats$v=2015$m=14") == BASE


def valid_params() -> st.SearchStrategy[Params]:
    """Any parameter set Params accepts strictly whose output a PHC string can hold."""
    return param_sets(min_hash_size=phc.MIN_OUTPUT_BYTES)


@given(valid_params(), st.binary(min_size=8, max_size=64), st.data())
def test_hypothesis_round_trip(params: Params, salt: bytes, data: st.DataObject) -> None:
    """Any valid parameters, salt and output encode to a string that decodes back exactly."""
    digest = data.draw(st.binary(min_size=params.output_size, max_size=params.output_size))
    encoded = phc.encode(params, salt, digest)
    assert len(encoded) <= phc.MAX_ENCODED_LENGTH
    decoded = phc.decode(encoded)
    assert decoded == phc.PHCHash(params, salt, digest)
    assert decoded.encode() == encoded
    assert phc.decode_params(phc.encode_params(params)) == params


@given(st.text(max_size=200))
def test_hypothesis_arbitrary_text(text: str) -> None:
    """Arbitrary text decodes to a hash that re-encodes identically, or raises InvalidHashError."""
    _decode_or_reject(text)
    _decode_or_reject("$twocats$" + text)


@given(st.data())
def test_hypothesis_mutated_valid_strings(data: st.DataObject) -> None:
    """Random edits of a valid string never raise anything but InvalidHashError."""
    text = data.draw(st.sampled_from([VALID, FULL]))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        char = data.draw(st.characters(codec="utf-8") | st.sampled_from("$=,0123456789"))
        if action == "insert":
            text = text[:position] + char + text[position:]
        elif action == "delete":
            text = text[:position] + text[position + 1 :]
        elif action == "replace":
            text = text[:position] + char + text[position + 1 :]
        else:
            text = text[:position] + text[position : position + 8] + text[position:]
    _decode_or_reject(text)


def _decode_or_reject(text: str) -> None:
    try:
        decoded = phc.decode(text)
    except InvalidHashError:
        return
    assert decoded.encode() == text


def test_params_dataclass_replace_keeps_encoding_stable() -> None:
    """Changing only the memory cost changes only m (and adds s when the start level stays)."""
    upgraded = dataclasses.replace(BASE, mem_cost=16)
    assert phc.encode_params(upgraded) == "$twocats$v=2015$m=16,s=14"
