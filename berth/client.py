"""Finding the cluster and talking to its gateway (stdlib HTTP: commands stay quick to start).

The cluster is found, in order, through
1. `BERTH_URL` + `BERTH_TOKEN` (a cluster started elsewhere, e.g. docker compose), and `BERTH_CA`
   when its gateway's certificate is not signed by an authority the system trusts;
2. `--state-dir` / `BERTH_STATE_DIR` (default `./.berth`): the `berth.json` that `berth up` writes
   (its gateway's URL, token and certificate authority).
An https gateway's certificate is always verified.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.model.api_fields import FieldValidation

EXIT_ERROR = 1
EXIT_INVALID_INPUT = 2
STATE_FILE = "berth.json"


class CliError(Exception):
    """A failure the command reports on one line and turns into an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class ClusterInfo:
    gateway_url: str
    api_token: str
    kafka_bootstrap_servers: str | None = None
    database_url: str | None = None
    topic_prefix: str = "berth."
    ca_file: str | None = None
    """The authority an https gateway's certificate is checked against (None: the system's)."""

    def tls(self) -> ssl.SSLContext | None:
        """How to verify the gateway: None over plain http."""
        if not self.gateway_url.startswith("https:"):
            return None
        try:
            return ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise CliError(f"cannot read the certificate authority {self.ca_file}: {exc}") from None


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", metavar="DIR", help="where `berth up` wrote berth.json "
                   "(default: $BERTH_STATE_DIR or ./.berth)")


def state_dir(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "state_dir", None) or os.environ.get("BERTH_STATE_DIR") or ".berth")


def find_cluster(args: argparse.Namespace) -> ClusterInfo:
    url, token = os.environ.get("BERTH_URL", "").strip(), os.environ.get("BERTH_TOKEN", "").strip()
    prefix = os.environ.get("BERTH_TOPIC_PREFIX")
    ca = os.environ.get("BERTH_CA", "").strip() or None
    if url and not getattr(args, "state_dir", None):
        return ClusterInfo(url.rstrip("/"), token, os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or None,
                           os.environ.get("DATABASE_URL") or None, "berth." if prefix is None else prefix, ca)
    path = state_dir(args) / STATE_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CliError(f"no cluster found: {path} does not exist (start one with `berth up`, "
                       "or set BERTH_URL and BERTH_TOKEN)") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read {path}: {exc}") from None
    return ClusterInfo(data["gateway_url"].rstrip("/"), data.get("api_token", ""),
                       data.get("kafka_bootstrap_servers"), data.get("database_url"),
                       data.get("topic_prefix", "berth."), ca or data.get("ca_file"))


class Gateway:
    """A thin JSON client of the gateway; non-2xx answers become `CliError` with the Status message."""

    def __init__(self, info: ClusterInfo, timeout: float = 60.0) -> None:
        self.info = info
        self.timeout = timeout
        self.tls = info.tls()

    def request(self, method: str, path: str, body: bytes | None = None, *, content_type: str = "application/json",
                progress: Callable[[int, int], None] | None = None) -> Any:
        headers = {"Accept": "application/json"}
        if self.info.api_token:
            headers["Authorization"] = f"Bearer {self.info.api_token}"
        data: bytes | Iterator[bytes] | None = body
        if body is not None:
            headers["Content-Type"] = content_type
            headers["Content-Length"] = str(len(body))
            if progress is not None:
                data = _chunks(body, progress)
        req = urllib.request.Request(self.info.gateway_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.tls) as resp:
                for warning in resp.headers.get_all("Warning") or []:
                    print(f"Warning: {_warning_text(warning)}", file=sys.stderr)
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise _status_error(exc) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise CliError(f"the gateway at {self.info.gateway_url} is not who it says: {reason.verify_message} "
                               "(BERTH_CA names the authority that signed its certificate)") from None
            raise CliError(f"cannot reach the gateway at {self.info.gateway_url}: {reason}") from None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)


def read_input(path: str) -> bytes:
    """A file named on the command line ("-": standard input), or a CliError saying why not."""
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc.strerror}", EXIT_INVALID_INPUT) from None


def _warning_text(header: str) -> str:
    """The text of an HTTP Warning header (`299 - "text"`), as kubectl prints it."""
    code, _, rest = header.partition(" - ")
    rest = rest.strip()
    if code.strip() == "299" and len(rest) >= 2 and rest[0] == rest[-1] == '"':
        return rest[1:-1].replace('\\"', '"')
    return header


def add_validate_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--validate", choices=("strict", "warn", "ignore"), default="strict",
                   help="fields the Kubernetes API does not declare: refuse them (strict, the default, as "
                        "kubectl), accept them with a warning (warn) or drop them silently (ignore)")


def field_validation(args: argparse.Namespace) -> FieldValidation:
    by_flag: dict[str, FieldValidation] = {"strict": "Strict", "warn": "Warn", "ignore": "Ignore"}
    return by_flag[args.validate]


def _chunks(body: bytes, progress: Callable[[int, int], None], size: int = 256 * 1024) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start:start + size]
        progress(min(start + size, len(body)), len(body))


def _status_error(exc: urllib.error.HTTPError) -> CliError:
    try:
        status = json.loads(exc.read())
    except ValueError:
        status = {}
    message = status.get("message") or f"HTTP {exc.code} {exc.reason}"
    if exc.code == 401:
        message += " (check BERTH_TOKEN or the api_token in berth.json)"
    # 422: an invalid object; 400: a request the gateway cannot read (a selector, say).
    return CliError(f"error: {message}", EXIT_INVALID_INPUT if exc.code in (400, 422) else EXIT_ERROR)


def run_guarded(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a command: a `CliError` prints its message on stderr and becomes the exit code."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except CliError as exc:
            text = str(exc)
            print(text if text.startswith("error:") else f"error: {text}", file=sys.stderr)
            return exc.exit_code

    return run
