"""Settings from the environment and the error tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.preemption.settings import load as load_preemption
from services.runtime.port_file import announce_port
from shared.errors import (
    BerthError,
    BrokerUnavailable,
    ConfigurationError,
    Conflict,
    DatabaseUnavailable,
    DecodeError,
    DomainError,
    EmbeddedStackError,
    InfrastructureError,
    InvalidInput,
    NotFound,
    is_retriable,
)
from shared.settings import Settings, load_settings


def test_defaults_serve_the_embedded_stack() -> None:
    s = load_settings({})
    assert s == Settings()
    assert s.embedded_kafka and s.embedded_postgres
    assert s.state_dir == Path(".berth") and s.topic_prefix == "berth."


def test_external_endpoints_switch_off_embedding() -> None:
    s = load_settings({"KAFKA_BOOTSTRAP_SERVERS": "k:9092", "DATABASE_URL": "postgresql://u@h/db",
                       "BERTH_TOPIC_PREFIX": "", "BERTH_STATE_DIR": "/tmp/x", "BERTH_HTTP_PORT": "9100"})
    assert not s.embedded_kafka and not s.embedded_postgres
    assert s.require_endpoints() == ("k:9092", "postgresql://u@h/db")
    assert s.topic_prefix == "" and s.state_dir == Path("/tmp/x") and s.http_port == 9100


def test_empty_values_count_as_unset_and_overrides_win() -> None:
    s = load_settings({"KAFKA_BOOTSTRAP_SERVERS": " ", "BERTH_SERVICE": "binder"}, http_port=7)
    assert s.embedded_kafka and s.service_name == "binder" and s.http_port == 7
    with pytest.raises(ConfigurationError):
        s.require_endpoints()


@pytest.mark.parametrize(
    "env",
    [{"BERTH_HTTP_PORT": "eighty"}, {"BERTH_HTTP_PORT": "70000"}, {"BERTH_KAFKA_HEARTBEAT_MS": "20000"},
     {"BERTH_KAFKA_SESSION_TIMEOUT_MS": "0"}],
    ids=["not-int", "not-port", "heartbeat-above-session", "zero-timeout"],
)
def test_bad_settings_are_configuration_errors(env: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        load_settings(env)


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().topic_prefix = "x"  # type: ignore[misc]  # frozen: the point


def test_invalid_input_reads_like_upstream() -> None:
    err = InvalidInput("Pod default/p", "spec.priority", "expected an integer")
    assert str(err) == "Pod default/p: spec.priority: expected an integer"
    assert (err.obj, err.field, err.reason) == ("Pod default/p", "spec.priority", "expected an integer")
    assert str(InvalidInput("config.yaml", "", "not YAML")) == "config.yaml: not YAML"


@pytest.mark.parametrize(
    ("error", "retriable", "family"),
    [
        (InvalidInput("o", "f", "r"), False, DomainError),
        (DecodeError("bad", topic="pods"), False, DomainError),
        (NotFound("pod", "default/p"), False, Conflict),
        (BrokerUnavailable("down"), True, InfrastructureError),
        (DatabaseUnavailable("down"), True, InfrastructureError),
        (ConfigurationError("bad url"), False, InfrastructureError),
        (EmbeddedStackError("no start"), False, InfrastructureError),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_error_tree(error: BerthError, retriable: bool, family: type) -> None:
    assert isinstance(error, family) and isinstance(error, BerthError)
    assert error.retriable is retriable and is_retriable(error) is retriable


def test_foreign_errors_are_not_retriable() -> None:
    assert not is_retriable(RuntimeError("bug"))
    assert str(NotFound("pod", "default/p")) == 'pod "default/p" not found'


def test_a_service_announces_its_bound_port_in_its_port_file(tmp_path: Path) -> None:
    port_file = tmp_path / "queue.port"
    settings = load_settings({"BERTH_PORT_FILE": str(port_file)})
    assert settings.port_file == port_file
    announce_port(settings, 43123)
    assert port_file.read_text() == "43123\n"
    assert not list(tmp_path.glob("*.partial"))
    announce_port(load_settings({}), 43123)  # no port file asked for: nothing written anywhere
    assert [p.name for p in tmp_path.iterdir()] == ["queue.port"]


def test_the_preemption_batch_size_is_read_and_checked() -> None:
    assert load_preemption({}).batch_size == 64
    assert load_preemption({"BERTH_PREEMPTION_BATCH": "16"}).batch_size == 16
    with pytest.raises(ConfigurationError, match="BERTH_PREEMPTION_BATCH='0': must be at least 1"):
        load_preemption({"BERTH_PREEMPTION_BATCH": "0"})


def test_the_fetch_wait_is_read_and_checked() -> None:
    assert load_settings({}).kafka_fetch_max_wait_ms == 100
    assert load_settings({"BERTH_KAFKA_FETCH_MAX_WAIT_MS": "500"}).kafka_fetch_max_wait_ms == 500
    with pytest.raises(ConfigurationError, match="BERTH_KAFKA_FETCH_MAX_WAIT_MS='soon': expected an integer"):
        load_settings({"BERTH_KAFKA_FETCH_MAX_WAIT_MS": "soon"})


async def test_the_producer_batch_size_is_read_checked_and_given_to_the_producer() -> None:
    from shared.adapters.kafka import make_producer

    assert load_settings({}).kafka_max_batch_bytes == 1 << 20
    assert load_settings({"BERTH_KAFKA_MAX_BATCH_BYTES": "65536"}).kafka_max_batch_bytes == 65536
    with pytest.raises(ConfigurationError, match="BERTH_KAFKA_MAX_BATCH_BYTES='10': must be at least 1024"):
        load_settings({"BERTH_KAFKA_MAX_BATCH_BYTES": "10"})
    broker = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9"}
    producer = make_producer(load_settings(broker))  # not started: nothing connects
    assert producer._message_accumulator._batch_size == 1 << 20  # noqa: SLF001 - the client keeps no public copy
    await producer.stop()
    capped = make_producer(load_settings({**broker, "BERTH_KAFKA_MAX_BATCH_BYTES": str(4 << 20),
                                          "BERTH_KAFKA_MAX_MESSAGE_BYTES": str(2 << 20)}))
    assert capped._message_accumulator._batch_size == 2 << 20  # noqa: SLF001 - never above the largest request
    await capped.stop()
