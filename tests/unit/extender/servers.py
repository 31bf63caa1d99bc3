"""Loads the example extender servers (examples/extenders/) and runs them on free local ports, over
http or, given a server TLS context, https."""

from __future__ import annotations

import importlib.util
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "extenders"


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"berth_example_extender_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Cert(NamedTuple):
    cert: Path
    key: Path


def self_signed(directory: Path, name: str, *alt_names: str) -> Cert:
    """A self-signed certificate (its own CA) for the given subjectAltNames, e.g. "DNS:localhost",
    "IP:127.0.0.1", made with the openssl CLI; the key is unencrypted."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert),
                    "-addext", "subjectAltName=" + ",".join(alt_names)],
                   check=True, capture_output=True)
    return Cert(cert, key)


def server_tls(cert: Cert, client_ca: Path | None = None) -> ssl.SSLContext:
    """A server context presenting `cert`; with `client_ca`, clients must present a certificate it
    signed."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert.cert, cert.key)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(client_ca)
    return ctx


def https_url(server: Any) -> str:
    return "https://" + server.url.removeprefix("http://")


@contextmanager
def running(name: str, tls: ssl.SSLContext | None = None, **options: Any) -> Iterator[Any]:
    """The example `name` serving on 127.0.0.1 (a free port) for the duration of the block; with
    `tls`, over https (its URL is https_url(server))."""
    server = example(name).make_server("127.0.0.1", 0, **options)
    if tls is not None:
        # The handshake runs in accept(): a client that refuses the certificate is dropped quietly.
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()
