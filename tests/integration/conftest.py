"""Integration tests run against a real Kafka-compatible broker and a real PostgreSQL: the
environment's (KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL), testcontainers when Docker answers, or the
embedded Tansu + PostgreSQL pair, started once per session. See backends.py and fixtures.py."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fixtures import backend, berth_env, engine, producer, publisher  # noqa: F401


@pytest.fixture
def state() -> Iterator[Path]:
    """Under /tmp directly: the embedded PostgreSQL may run as another user and must reach it."""
    path = Path(tempfile.mkdtemp(prefix="berth-up-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
