"""Berth's one settings object, read from environment variables.

The defaults serve the embedded stack: with neither KAFKA_BOOTSTRAP_SERVERS nor DATABASE_URL set,
`berth up` starts Tansu and PostgreSQL under BERTH_STATE_DIR. Each one that is set points Berth at an
external broker or database instead, and nothing embedded is started for it.

| variable                       | default        | meaning                                           |
| ------------------------------ | -------------- | ------------------------------------------------- |
| KAFKA_BOOTSTRAP_SERVERS        | (embedded)     | host:port[,host:port…] of an external Kafka       |
| DATABASE_URL                   | (embedded)     | postgresql://user:pass@host:port/db               |
| BERTH_TOPIC_PREFIX             | ``berth.``     | prepended to every topic name                     |
| BERTH_STATE_DIR                | ``./.berth``   | embedded data, logs and ``berth.json``            |
| BERTH_SERVICE                  | ``berth``      | service name: client id, consumer group, metrics  |
| BERTH_HTTP_HOST                | ``127.0.0.1``  | health and metrics listen address                 |
| BERTH_HTTP_PORT                | ``0``          | health and metrics port (0 = any free port)       |
| BERTH_PORT_FILE                | (none)         | where to write the port bound, once listening     |
| BERTH_MEMBER_FILE              | (none)         | where to keep the consumer group member id        |
| BERTH_LOG_LEVEL                | ``INFO``       | Python logging level                              |
| BERTH_KAFKA_SESSION_TIMEOUT_MS | ``6000``       | consumer group session timeout                    |
| BERTH_KAFKA_HEARTBEAT_MS       | ``1000``       | consumer group heartbeat interval                 |
| BERTH_KAFKA_MAX_POLL_RECORDS   | ``500``        | most records one fetch hands the loop             |
| BERTH_KAFKA_LINGER_MS          | ``2``          | producer batching delay                           |
| BERTH_KAFKA_MAX_BATCH_BYTES    | ``1048576``    | most bytes a producer batches per partition       |
| BERTH_KAFKA_FETCH_MAX_WAIT_MS  | ``100``        | longest a fetch waits for records to arrive       |
| BERTH_KAFKA_REPLICATION_FACTOR | ``1``          | replication factor of the topics Berth creates    |
| BERTH_PG_OS_USER               | (auto)         | OS user the embedded Postgres runs as under root  |

This module is pure: it reads a mapping and builds a value; it never connects to anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from shared.errors import ConfigurationError

__all__ = ["Settings", "env_int", "load_settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a Berth process needs to find its broker, database and peers."""

    kafka_bootstrap_servers: str | None = None
    database_url: str | None = None
    topic_prefix: str = "berth."
    state_dir: Path = Path(".berth")
    service_name: str = "berth"
    http_host: str = "127.0.0.1"
    http_port: int = 0
    log_level: str = "INFO"
    kafka_session_timeout_ms: int = 6_000
    kafka_heartbeat_ms: int = 1_000
    kafka_max_poll_records: int = 500
    kafka_linger_ms: int = 2
    kafka_max_batch_bytes: int = 1 << 20
    """Most bytes a producer batches per partition (capped at `kafka_max_message_bytes`). One
    batch per partition is in flight at a time and a send waits while its partition's batch is
    full, so a publish of hundreds of events to one partition (the queue's preemption requests all
    go to one) takes a broker round trip per batch; the client's 16 KB default made that dozens."""
    kafka_fetch_max_wait_ms: int = 100
    """The embedded broker answers a fetch that found nothing at the end of this wait, not when
    records arrive: with Kafka's 500 ms a request-answer round trip took a quarter of a second."""
    kafka_replication_factor: int = 1
    kafka_max_message_bytes: int = 16 << 20
    """Largest message produced or fetched (a shard's answer for a big batch on many nodes can pass
    Kafka's 1 MB default; the broker's message.max.bytes must allow it too)."""
    pg_os_user: str | None = None
    port_file: Path | None = None
    """Written with the HTTP port once the service listens: a launcher that lets the service pick
    a free port (BERTH_HTTP_PORT=0) learns it here, with no window for another process to take it."""
    member_file: Path | None = None
    """Where the service keeps its consumer group member id. A service started again under the
    same file (a supervisor's restart after a crash) takes its dead predecessor out of the group
    first: the group then rebalances at once instead of waiting for the dead member's session to
    expire, with the predecessor still its leader."""

    @property
    def embedded_kafka(self) -> bool:
        """True when no external broker is configured and the embedded Tansu must serve."""
        return not self.kafka_bootstrap_servers

    @property
    def embedded_postgres(self) -> bool:
        """True when no external database is configured and the embedded Postgres must serve."""
        return not self.database_url

    def with_endpoints(self, *, kafka_bootstrap_servers: str, database_url: str) -> Settings:
        """The same settings pointed at concrete endpoints (those of a started embedded stack)."""
        return replace(self, kafka_bootstrap_servers=kafka_bootstrap_servers, database_url=database_url)

    def for_service(self, service_name: str) -> Settings:
        return replace(self, service_name=service_name)

    def require_endpoints(self) -> tuple[str, str]:
        """(bootstrap servers, database URL), or ConfigurationError when either is still embedded."""
        if not self.kafka_bootstrap_servers or not self.database_url:
            raise ConfigurationError(
                "KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL must be set (or the embedded stack started first)"
            )
        return self.kafka_bootstrap_servers, self.database_url


Number = TypeVar("Number", int, float)


def _number(env: Mapping[str, str], name: str, default: Number, minimum: Number, parse: Callable[[str], Number],
            kind: str) -> Number:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = parse(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r}: expected {kind}") from None
    if value < minimum:
        raise ConfigurationError(f"{name}={raw!r}: must be at least {minimum}")
    return value


def env_int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    return _number(env, name, default, minimum, int, "an integer")


def env_str(env: Mapping[str, str], name: str, default: str) -> str:
    """The variable's value, stripped; `default` when unset or blank."""
    return env.get(name, "").strip() or default


def env_float(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    return _number(env, name, default, minimum, float, "a number")


FLAG_VALUES = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


AUTO = "auto"
"""The word a flag read by `env_flag_or_auto` may also be."""


def env_flag_or_auto(env: Mapping[str, str], name: str) -> bool | None:
    """A flag that may also say `auto` (None): the reader decides as it runs; unset is off."""
    if env.get(name, "").strip().lower() == AUTO:
        return None
    return env_flag(env, name)


def env_flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in FLAG_VALUES:
        raise ConfigurationError(f"{name}={raw!r}: expected one of {', '.join(FLAG_VALUES)}")
    return FLAG_VALUES[raw]


def _str(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    return raw or None


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Settings from `env` (default: the process environment); keyword overrides win.

    An empty variable counts as unset, so `KAFKA_BOOTSTRAP_SERVERS=` still means "embedded".
    """
    env = os.environ if env is None else env
    default = Settings()
    prefix = env.get("BERTH_TOPIC_PREFIX")
    settings = Settings(
        kafka_bootstrap_servers=_str(env, "KAFKA_BOOTSTRAP_SERVERS"),
        database_url=_str(env, "DATABASE_URL"),
        topic_prefix=default.topic_prefix if prefix is None else prefix.strip(),
        state_dir=Path(_str(env, "BERTH_STATE_DIR") or default.state_dir),
        service_name=_str(env, "BERTH_SERVICE") or default.service_name,
        http_host=_str(env, "BERTH_HTTP_HOST") or default.http_host,
        http_port=env_int(env, "BERTH_HTTP_PORT", default.http_port),
        log_level=(_str(env, "BERTH_LOG_LEVEL") or default.log_level).upper(),
        kafka_session_timeout_ms=env_int(
            env, "BERTH_KAFKA_SESSION_TIMEOUT_MS", default.kafka_session_timeout_ms, minimum=1
        ),
        kafka_heartbeat_ms=env_int(env, "BERTH_KAFKA_HEARTBEAT_MS", default.kafka_heartbeat_ms, minimum=1),
        kafka_max_poll_records=env_int(env, "BERTH_KAFKA_MAX_POLL_RECORDS", default.kafka_max_poll_records, minimum=1),
        kafka_linger_ms=env_int(env, "BERTH_KAFKA_LINGER_MS", default.kafka_linger_ms),
        kafka_max_batch_bytes=env_int(env, "BERTH_KAFKA_MAX_BATCH_BYTES", default.kafka_max_batch_bytes, minimum=1024),
        kafka_fetch_max_wait_ms=env_int(env, "BERTH_KAFKA_FETCH_MAX_WAIT_MS", default.kafka_fetch_max_wait_ms,
                                        minimum=1),
        kafka_replication_factor=env_int(
            env, "BERTH_KAFKA_REPLICATION_FACTOR", default.kafka_replication_factor, minimum=1
        ),
        kafka_max_message_bytes=env_int(
            env, "BERTH_KAFKA_MAX_MESSAGE_BYTES", default.kafka_max_message_bytes, minimum=1 << 20
        ),
        pg_os_user=_str(env, "BERTH_PG_OS_USER"),
        port_file=Path(port_file) if (port_file := _str(env, "BERTH_PORT_FILE")) else None,
        member_file=Path(member_file) if (member_file := _str(env, "BERTH_MEMBER_FILE")) else None,
    )
    if settings.http_port > 65535:
        raise ConfigurationError(f"BERTH_HTTP_PORT={settings.http_port}: not a TCP port")
    if settings.kafka_heartbeat_ms >= settings.kafka_session_timeout_ms:
        raise ConfigurationError("BERTH_KAFKA_HEARTBEAT_MS must be below BERTH_KAFKA_SESSION_TIMEOUT_MS")
    return replace(settings, **overrides) if overrides else settings  # type: ignore[arg-type]  # overrides name fields


def load_service_settings(service: str, env: Mapping[str, str] | None = None) -> Settings:
    """A service's settings: `load_settings`, named after the service unless BERTH_SERVICE names it."""
    base = load_settings(env)
    return base.for_service(service) if base.service_name == Settings().service_name else base
