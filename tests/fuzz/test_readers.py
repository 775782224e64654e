"""Fuzzing the readers of untrusted text at a modest size (the long run: ``python -m fuzz``).

The PHC decoders, ``PasswordHasher.verify``, the ``sum --check`` line parser and the vector-file
reader get random text and bytes, and valid inputs put through the mutations of
:mod:`fuzz` (bit flips, truncations, duplicated, dropped or reordered fields, huge numbers,
non-ASCII text, NUL bytes, very long repetitions).  They raise only their documented exceptions,
never quote their input, and whatever they accept round-trips exactly.
"""

from __future__ import annotations

import json
import os
import random
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz
from twocats import phc
from twocats.cli.checksum import CheckLine, escape_name, parse_check_line
from twocats.exceptions import InvalidHashError, InvalidParametersError, VerifyMismatchError
from twocats.kdf.vectors import VectorFormatError, read_vectors
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

#: Modest sizes: the whole file runs in well under a minute.
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Every code point, lone surrogates and NUL included.
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=200)

#: The hasher under test: a 1 MiB memory limit, so no accepted string costs much.
HASHER = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 20)


def _assert_contract(name: str, data: bytes, serial: int) -> None:
    outcome = fuzz.classify(fuzz.TARGETS[name], data, serial)
    assert outcome.kind in ("accepted", "refused"), outcome


@pytest.mark.parametrize("name", ["phc", "phc_params", "verify", "checksum", "vectors"])
@FAST
@given(rng=st.randoms(use_true_random=False), serial=st.integers(1, 10**6))
def test_mutated_inputs_keep_the_contract(name: str, rng: random.Random, serial: int) -> None:
    """Mutated valid inputs raise only documented exceptions and round-trip when accepted."""
    if serial % fuzz.CLI_EVERY == 0:
        # Such serials also run the command line, in the working folder of a fuzz run.
        serial += 1
    fuzz.load_seeds()
    _assert_contract(name, fuzz.generate(rng, fuzz.TARGETS[name]), serial)


@FAST
@given(text=ANY_TEXT)
def test_phc_decoders_take_any_text(text: str) -> None:
    """decode and decode_params raise only InvalidHashError, never quoting, for any text."""
    for decoder, encoder in (
        (phc.decode, lambda value: value.encode()),
        (phc.decode_params, phc.encode_params),
    ):
        try:
            decoded = decoder(text)
        except InvalidHashError as error:
            message = str(error)
        else:
            assert encoder(decoded) == text
            continue
        assert len(text) < 12 or text not in message


@FAST
@given(hash_text=ANY_TEXT | st.binary(max_size=200), password=ANY_TEXT | st.binary(max_size=50))
def test_verify_takes_any_hash_and_password(hash_text: str | bytes, password: str | bytes) -> None:
    """verify raises only InvalidHashError (or InvalidParametersError for bad Unicode)."""
    with pytest.raises((InvalidHashError, InvalidParametersError)) as caught:
        HASHER.verify(hash_text, password)
    for secret in (hash_text, password):
        if isinstance(secret, str) and len(secret) >= 12:
            assert secret not in str(caught.value)


def _encodable(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogates), so that UTF-8 can encode it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@FAST
@given(password=ANY_TEXT, wrong=ANY_TEXT, salt=st.binary(min_size=8, max_size=64))
def test_valid_hashes_round_trip_and_verify(password: str, wrong: str, salt: bytes) -> None:
    """A hash decodes and encodes back exactly; only its own password verifies."""
    if not _encodable(password):
        # Only a password that is not valid Unicode is refused.
        with pytest.raises(InvalidParametersError, match=r"^password is not valid Unicode text"):
            HASHER.hash(password, salt=salt)
        return
    encoded = HASHER.hash(password, salt=salt)
    assert phc.decode(encoded).encode() == encoded
    assert HASHER.verify(encoded, password)
    if not _encodable(wrong):
        with pytest.raises(InvalidParametersError, match=r"^password is not valid Unicode text"):
            HASHER.verify(encoded, wrong)
    elif wrong != password:
        with pytest.raises(VerifyMismatchError, match=r"^The password does not match"):
            HASHER.verify(encoded, wrong)


@FAST
@given(
    name=st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), min_size=1),
    digest=st.binary(min_size=32, max_size=32) | st.binary(min_size=64, max_size=64),
    binary_mode=st.booleans(),
)
def test_checksum_lines_round_trip_exactly(name: str, digest: bytes, binary_mode: bool) -> None:
    """A line written in coreutils form parses to its digest and name and writes back the same."""
    prefix, shown = escape_name(name)
    line = os.fsencode(f"{prefix}{digest.hex()} {'*' if binary_mode else ' '}{shown}")
    parsed = parse_check_line(line, len(digest))
    assert parsed == CheckLine(digest, name)
    again = os.fsencode(f"{prefix}{parsed.digest.hex()} {'*' if binary_mode else ' '}{shown}")
    assert again == line


@FAST
@given(line=st.binary(max_size=300), size=st.sampled_from([32, 64]))
def test_checksum_parser_never_raises_and_rejects_nul(line: bytes, size: int) -> None:
    """Any bytes parse to a line or None; a name holding NUL is never accepted."""
    parsed = parse_check_line(line, size)
    if parsed is not None:
        assert "\0" not in parsed.name
        assert len(parsed.digest) == size


@FAST
@given(lines=st.lists(ANY_TEXT, max_size=4))
def test_vector_reader_takes_any_text(lines: list[str]) -> None:
    """read_vectors raises only VectorFormatError for any lines of text."""
    try:
        read_vectors(lines)
    except VectorFormatError as error:
        message = str(error)
    else:
        return
    assert "\n" not in message


def test_vector_reader_refuses_deep_nesting_and_long_numbers() -> None:
    """JSON nested past the decoder's recursion limit or with 5000-digit numbers: format errors."""
    for line, message in (
        ("[" * 100_000 + "]" * 100_000, "vectors, line 1: nested too deeply"),
        ('{"id": ' + "9" * 5000 + "}", "vectors, line 1: a number is too long"),
    ):
        with pytest.raises(VectorFormatError) as caught:
            read_vectors([line])
        assert str(caught.value) == message


def test_vector_messages_print_safely() -> None:
    """A record's id and unknown names appear in messages as short printable ASCII."""
    record = {"id": "x\ud800\n" + "y" * 100, "hash_type": "blake2s", "api": "\u00e9" * 3}
    with pytest.raises(VectorFormatError) as caught:
        read_vectors([json.dumps(record)])
    assert str(caught.value) == (
        "vectors, line 1 (x\\ud800\\nyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...): unknown api "
        "'\\xe9\\xe9\\xe9'"
    )
    str(caught.value).encode("ascii")


def test_packaged_vectors_round_trip() -> None:
    """Every packaged vector record, written out again as JSON, reads back as the same vector."""
    text = resources.files("twocats.kdf").joinpath("selftest.jsonl").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    again = [json.dumps(json.loads(line)) for line in lines]
    assert read_vectors(again) == read_vectors(lines)


def test_the_fuzz_run_itself() -> None:
    """A short run of the fuzzer over every target (command line and file paths too) is clean."""
    # The run's 20 s alarm would call an input slowed by a busy machine a hang; here the alarm
    # only catches a true hang.
    reports = fuzz.run(40, 7, list(fuzz.TARGETS), None, echo=False, time_limit=600.0)
    for name, report in reports.items():
        assert report.inputs == 40, name
        assert report.failures == [], name
