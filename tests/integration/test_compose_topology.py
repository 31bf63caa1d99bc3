"""docker-compose.yml's topology run without Docker: its `migrate` step and every Berth service's
command with the file's environment, hosts rewritten to a broker that has no topics for this
cluster and a fresh database, pods applied through the gateway with the file's token."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.stack.pgserver import drop_database
from shared.adapters.kafka import make_admin
from shared.settings import load_settings

from .backends import Backend, create_test_database
from .user_cluster import CLUSTER

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BERTH_SERVICES = ("gateway", "projector", "binder", "filter", "preemption", "queue")


class MissingVariable(Exception):
    """Compose's `${VAR:?message}` with VAR unset or empty: compose refuses to start."""


def _interpolate(value: str, variables: Mapping[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}`, `${VAR:?message}` and `$$`."""
    def one(match: re.Match[str]) -> str:
        name, kind, rest = match.group(1), match.group(3), match.group(4)
        got = variables.get(name, "")
        if kind == "?" and not got:
            raise MissingVariable(f"{name}: {rest}")
        return got if got or kind is None else rest

    return re.sub(r"\$\{(\w+)(:([-?])([^}]*))?\}", one, value).replace("$$", "$")


def _environment(service: dict[str, Any], variables: Mapping[str, str]) -> dict[str, str]:
    env = service.get("environment") or {}
    return {k: _interpolate(str(v), variables) for k, v in env.items()}


def _rewritten(env: dict[str, str], bootstrap: str, database_url: str, port_file: Path) -> dict[str, str]:
    """The service's environment pointed at this machine: compose's hosts (kafka, postgres) and its
    fixed port 8080 replaced, the rest as the file says."""
    assert env["KAFKA_BOOTSTRAP_SERVERS"] == "kafka:9092" and "@postgres:5432/" in env["DATABASE_URL"]
    out = {**env, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "DATABASE_URL": database_url}
    if "BERTH_HTTP_PORT" in out:
        out.update(BERTH_HTTP_HOST="127.0.0.1", BERTH_HTTP_PORT="0", BERTH_PORT_FILE=str(port_file))
    return out


@pytest.fixture
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture
async def bare(backend: Backend) -> Any:
    """A database of its own and a topic prefix no topic exists under yet."""
    name, url = await create_test_database(backend)
    try:
        yield backend, url, f"c{uuid.uuid4().hex[:10]}."
    finally:
        await drop_database(backend.admin_database_url, name)


def _base_env(backend: Backend) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BERTH_URL", "BERTH_TOKEN", "BERTH_API_TOKEN")}
    env["BERTH_KAFKA_SESSION_TIMEOUT_MS"] = str(backend.session_timeout_ms)
    env["BERTH_KAFKA_HEARTBEAT_MS"] = str(backend.session_timeout_ms // 10)
    env["PYTHONPATH"] = str(ROOT)
    return env


def _run(command: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert command[:2] == ["python", "-m"], command
    return subprocess.run([sys.executable, *command[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _ready(port_file: Path, proc: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
        port = port_file.read_text().strip() if port_file.exists() else ""
        if port:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
                    if resp.status == 200:
                        return f"http://127.0.0.1:{port}"
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
        time.sleep(0.2)
    raise AssertionError(f"not ready after {timeout:.0f} s:\n{log.read_text()[-3000:]}")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in reversed(started):
        if proc.poll() is None:
            proc.terminate()
    for proc in started:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


async def test_compose_topology_schedules_after_its_migrate_step(compose: dict[str, Any], bare: Any, tmp_path: Path,
                                                                 processes: list[subprocess.Popen[bytes]]) -> None:
    backend, database_url, prefix = bare
    services = compose["services"]
    with pytest.raises(MissingVariable, match="BERTH_API_TOKEN"):
        _environment(services["gateway"], {"BERTH_TOPIC_PREFIX": prefix})  # compose refuses without a token
    variables = {"BERTH_TOPIC_PREFIX": prefix, "BERTH_API_TOKEN": secrets.token_urlsafe(24)}
    base = _base_env(backend)

    def env_of(name: str) -> dict[str, str]:
        return {**base, **_rewritten(_environment(services[name], variables), backend.kafka_bootstrap_servers,
                                     database_url, tmp_path / f"{name}.port")}

    # Before the migrate step the services refuse to start, saying why.
    refused = _run(services["queue"]["command"], env_of("queue"))
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert f"topic '{prefix}filter-requests' is missing" in refused.stderr and "berth migrate" in refused.stderr

    migrate = services["migrate"]
    for _ in range(2):  # idempotent: the second run finds everything in place
        done = _run(migrate["command"], env_of("migrate"))
        assert done.returncode == 0, done.stdout + done.stderr
    assert "topics ready" in done.stdout and ": 0 created" in done.stdout

    urls: dict[str, str] = {}
    for name in BERTH_SERVICES:
        log = tmp_path / f"{name}.log"
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, *services[name]["command"][1:]], cwd=ROOT, env=env_of(name),
                                    stdout=out, stderr=subprocess.STDOUT)
        processes.append(proc)
        urls[name] = _ready(tmp_path / f"{name}.port", proc, log)

    token = _environment(services["gateway"], variables)["BERTH_API_TOKEN"]
    client = {**base, "BERTH_URL": urls["gateway"], "BERTH_TOKEN": token}
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    applied = subprocess.run([sys.executable, "-m", "berth", "apply", "-f", str(tmp_path / "cluster.yaml")],
                             cwd=ROOT, env=client, capture_output=True, text=True, timeout=60)
    assert applied.returncode == 0, applied.stderr
    deadline = time.monotonic() + 60
    while True:
        got = subprocess.run([sys.executable, "-m", "berth", "get", "pods", "-A", "-o", "json"], cwd=ROOT, env=client,
                             capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, got.stderr
        phases = sorted((p["metadata"]["name"], p["status"]["phase"]) for p in json.loads(got.stdout)["items"])
        if phases == [("p1", "Bound"), ("p2", "Bound")] or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert phases == [("p1", "Bound"), ("p2", "Bound")]


async def test_a_topic_with_the_brokers_default_partitions_is_refused(compose: dict[str, Any], bare: Any) -> None:
    """A broker that auto-created filter-requests with its default 4 partitions: migrate and the
    services both name the topic and the count instead of failing cycles silently."""
    from aiokafka.admin import NewTopic

    backend, database_url, prefix = bare
    settings = load_settings({}, kafka_bootstrap_servers=backend.kafka_bootstrap_servers, database_url=database_url,
                             topic_prefix=prefix)
    admin = make_admin(settings)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(f"{prefix}filter-requests", 4, 1)])
    finally:
        await admin.close()
    services = compose["services"]
    env = {**_base_env(backend), **_rewritten(_environment(services["migrate"], {"BERTH_TOPIC_PREFIX": prefix}),
                                              backend.kafka_bootstrap_servers, database_url, Path("/dev/null"))}
    migrated = _run(services["migrate"]["command"], env)
    assert migrated.returncode != 0 and "has 4 partitions, Berth needs exactly 8" in migrated.stderr
    refused = _run(services["filter"]["command"], env)
    assert refused.returncode == 2 and f"topic '{prefix}filter-requests' has 4 partitions" in refused.stderr
