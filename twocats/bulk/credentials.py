"""Throwaway TLS credentials for the job's own Dask cluster, so that only the job can use it.

:func:`job_security` makes a certificate authority and one certificate signed by it for the
scheduler, the workers and the job's client.  The authority's key is never written: no other
certificate can be signed with it.  Dask's TLS requires a certificate from both ends of every
connection, so a process without the job's key can neither join the cluster nor connect to it as
a client.

The credentials never reach a disk.  On Linux they are held in anonymous memory files
(``memfd_create``, mode 0600) that the job's processes open as ``/proc/<job's pid>/fd/<n>``: the
kernel frees them when the job ends, however it ends, ``kill -9`` included, and no other user may
open another process's ``/proc/<pid>/fd``.  Elsewhere they are files in a private directory (mode
0700) named after the job's process, removed when the job ends, and by the next job if the process
that made them is gone.

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

__all__ = ["DIRECTORY_PREFIX", "client_security", "job_security", "remove_stale_directories"]

#: The name of a credential directory starts with this, then the job's process id and a dash.
DIRECTORY_PREFIX: Final = "twocats-bulk-tls-"

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


def _in_memory_supported() -> bool:
    """Whether this system has memory files that other processes can open by a /proc path."""
    return hasattr(os, "memfd_create") and os.path.isdir(f"/proc/{os.getpid()}/fd")


@contextlib.contextmanager
def _in_memory(files: dict[str, bytes]) -> Iterator[dict[str, str]]:
    """Yield a path for each of `files` (name -> contents) that opens an anonymous memory file."""
    descriptors: list[int] = []
    try:
        paths = {}
        for name, data in files.items():
            descriptor = os.memfd_create(f"twocats-bulk-{name}")
            descriptors.append(descriptor)
            os.fchmod(descriptor, 0o600)
            with open(descriptor, "wb", closefd=False) as file:
                file.write(data)
            paths[name] = f"/proc/{os.getpid()}/fd/{descriptor}"
        yield paths
    finally:
        for descriptor in descriptors:
            os.close(descriptor)


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_directories(parent: Path | None = None) -> None:
    """Remove the credential directories of this user's jobs whose process is gone."""
    parent = Path(tempfile.gettempdir()) if parent is None else parent
    for directory in parent.glob(f"{DIRECTORY_PREFIX}*-*"):
        pid = directory.name[len(DIRECTORY_PREFIX) :].partition("-")[0]
        try:
            owned = directory.lstat().st_uid == os.getuid()
        except OSError:
            continue
        if owned and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def _in_directory(files: dict[str, bytes]) -> Iterator[dict[str, str]]:
    """Yield the paths of `files` (name -> contents) written to a new private directory."""
    remove_stale_directories()
    # mkdtemp makes the directory with mode 0700.
    directory = Path(tempfile.mkdtemp(prefix=f"{DIRECTORY_PREFIX}{os.getpid()}-"))
    try:
        paths = {}
        for name, data in files.items():
            paths[name] = str(directory / name)
            _write_private(directory / name, data)
        yield paths
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def job_security() -> Iterator[Security]:
    """Yield a :class:`distributed.Security` for a new cluster that only its holder can use.

    Every role (scheduler, workers, client) presents the same certificate and requires one
    signed by the same throwaway authority; the credentials are gone when the block ends.
    """
    ca, cert, key = _credentials()
    files = {"ca.pem": ca, "cert.pem": cert, "key.pem": key}
    held = _in_memory(files) if _in_memory_supported() else _in_directory(files)
    with held as paths:
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


def client_security(ca_file: str, cert_file: str, key_file: str) -> Security:
    """Return the credentials of a client of a TLS cluster: its CA, and a certificate and key."""
    return Security(
        require_encryption=True,
        tls_ca_file=ca_file,
        tls_client_cert=cert_file,
        tls_client_key=key_file,
    )
