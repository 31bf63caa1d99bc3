"""The deployment files: docker-compose.yml, deploy/Dockerfile, the Prometheus config and the Grafana dashboard.

Static checks only (no Docker, no network): the Compose file validates against the Compose
specification's JSON schema (vendored by the check-jsonschema package), every Berth service runs a module
of this repository, `filter` can be scaled, the Dockerfile copies paths that exist, and the dashboard
queries the scheduler's upstream-named metrics and the runtime's consumer-lag gauge.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from berth.services import SERVICES
from services.runtime.metrics import RuntimeMetrics

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
DASHBOARD = ROOT / "deploy" / "grafana" / "berth-dashboard.json"
PROMETHEUS = ROOT / "deploy" / "prometheus.yml"

BERTH_SERVICES = ("gateway", "projector", "queue", "filter", "preemption", "binder")
# Scheduler services whose module has not landed in the repository yet: their case fails strictly once it
# does, and the name is then removed from this set.

SCHEDULER_METRICS = (
    "scheduler_schedule_attempts_total",
    "scheduler_pending_pods",
    "scheduler_scheduling_attempt_duration_seconds",
    "scheduler_pod_scheduling_sli_duration_seconds",
    "scheduler_preemption_attempts_total",
    "scheduler_preemption_victims",
)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def compose_validator() -> jsonschema.protocols.Validator:
    text = resources.files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    services = compose["services"]
    assert name in services, f"docker-compose.yml has no service {name!r}"
    return services[name]


def _command(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return shlex.split(command) if isinstance(command, str) else list(command)


def _tracked(path: str) -> bool:
    """True when `path` is in the repository: tracked by git (an untracked draft has not landed yet)."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", path],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return (ROOT / path).is_file()
    if out.returncode == 0:
        return True
    if "not a git repository" in out.stderr.lower():
        return (ROOT / path).is_file()
    return False


# --- the Compose file --------------------------------------------------------------------------------------


def test_compose_file_validates_against_the_compose_specification(compose, compose_validator) -> None:
    errors = sorted(compose_validator.iter_errors(compose), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def test_the_schema_rejects_what_the_specification_forbids(compose, compose_validator) -> None:
    bad = json.loads(json.dumps(compose))
    bad["services"]["filter"]["replicas_of"] = 4  # not a service attribute
    bad["services"]["migrate"]["depends_on"]["postgres"]["condition"] = "service_ready"
    assert len(list(compose_validator.iter_errors(bad))) >= 2


def test_every_service_berth_up_runs_is_in_compose(compose) -> None:
    for spec in SERVICES:
        service = _service(compose, spec.name)
        assert _command(service) == ["python", "-m", spec.module]


@pytest.mark.parametrize("name", BERTH_SERVICES)
def test_service_command_names_a_module_of_the_repository(compose, name) -> None:
    command = _command(_service(compose, name))
    assert command[:2] == ["python", "-m"] and len(command) == 3, command
    module = command[2]
    assert module == f"services.{name}"
    main = module.replace(".", "/") + "/__main__.py"
    assert _tracked(main), f"{main} is not in the repository"


@pytest.mark.parametrize("name", BERTH_SERVICES)
def test_berth_service_wiring(compose, name) -> None:
    service = _service(compose, name)
    assert service["build"]["dockerfile"] == "deploy/Dockerfile"
    env = service["environment"]
    assert env["KAFKA_BOOTSTRAP_SERVERS"] == "kafka:9092"
    assert re.fullmatch(r"postgresql://[^@]+@postgres:5432/\S+", env["DATABASE_URL"]), env["DATABASE_URL"]
    assert env["BERTH_HTTP_HOST"] == "0.0.0.0" and env["BERTH_HTTP_PORT"] == "8080"
    assert service["depends_on"] == {
        "kafka": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD" and "http://127.0.0.1:8080/readyz" in " ".join(test)  # readiness


def test_filter_scales(compose) -> None:
    service = _service(compose, "filter")
    assert "container_name" not in service
    assert "hostname" not in service
    for port in service.get("ports", []):
        published = port.get("published") if isinstance(port, dict) else (str(port).rsplit(":", 1)[0]
                                                                         if ":" in str(port) else None)
        assert published in (None, ""), f"filter publishes a fixed host port: {port!r}"


def test_no_berth_service_pins_a_container_name(compose) -> None:
    assert not [name for name in BERTH_SERVICES if "container_name" in compose["services"][name]]


def test_gateway_publishes_its_port_on_loopback_and_requires_a_token(compose) -> None:
    gateway = _service(compose, "gateway")
    assert gateway["ports"] == ["${BERTH_GATEWAY_BIND:-127.0.0.1}:8080:8080"]
    token = gateway["environment"]["BERTH_API_TOKEN"]
    assert re.fullmatch(r"\$\{BERTH_API_TOKEN:\?[^}]+\}", token), "no default secret: " + token


def test_migrate_is_one_shot_and_makes_database_and_topics_ready(compose) -> None:
    migrate = _service(compose, "migrate")
    assert _command(migrate) == ["python", "-m", "berth", "migrate"]
    assert migrate["restart"] == "no"
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                     "kafka": {"condition": "service_healthy"}}
    env = migrate["environment"]
    assert "@postgres:5432/" in env["DATABASE_URL"] and env["KAFKA_BOOTSTRAP_SERVERS"] == "kafka:9092"
    assert env["BERTH_TOPIC_PREFIX"] == _service(compose, "queue")["environment"]["BERTH_TOPIC_PREFIX"]


def test_kafka_is_a_single_kraft_node(compose) -> None:
    kafka = _service(compose, "kafka")
    assert kafka["image"].startswith("apache/kafka")
    env = kafka["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    node = env["KAFKA_NODE_ID"]
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{node}@kafka:9093"
    assert "PLAINTEXT://:9092" in env["KAFKA_LISTENERS"] and "CONTROLLER://:9093" in env["KAFKA_LISTENERS"]
    assert env["KAFKA_ADVERTISED_LISTENERS"] == "PLAINTEXT://kafka:9092"
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == 1
    assert "healthcheck" in kafka


def test_postgres_has_a_healthcheck_and_a_volume(compose) -> None:
    postgres = _service(compose, "postgres")
    assert postgres["image"] == "postgres:17"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    volume = postgres["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]


def test_monitoring_is_optional_and_mounts_files_that_exist(compose) -> None:
    for name in ("prometheus", "grafana"):
        service = _service(compose, name)
        assert service["profiles"] == ["monitoring"]
        for mount in service["volumes"]:
            source = mount.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which does not exist"


def test_prometheus_scrapes_every_berth_service() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    names = {n for job in config["scrape_configs"] for sd in job.get("dns_sd_configs", []) for n in sd["names"]}
    assert names == set(BERTH_SERVICES)


# --- the Dockerfile ----------------------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
            for line in lines if line and not line.startswith("#")]


def test_dockerfile_copies_paths_that_exist_and_are_not_ignored() -> None:
    ignored = {line.strip() for line in DOCKERIGNORE.read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    copies = [args.split() for op, args in _instructions() if op == "COPY"]
    assert copies
    for args in copies:
        assert not any(a.startswith("--from") for a in args)
        for source in args[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: no such path"
            assert source not in ignored, f"COPY {source}: excluded by .dockerignore"
    copied = {source for args in copies for source in args[:-1]}
    assert {"pyproject.toml", "alembic.ini", "migrations", "shared", "services", "berth"} <= copied


def test_dockerfile_base_user_and_default_command() -> None:
    instructions = _instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    assert any(op == "RUN" and "pip install ." in args for op, args in instructions)
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1] not in ("root", "0")
    cmd = [args for op, args in instructions if op == "CMD"]
    assert cmd and json.loads(cmd[-1]) == ["berth", "--help"]


def test_berth_cli_entry_point_exists() -> None:
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["berth"] == "berth.cli:main"


# --- the Grafana dashboard ---------------------------------------------------------------------------------


def _exprs(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_dashboard_parses_and_panels_are_well_formed() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].count("(") == target["expr"].count(")"), target["expr"]


@pytest.mark.parametrize("metric", SCHEDULER_METRICS)
def test_dashboard_queries_scheduler_metric(metric) -> None:
    exprs = _exprs(json.loads(DASHBOARD.read_text()))
    assert any(re.search(rf"\b{metric}(_bucket|_sum|_count)?\b", e) for e in exprs), metric


def test_dashboard_rates_attempts_by_result_and_takes_quantiles() -> None:
    exprs = _exprs(json.loads(DASHBOARD.read_text()))
    assert any("rate(scheduler_schedule_attempts_total" in e and "by (result)" in e for e in exprs)
    for histogram in ("scheduler_scheduling_attempt_duration_seconds", "scheduler_pod_scheduling_sli_duration_seconds"):
        for q in ("0.5", "0.99"):
            assert any(e.startswith(f"histogram_quantile({q},") and f"{histogram}_bucket" in e for e in exprs), (
                histogram, q)


def test_dashboard_shows_the_runtime_consumer_lag_gauge() -> None:
    gauges = [m.name for m in RuntimeMetrics("deploy-test").registry.collect() if m.type == "gauge"]
    lag = [name for name in gauges if "lag" in name]
    assert len(lag) == 1, gauges
    exprs = _exprs(json.loads(DASHBOARD.read_text()))
    assert any(re.search(rf"\b{lag[0]}\b", e) for e in exprs), lag[0]
