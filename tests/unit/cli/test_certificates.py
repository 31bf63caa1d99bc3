"""`berth up`'s private authority and loopback certificate: made once, kept, renewed near their end."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509

from berth.stack.certificates import RENEW_BEFORE, SERVER_LIFETIME, ensure_loopback_tls


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_the_server_certificate_names_loopback_and_chains_to_the_authority(tmp_path: Path) -> None:
    files = ensure_loopback_tls(tmp_path / "tls")
    names = _cert(files.cert_file).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert set(names.get_values_for_type(x509.IPAddress)) == {ipaddress.ip_address("127.0.0.1"),
                                                              ipaddress.ip_address("::1")}
    client = ssl.create_default_context(cafile=str(files.ca_file))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(files.cert_file, files.key_file)  # the key matches the certificate
    assert client.verify_mode == ssl.CERT_REQUIRED
    assert (files.key_file.stat().st_mode & 0o777, (tmp_path / "tls" / "ca.key").stat().st_mode & 0o777) == (
        0o600, 0o600), "private keys are their owner's alone"
    assert (tmp_path / "tls").stat().st_mode & 0o777 == 0o700


def test_a_second_start_keeps_both_and_a_certificate_near_its_end_is_issued_again(tmp_path: Path) -> None:
    first = ensure_loopback_tls(tmp_path)
    ca, server = first.ca_file.read_bytes(), first.cert_file.read_bytes()
    again = ensure_loopback_tls(tmp_path)
    assert (again.ca_file.read_bytes(), again.cert_file.read_bytes()) == (ca, server), "clients keep trusting it"
    later = datetime.datetime.now(datetime.UTC) + SERVER_LIFETIME - RENEW_BEFORE + datetime.timedelta(days=1)
    renewed = ensure_loopback_tls(tmp_path, now=later)
    assert renewed.ca_file.read_bytes() == ca, "the authority outlives the server certificate"
    assert renewed.cert_file.read_bytes() != server
    assert _cert(renewed.cert_file).issuer == _cert(renewed.ca_file).subject


def test_a_damaged_file_is_made_again(tmp_path: Path) -> None:
    files = ensure_loopback_tls(tmp_path)
    files.key_file.write_text("not a key")
    ensure_loopback_tls(tmp_path)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(files.cert_file, files.key_file)


def test_a_key_left_without_its_certificate_is_made_again_with_one(tmp_path: Path) -> None:
    """A crash between writing a new key and its certificate leaves a pair that does not match."""
    files = ensure_loopback_tls(tmp_path)
    other = ensure_loopback_tls(tmp_path / "other")
    files.key_file.write_bytes(other.key_file.read_bytes())
    ensure_loopback_tls(tmp_path)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(files.cert_file, files.key_file)
    ssl.create_default_context(cafile=str(files.ca_file))  # and the authority still reads
