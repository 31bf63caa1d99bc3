"""A private certificate authority and a loopback server certificate for `berth up`'s gateway.

Kept in `<state>/tls/`: `ca.crt` (what clients trust: the CLI through berth.json or BERTH_CA,
kubectl through the kubeconfig), `ca.key`, `server.crt`, `server.key` (keys readable by their
owner only). The authority lives ten years so a client that trusts it keeps working across
restarts; the server certificate is issued again whenever it nears its end or lacks a name.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from berth.files import write_atomically

CA_LIFETIME = datetime.timedelta(days=3650)
SERVER_LIFETIME = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)
LOOPBACK_NAMES = ("localhost",)
LOOPBACK_ADDRESSES = ("127.0.0.1", "::1")

PrivateKey = ec.EllipticCurvePrivateKey


@dataclass(frozen=True, slots=True)
class TlsFiles:
    ca_file: Path
    cert_file: Path
    key_file: Path


def ensure_loopback_tls(directory: Path, *, now: datetime.datetime | None = None) -> TlsFiles:
    """The authority and server certificate in `directory`, made or renewed as needed."""
    now = now or datetime.datetime.now(datetime.UTC)
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    files = TlsFiles(directory / "ca.crt", directory / "server.crt", directory / "server.key")
    ca_key_file = directory / "ca.key"
    ca = _load(files.ca_file, ca_key_file)
    if ca is None or _expires_soon(ca[0], now):
        ca = _new_authority(now)
        _write_key(ca_key_file, ca[1])
        _write_cert(files.ca_file, ca[0])
        files.cert_file.unlink(missing_ok=True)
    server = _load(files.cert_file, files.key_file)
    if server is None or not _server_fits(server[0], ca[0], now):
        key = ec.generate_private_key(ec.SECP256R1())
        _write_key(files.key_file, key)
        _write_cert(files.cert_file, _server_certificate(key, ca, now))
    return files


def _load(cert_file: Path, key_file: Path) -> tuple[x509.Certificate, PrivateKey] | None:
    try:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    except (OSError, ValueError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != cert.public_key():
        return None  # a key written without its certificate (a crash between the two): make both again
    return cert, key


def _expires_soon(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_after_utc - now < RENEW_BEFORE


def _server_fits(cert: x509.Certificate, ca: x509.Certificate, now: datetime.datetime) -> bool:
    """Issued by this authority, not near its end, naming every loopback name and address."""
    if cert.issuer != ca.subject or _expires_soon(cert, now):
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    dns = set(names.get_values_for_type(x509.DNSName))
    addresses = {str(a) for a in names.get_values_for_type(x509.IPAddress)}
    return dns >= set(LOOPBACK_NAMES) and addresses >= set(LOOPBACK_ADDRESSES)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Berth"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _new_authority(now: datetime.datetime) -> tuple[x509.Certificate, PrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = _name(f"Berth local authority {now:%Y-%m-%d %H:%M:%S}")
    cert = (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + CA_LIFETIME)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def _server_certificate(key: PrivateKey, ca: tuple[x509.Certificate, PrivateKey],
                        now: datetime.datetime) -> x509.Certificate:
    ca_cert, ca_key = ca
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in LOOPBACK_NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(a)) for a in LOOPBACK_ADDRESSES]
    return (x509.CertificateBuilder()
            .subject_name(_name("berth gateway")).issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + SERVER_LIFETIME)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))


def _write_key(path: Path, key: PrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    write_atomically(path, pem, 0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    write_atomically(path, cert.public_bytes(serialization.Encoding.PEM), 0o644)

