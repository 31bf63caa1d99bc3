"""Contract suites run each port against its in-memory and its real implementation; the real ones
use the integration fixtures (real broker and database)."""

from tests.integration.fixtures import backend, berth_env, engine, producer, publisher  # noqa: F401
