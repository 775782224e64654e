"""The table of fuzz targets: each reader's seeds, alphabet, separators, contract and exceptions."""

from __future__ import annotations

from fuzz.cli_targets import check_selftest_cli, check_stored_cli, planted_hashes, planted_vectors
from fuzz.contract import CliRefusal, Target
from fuzz.readers import (
    VECTOR_SEEDS,
    VERIFY_SEEDS,
    check_checksum,
    check_phc,
    check_phc_params,
    check_vectors,
    check_verify,
    checksum_seeds,
    phc_seeds,
    structured_vector,
    vector_seeds,
    verify_seeds,
)
from twocats.exceptions import InvalidHashError, InvalidParametersError, VerifyMismatchError
from twocats.kdf.vectors import VectorFormatError

_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

TARGETS: dict[str, Target] = {
    "phc": Target(
        "phc",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        check_phc,
        (InvalidHashError,),
    ),
    "phc_params": Target(
        "phc_params",
        [],
        b"$=,twocatsvhmxlpbrodi0123456789",
        b"$,=",
        check_phc_params,
        (InvalidHashError,),
    ),
    "verify": Target(
        "verify",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        check_verify,
        (InvalidHashError, VerifyMismatchError, InvalidParametersError),
    ),
    "checksum": Target(
        "checksum",
        [],
        b"0123456789abcdefABCDEF *\\nr\t./",
        b" *\\",
        check_checksum,
        (),
    ),
    "vectors": Target(
        "vectors",
        [],
        b'{}[]":, 0123456789abcdef-_.etrunl',
        b',:"',
        check_vectors,
        (VectorFormatError,),
        structured=structured_vector,
        quotes_input=True,
    ),
    "stored_cli": Target(
        "stored_cli",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        check_stored_cli,
        (CliRefusal,),
    ),
    "selftest_cli": Target(
        "selftest_cli",
        [],
        b'{}[]":, 0123456789abcdef-_.etrunl',
        b',:"',
        check_selftest_cli,
        (CliRefusal,),
        structured=structured_vector,
        quotes_input=True,
    ),
}


def load_seeds() -> None:
    """Build every target's seeds (hashing the verify seeds) once."""
    if TARGETS["phc"].seeds:
        return
    hashes = phc_seeds()
    TARGETS["phc"].seeds.extend(hashes)
    TARGETS["phc_params"].seeds.extend(seed.rsplit(b"$", 2)[0] for seed in hashes)
    VERIFY_SEEDS.extend(verify_seeds())
    TARGETS["verify"].seeds.extend(VERIFY_SEEDS)
    TARGETS["checksum"].seeds.extend(checksum_seeds())
    VECTOR_SEEDS.extend(vector_seeds())
    TARGETS["vectors"].seeds.extend(VECTOR_SEEDS)
    TARGETS["stored_cli"].seeds.extend([*VERIFY_SEEDS, *planted_hashes()])
    TARGETS["selftest_cli"].seeds.extend([*VECTOR_SEEDS, *planted_vectors()])
