"""Gateway settings: the shared settings plus the API token and request limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.environment import service_environment
from services.runtime.scheduler_config import load_scheduler_config
from shared.errors import ConfigurationError
from shared.model.config import DEFAULT_SCHEDULER_NAME
from shared.settings import Settings, env_flag, env_float, env_int

SERVICE = "gateway"
MAX_BODY_BYTES = 32 * 1024 * 1024
"""A request body's limit: `berth apply` sends a file larger than BATCH_BYTES in batches below it."""
MAX_OBJECTS = 10_000
"""Objects in one request: twice the most Berth's own tools send at once (`berth chaos` applies its
5,000 nodes in one request); `berth apply` sends a file of more in batches of BATCH_OBJECTS."""
BODY_TIMEOUT_S = 30.0
"""The time to send a whole body: a `berth apply` batch (8 MiB) at about 280 KB/s."""
MAX_STREAMS_PER_CLIENT = 4
"""Follow streams of the event log one client address may hold: a few terminals or dashboards."""
MAX_STREAMS = 32
"""Follow streams in all: 128 short queries a second against a pool of 10 connections."""
READABLE_WITHIN_S = 5.0
"""A write's wait for its events to be readable: the projector stores them within tens of
milliseconds when it runs; past this the write answers all the same, with a warning."""


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    base: Settings
    api_token: str
    """The admin token: reads and writes (BERTH_API_TOKEN)."""
    viewer_token: str = ""
    """The viewer token: reads only (BERTH_VIEWER_TOKEN; unset: no viewer role)."""
    metrics_auth: bool = False
    """Whether /metrics needs a token too (BERTH_METRICS_AUTH=1)."""
    max_body_bytes: int = MAX_BODY_BYTES
    """Largest request body accepted (BERTH_GATEWAY_MAX_BODY_BYTES)."""
    tls_cert_file: str = ""
    """The server certificate (chain) in PEM (BERTH_TLS_CERT_FILE; unset: plain HTTP)."""
    tls_key_file: str = ""
    """Its private key in PEM (BERTH_TLS_KEY_FILE)."""
    max_objects: int = MAX_OBJECTS
    """Most objects in one apply or create body (BERTH_GATEWAY_MAX_OBJECTS)."""
    body_timeout_s: float = BODY_TIMEOUT_S
    """Longest a client may take to send a request body (BERTH_GATEWAY_BODY_TIMEOUT_S)."""
    max_streams_per_client: int = MAX_STREAMS_PER_CLIENT
    """Concurrent follows and watches per client address (BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT)."""
    max_streams: int = MAX_STREAMS
    """Concurrent follows and watches in all (BERTH_GATEWAY_MAX_STREAMS)."""
    scheduler_names: frozenset[str] = frozenset({"default-scheduler"})
    """The schedulerNames Berth's profiles serve (BERTH_SCHEDULER_CONFIG): pods of any other scheduler
    may be bound through the API's binding subresource."""
    publish_batch: int = 2000
    """Events per publish call when an apply is large: bounds the producer's buffered memory."""
    readable_within_s: float = READABLE_WITHIN_S
    """How long a write of the Kubernetes API waits, before it answers, for the event store (and
    with it the read model) to hold what it published (BERTH_GATEWAY_READABLE_WITHIN_S; 0: no wait)."""


def load(env: Mapping[str, str] | None = None) -> GatewaySettings:
    env, base = service_environment(SERVICE, env)
    token = env.get("BERTH_API_TOKEN", "").strip()
    if not token:
        raise ConfigurationError("BERTH_API_TOKEN must be set (make one with: openssl rand -base64 24): "
                                 "every request to the gateway needs a token")
    viewer = env.get("BERTH_VIEWER_TOKEN", "").strip()
    if viewer == token:
        raise ConfigurationError("BERTH_VIEWER_TOKEN must differ from BERTH_API_TOKEN: a viewer may only read")
    metrics_auth = env_flag(env, "BERTH_METRICS_AUTH")
    max_body = env_int(env, "BERTH_GATEWAY_MAX_BODY_BYTES", MAX_BODY_BYTES, minimum=1)
    max_objects = env_int(env, "BERTH_GATEWAY_MAX_OBJECTS", MAX_OBJECTS, minimum=1)
    body_timeout = env_float(env, "BERTH_GATEWAY_BODY_TIMEOUT_S", BODY_TIMEOUT_S, minimum=0.1)
    streams_per_client = env_int(env, "BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT", MAX_STREAMS_PER_CLIENT, minimum=1)
    streams = env_int(env, "BERTH_GATEWAY_MAX_STREAMS", MAX_STREAMS, minimum=1)
    readable = env_float(env, "BERTH_GATEWAY_READABLE_WITHIN_S", READABLE_WITHIN_S, minimum=0.0)
    cert, key = env.get("BERTH_TLS_CERT_FILE", "").strip(), env.get("BERTH_TLS_KEY_FILE", "").strip()
    if bool(cert) != bool(key):
        raise ConfigurationError("BERTH_TLS_CERT_FILE and BERTH_TLS_KEY_FILE go together: set both to serve "
                                 "HTTPS, or neither")
    return GatewaySettings(base=base, api_token=token, viewer_token=viewer, metrics_auth=metrics_auth,
                           max_body_bytes=max_body, max_objects=max_objects, body_timeout_s=body_timeout,
                           max_streams_per_client=streams_per_client, max_streams=streams,
                           tls_cert_file=cert, tls_key_file=key, scheduler_names=_scheduler_names(env),
                           readable_within_s=readable)


def _scheduler_names(env: Mapping[str, str]) -> frozenset[str]:
    config = load_scheduler_config(env)
    if config is None or not config.profiles:
        return frozenset({DEFAULT_SCHEDULER_NAME})
    return frozenset(p.scheduler_name for p in config.profiles)
