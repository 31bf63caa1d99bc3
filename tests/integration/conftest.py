"""Integration tests run against a real Kafka-compatible broker and a real PostgreSQL: the
environment's (KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL), testcontainers when Docker answers, or the
embedded Tansu + PostgreSQL pair, started once per session. See backends.py and fixtures.py."""

from .fixtures import backend, berth_env, engine, producer, publisher  # noqa: F401
