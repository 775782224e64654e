"""Throwaway TLS credentials for the job's own Dask cluster, so that only the job can use it.

:func:`job_security` makes a certificate authority and one certificate signed by it for the
scheduler, the workers and the job's client, in a private directory (mode 0700) that is removed
afterwards.  The authority's key is never written: no other certificate can be signed with it.
Dask's TLS requires a certificate from both ends of every connection, so a process without the
job's key can neither join the cluster nor connect to it as a client.

:func:`client_security` holds the credentials given for a cluster of one's own (``--scheduler``).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from twocats._extras import missing_extra

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    from distributed import Security
except ImportError as error:
    raise missing_extra(__name__, error, "bulk") from None

__all__ = ["client_security", "job_security"]

#: How long the credentials are valid: long enough for any run, short enough to be useless after.
VALIDITY: Final = datetime.timedelta(days=7)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _credentials() -> tuple[bytes, bytes, bytes]:
    """Return a new CA certificate, and a certificate and key it signed, all as PEM."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("twocats upgrade-db job CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("twocats upgrade-db job"))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to a new file that only this user can read."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


@contextlib.contextmanager
def job_security() -> Iterator[Security]:
    """Yield a :class:`distributed.Security` for a new cluster that only its holder can use.

    Every role (scheduler, workers, client) presents the same certificate and requires one
    signed by the same throwaway authority; the files are removed when the block ends.
    """
    ca, cert, key = _credentials()
    # mkdtemp makes the directory with mode 0700.
    directory = Path(tempfile.mkdtemp(prefix="twocats-bulk-tls-"))
    try:
        paths = {}
        for name, data in (("ca.pem", ca), ("cert.pem", cert), ("key.pem", key)):
            paths[name] = str(directory / name)
            _write_private(directory / name, data)
        yield Security(
            require_encryption=True,
            tls_ca_file=paths["ca.pem"],
            tls_client_cert=paths["cert.pem"],
            tls_client_key=paths["key.pem"],
            tls_scheduler_cert=paths["cert.pem"],
            tls_scheduler_key=paths["key.pem"],
            tls_worker_cert=paths["cert.pem"],
            tls_worker_key=paths["key.pem"],
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def client_security(ca_file: str, cert_file: str, key_file: str) -> Security:
    """Return the credentials of a client of a TLS cluster: its CA, and a certificate and key."""
    return Security(
        require_encryption=True,
        tls_ca_file=ca_file,
        tls_client_cert=cert_file,
        tls_client_key=key_file,
    )
