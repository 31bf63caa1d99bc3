"""The HTTP scheduler extender (upstream pkg/scheduler/extender.go HTTPExtender): blocking JSON
POSTs to urlPrefix + "/" + verb with urllib, a per-call timeout (httpTimeout, 5 s by default) and
TLS as the configuration asks, the server's certificate verified unless tlsConfig.insecure.
Failures are raised; the scheduling cycle turns them into attempt failures unless the extender is
ignorable."""

from __future__ import annotations

import base64
import binascii
import os
import re
import socket
import ssl
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import msgspec

from shared.errors import InvalidInput
from shared.extender import (
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderError,
    ExtenderFilterResult,
    ExtenderPreemptionResult,
    HostPriority,
    PodsOnNode,
    filter_args,
    filter_result,
    interested,
    preemption_args,
    preemption_result,
    prioritize_result,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.model.config import Extender, ExtenderTLSConfig, KubeSchedulerConfiguration
from shared.preemption.victims import Victims

DEFAULT_TIMEOUT_SECONDS = 5.0
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
T = TypeVar("T")


def parse_duration(value: str | float | None) -> float:
    """Seconds from a Go duration ("5s", "500ms", "1m30s") or a number of seconds; 0 or unset
    means the default of 5 s, as upstream."""
    if value is None:
        return DEFAULT_TIMEOUT_SECONDS
    if isinstance(value, bool):
        raise TypeError(f"invalid duration {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = value.strip()
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        if body == "0":
            return DEFAULT_TIMEOUT_SECONDS
        pos, seconds = 0, 0.0
        while pos < len(body):
            m = _PART.match(body, pos)
            if m is None:
                raise ValueError(f'time: invalid duration "{value}"')
            seconds += float(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
        if not body:
            raise ValueError(f'time: invalid duration "{value}"')
        seconds *= sign
    if seconds < 0:
        raise ValueError(f"invalid duration {value!r}: must not be negative")
    return seconds or DEFAULT_TIMEOUT_SECONDS


def _pem(data: str) -> str:
    """caData/certData/keyData are []byte in the configuration, so base64 in YAML/JSON; PEM text is
    accepted as well."""
    if "-----BEGIN" in data:
        return data
    try:
        return base64.b64decode(data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return data


def _is_https(config: Extender) -> bool:
    """The URL decides the scheme, as upstream: an https:// urlPrefix is TLS without enableHTTPS,
    and an http:// one stays plain HTTP with it."""
    return config.url_prefix[:8].lower() == "https://"


class _ExtenderTLS(ssl.SSLContext):
    """A client context that presents and checks tlsConfig.serverName, when set, instead of the
    URL's host (Go's tls.Config.ServerName): urllib has no other way to pass server_hostname."""

    server_name = ""

    def wrap_socket(self, sock: socket.socket, server_side: bool = False, do_handshake_on_connect: bool = True,
                    suppress_ragged_eofs: bool = True, server_hostname: str | bytes | None = None,
                    session: ssl.SSLSession | None = None) -> ssl.SSLSocket:
        return super().wrap_socket(sock, server_side, do_handshake_on_connect, suppress_ragged_eofs,
                                   self.server_name or server_hostname, session)


def ssl_context(config: Extender) -> ssl.SSLContext | None:
    """The extender's TLS settings; None for plain http without any. Unlike upstream's makeTransport,
    which skips verification when enableHTTPS is set without a CA, the server's certificate and host
    name are verified (against caFile/caData, else the system's trust store) unless
    tlsConfig.insecure is true."""
    tls = config.tls_config or ExtenderTLSConfig()
    if not (config.enable_https or _is_https(config)) and tls == ExtenderTLSConfig():
        return None
    has_ca = bool(tls.ca_file or tls.ca_data)
    if tls.insecure and has_ca:
        # Upstream's TLSConfigFor refuses the pair too: which one was meant is unclear.
        raise ValueError("specifying a root certificates file with the insecure flag is not allowed")
    ctx = _ExtenderTLS(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname by default
    ctx.server_name = tls.server_name
    if tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif has_ca:
        ctx.load_verify_locations(cafile=tls.ca_file or None, cadata=_pem(tls.ca_data) if tls.ca_data else None)
    else:
        ctx.load_default_certs()
    if tls.cert_file:
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
    elif tls.cert_data:
        _load_cert_data(ctx, _pem(tls.cert_data), _pem(tls.key_data) if tls.key_data else "")
    return ctx


def _load_cert_data(ctx: ssl.SSLContext, cert: str, key: str) -> None:
    """ssl loads client certificates from files only: write them to private temporary files."""
    paths: list[str] = []
    try:
        for text in (cert, key):
            if not text:
                continue
            fd, path = tempfile.mkstemp(suffix=".pem")
            paths.append(path)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        ctx.load_cert_chain(paths[0], paths[1] if len(paths) > 1 else None)
    finally:
        for path in paths:
            os.unlink(path)


class HTTPExtender:
    """One `extenders:` entry of KubeSchedulerConfiguration. Its name is its urlPrefix."""

    def __init__(self, config: Extender, node_info: Callable[[str], NodeInfo | None] | None = None) -> None:
        self.config = config
        self.name = config.url_prefix
        self.url_prefix = config.url_prefix.rstrip("/")
        self.timeout = parse_duration(config.http_timeout)
        self.weight = config.weight
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        self.context = ssl_context(config)
        self.node_info = node_info

    # -- what the scheduler asks ----------------------------------------------------------------
    def is_interested(self, pod: PodInfo) -> bool:
        return interested(pod, self.managed_resources)

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def supports_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def supports_prioritize(self) -> bool:
        return bool(self.config.prioritize_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Ask the extender to bind; its error (or an HTTP failure) is raised as ExtenderError."""
        if not self.config.bind_verb:
            raise ExtenderError(f"unexpected empty bindVerb in extender {self.name}")
        args = ExtenderBindingArgs(pod_name=pod.name, pod_namespace=pod.namespace, pod_uid=pod.uid, node=node_name)
        result = self._send(self.config.bind_verb, args, ExtenderBindingResult)
        if result.error:
            raise ExtenderError(result.error)

    def filter(self, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        if not self.config.filter_verb:
            return list(nodes), {}, {}
        args = filter_args(pod, nodes, self.config.node_cache_capable)
        result = self._send(self.config.filter_verb, args, ExtenderFilterResult)
        return filter_result(self.name, result, nodes, self.config.node_cache_capable)

    def prioritize(self, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[dict[str, int], int]:
        if not self.config.prioritize_verb:
            return {n.name: 0 for n in nodes}, 0
        args = filter_args(pod, nodes, self.config.node_cache_capable)
        result = self._send(self.config.prioritize_verb, args, list[HostPriority])
        return prioritize_result(result), self.weight

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims]) -> dict[str, Victims]:
        if not self.config.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption")
        args = preemption_args(pod, node_to_victims, self.config.node_cache_capable)
        result = self._send(self.config.preempt_verb, args, ExtenderPreemptionResult)
        return preemption_result(self.name, result, self._lookup(node_to_victims), Victims)

    def _lookup(self, node_to_victims: dict[str, Victims]) -> Callable[[str], PodsOnNode | None]:
        if self.node_info is not None:
            return self.node_info
        # Without a snapshot, the victims that were sent are the pods the extender may name.
        def from_victims(name: str) -> PodsOnNode | None:
            victims = node_to_victims.get(name)
            return None if victims is None else _PodsOnly(victims.pods)
        return from_victims

    # -- the wire ----------------------------------------------------------------------------------
    def _send(self, verb: str, args: Any, result_type: type[T]) -> T:
        url = f"{self.url_prefix}/{verb}"
        request = urllib.request.Request(url, data=msgspec.json.encode(args), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as response:
                body = response.read()
                code = response.status
        except urllib.error.HTTPError as exc:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise ExtenderError(f'Post "{url}": {_reason(exc)}') from None
        if code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {code}")
        try:
            return msgspec.json.decode(body, type=result_type)
        except msgspec.DecodeError as exc:
            raise ExtenderError(f"extender at URL {url} answered {verb} with invalid JSON: {exc}") from None


def _reason(exc: OSError) -> str:
    """Why a call failed, a refused certificate worded as Go's client words it."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"tls: failed to verify certificate: {reason.verify_message or reason}"
    return str(reason)


class _PodsOnly:
    __slots__ = ("pods",)

    def __init__(self, pods: Sequence[PodInfo]) -> None:
        self.pods = list(pods)


def build_extenders(config: KubeSchedulerConfiguration | None,
                    node_info: Callable[[str], NodeInfo | None] | None = None) -> list[HTTPExtender]:
    """The configured extenders, in order, validated as upstream's ValidateKubeSchedulerConfiguration."""
    out: list[HTTPExtender] = []
    if config is None:
        return out
    binders = sum(1 for ext in config.extenders if ext.bind_verb)
    if binders > 1:
        raise InvalidInput("KubeSchedulerConfiguration", "extenders",
                           f"found {binders} extenders implementing bind: only one extender can implement bind")
    for i, ext in enumerate(config.extenders):
        where = f"extenders[{i}]"
        if ext.prioritize_verb and ext.weight <= 0:
            raise InvalidInput("KubeSchedulerConfiguration", f"{where}.weight",
                               "must have a positive weight applied to it")
        try:
            parse_duration(ext.http_timeout)
        except (ValueError, TypeError) as exc:
            raise InvalidInput("KubeSchedulerConfiguration", f"{where}.httpTimeout", str(exc)) from None
        try:
            out.append(HTTPExtender(ext, node_info))
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            raise InvalidInput("KubeSchedulerConfiguration", f"{where}.tlsConfig", str(exc)) from None
    return out


__all__ = ["DEFAULT_TIMEOUT_SECONDS", "HTTPExtender", "build_extenders", "parse_duration",
           "ssl_context"]
