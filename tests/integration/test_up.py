"""`berth up` as a user runs it: a subprocess with its own embedded stack, driven by the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from .user_cluster import CLUSTER, berth, reap, start_up, user_env, wait_line

pytestmark = pytest.mark.integration


def test_berth_up_apply_get_and_stop(state: Path, tmp_path: Path) -> None:
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err, "--filter-workers", "2", sigint_ignored=True)
    try:
        ready = wait_line(proc, "berth ready: ", 60)
        info = json.loads((state / "berth.json").read_text())
        assert info["gateway_url"] in ready and info["api_token"] and info["kafka_bootstrap_servers"]
        assert (state / "berth.json").stat().st_mode & 0o777 == 0o600, "its tokens are its owner's alone"
        assert info["viewer_token"] and info["viewer_token"] != info["api_token"]
        assert info["gateway_url"].startswith("https://127.0.0.1:"), "HTTPS, bound to loopback"
        second = berth("up", "--state-dir", str(state), env=env)  # its broker and database are in use
        in_use = f"in use by another berth up or chaos run (pid {proc.pid})"
        assert second.returncode == 1 and in_use in second.stderr, second.stderr
        assert (state / "berth.json").exists() and (state / "kubeconfig").exists(), "left as the first wrote them"
        trusted = ssl.create_default_context(cafile=info["ca_file"])

        def read_status(token: str) -> int:
            request = urllib.request.Request(info["gateway_url"] + "/api/v1/pods",
                                             headers={"Authorization": f"Bearer {token}"} if token else {})
            try:
                with urllib.request.urlopen(request, timeout=5, context=trusted) as resp:
                    return resp.status
            except urllib.error.HTTPError as exc:
                return exc.code

        tokens = ("", info["viewer_token"], info["api_token"])
        assert [read_status(t) for t in tokens] == [401, 200, 200], "reads need a token"
        assert (state / "tls" / "server.key").stat().st_mode & 0o777 == 0o600
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(info["gateway_url"] + "/healthz", timeout=5)  # the system does not trust it
        plain = info["gateway_url"].replace("https:", "http:", 1) + "/api/v1/pods"
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(plain, timeout=5)  # no plain HTTP beside it
        elsewhere = {**env, "BERTH_URL": info["gateway_url"], "BERTH_TOKEN": info["api_token"]}
        untrusted = berth("get", "pods", env=elsewhere)
        assert untrusted.returncode == 1 and "is not who it says" in untrusted.stderr and "BERTH_CA" in untrusted.stderr
        assert berth("get", "pods", env={**elsewhere, "BERTH_CA": info["ca_file"]}).returncode == 0
        assert {"gateway", "projector", "binder", "queue", "preemption", "tansu", "postgres"} <= set(info["pids"])
        pids = [proc.pid, *info["pids"].values()]

        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        applied = berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env)
        assert applied.returncode == 0, applied.stderr
        assert "pod/p2 created" in applied.stdout.splitlines()

        bad = tmp_path / "bad.yaml"
        bad.write_text("kind: Pod\nmetadata: {name: x}\n"
                       "spec: {containers: [{name: c, ports: [{containerPort: 1, protocol: XTP}]}]}\n")
        invalid = berth("apply", "-f", str(bad), env=env)
        assert invalid.returncode == 2 and "spec.containers[0].ports[0].protocol" in invalid.stderr

        deadline = time.monotonic() + 20
        while True:
            got = berth("get", "pods", "-A", "-o", "json", env=env)
            assert got.returncode == 0, got.stderr
            items = json.loads(got.stdout)["items"]
            bound = [p for p in items if p["status"]["phase"] == "Bound"]
            if len(bound) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        # berth up runs the whole scheduler: both pods fit on n1.
        assert sorted((p["metadata"]["namespace"], p["metadata"]["name"], p["status"]["phase"], p["spec"]["nodeName"])
                      for p in items) == [("default", "p1", "Bound", "n1"), ("team", "p2", "Bound", "n1")]
        # kubectl's habits: the default namespace unless -n or -A, -l selectors, -o name and wide.
        default_ns = berth("get", "pods", "-o", "name", env=env)
        assert default_ns.stdout == "pod/p1\n", default_ns.stdout + default_ns.stderr
        assert berth("get", "pods", "-A", "-o", "name", env=env).stdout == "pod/p1\npod/p2\n"
        assert berth("get", "pods", "-n", "team", "-o", "name", env=env).stdout == "pod/p2\n"
        assert berth("get", "pods", "-A", "-l", "app=web", "-o", "name", env=env).stdout == "pod/p1\n"
        assert berth("get", "pods", "-A", "-l", "app in (db),!x", "-o", "name", env=env).stdout == ""
        nothing = berth("get", "pods", "-n", "empty", env=env)
        assert nothing.returncode == 0 and nothing.stdout == "No resources found in empty namespace.\n"
        wide = berth("get", "pods", "-o", "wide", env=env).stdout.splitlines()
        assert wide[0].split()[-1] == "LABELS" and wide[1].split()[-1] == "app=web"
        assert berth("get", "nodes", "-o", "name", env=env).stdout == "node/n1\n"
        bad_selector = berth("get", "pods", "-l", "app in web", env=env)
        assert bad_selector.returncode == 2 and "labelSelector: unable to parse requirement: 'app in web'" in \
            bad_selector.stderr
        typo = tmp_path / "typo.yaml"
        typo.write_text("kind: Pod\nmetadata: {name: p9}\nspec: {nodeSelectr: {}, containers: [{name: c}]}\n")
        refused = berth("apply", "-f", str(typo), env=env)
        assert refused.returncode == 2 and 'unknown field "spec.nodeSelectr"' in refused.stderr
        warned = berth("apply", "-f", str(typo), "--validate", "warn", env=env)
        assert warned.returncode == 0 and 'Warning: Pod p9: unknown field "spec.nodeSelectr"' in warned.stderr
        assert berth("--version", env=env).stdout.startswith("berth ")
        with urllib.request.urlopen(info["services"]["queue"] + "/metrics", timeout=5) as resp:
            exposed = resp.read().decode()
        for name in ("scheduler_schedule_attempts_total", "scheduler_scheduling_algorithm_duration_seconds_bucket",
                     'scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"}',
                     "scheduler_pending_pods", "scheduler_pod_scheduling_sli_duration_seconds_bucket"):
            assert name in exposed, name
        assert "_created" not in exposed, "kube-scheduler exposes no _created series"
        # The queue sends batches to as few workers as it keeps busy: read every worker's series.
        filtering = ""
        for label, url in info["services"].items():
            if label == "filter" or label.startswith("filter-"):
                with urllib.request.urlopen(url + "/metrics", timeout=5) as resp:
                    filtering += resp.read().decode()
        assert 'scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",' \
            'profile="default-scheduler",status="Success"}' in filtering
        assert 'scheduler_plugin_execution_duration_seconds_count{extension_point="PreFilter",' \
            'plugin="NodeResourcesFit",status="Success"}' in filtering
        node = berth("describe", "node", "n1", env=env).stdout
        assert "Allocated resources:" in node and "cpu       100m (5%)" in node, node
        assert {"p1", "p2"} <= {line.split()[1] for line in node.splitlines()
                                if line.startswith(("  default", "  team"))}
        assert berth("get", "namespaces", "-o", "name", env=env).stdout == "namespace/default\nnamespace/team\n"
        classes = berth("get", "priorityclasses", env=env)
        assert classes.returncode == 0 and classes.stdout == "No resources found.\n", classes.stderr
        described = berth("describe", "pod", "p2", "-n", "team", env=env)
        assert described.returncode == 0 and "Nominated Node:" in described.stdout
        assert "Successfully assigned team/p2 to n1" in described.stdout
        # kubectl's events table: columns as wide as their longest entry (a FailedScheduling widens Reason).
        assert re.search(r"^  Type +Reason +Age +From +Message$", described.stdout, re.MULTILINE), described.stdout
        assert "default-scheduler" in described.stdout
        export = tmp_path / "log.jsonl"
        exported = berth("events", "--export", str(export), env=env)
        assert exported.returncode == 0 and export.stat().st_size > 0
        replayed = berth("replay", "--source", str(export), "-o", "json", env=env)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr
        assert json.loads(replayed.stdout)["matched"] >= 2
        explained = berth("explain", "pod", "p2", "-n", "team", env=env)  # from the event store
        assert explained.returncode == 0 and "<- picked" in explained.stdout and "n1" in explained.stdout
        now = berth("explain", "pod", "team/p2", "--now", "-o", "json", env=env)
        assert now.returncode == 0 and json.loads(now.stdout)["pod"] == "team/p2"
        missing = berth("delete", "pod", "nope", env=env)
        assert missing.returncode == 1 and 'pods "nope" not found' in missing.stderr
        events = berth("events", "pods", env=env)
        assert events.returncode == 0 and events.stdout.count('"PodSubmitted"') >= 2
        one = berth("events", "--pod", "team/p2", env=env)
        assert one.returncode == 0, one.stderr
        decoder, text, shown = json.JSONDecoder(), one.stdout.strip(), []
        while text:
            record, end = decoder.raw_decode(text)
            shown.append(record["event"])
            text = text[end:].strip()
        assert {"PodSubmitted", "SchedulingAttempted", "PodBound"} <= {e["type"] for e in shown}
        [uid] = [e["payload"]["pod"]["metadata"]["uid"] for e in shown if e["type"] == "PodSubmitted"]
        assert all(uid in json.dumps(e) for e in shown), "every event shown names the pod"
        none = berth("events", "decisions", "--pod", "nope", env=env)
        assert none.returncode == 0 and none.stdout == "" and "No events concern pod default/nope." in none.stderr

        more = tmp_path / "more.yaml"
        more.write_text("kind: Pod\nmetadata: {name: p3}\nspec: {containers: [{name: c}]}\n---\n"
                        "kind: Pod\nmetadata: {name: p4}\nspec: {containers: [{name: c}]}\n")
        assert berth("apply", "-f", str(more), env=env).returncode == 0
        partly = berth("delete", "pod", "nope", "p3", env=env)  # kubectl goes on past a missing object
        assert partly.returncode == 1 and partly.stdout == 'pod "p3" deleted\n'
        assert 'pods "nope" not found' in partly.stderr
        (tmp_path / "p4.yaml").write_text("kind: Pod\nmetadata: {name: p4}\nspec: {containers: [{name: c}]}\n")
        by_file = berth("delete", "-f", str(tmp_path / "p4.yaml"), env=env)
        assert by_file.returncode == 0 and by_file.stdout == 'pod "p4" deleted\n', by_file.stderr
        everything = berth("delete", "pods", "--all", "-n", "team", env=env)
        assert everything.returncode == 0 and everything.stdout == 'pod "p2" deleted\n', everything.stderr

        # A file larger than a request goes in batches, all validated before any is applied.
        small = {**env, "BERTH_APPLY_BATCH_BYTES": "2048"}
        pods = [f"kind: Pod\nmetadata: {{name: b{i}, namespace: batch}}\nspec: {{containers: [{{name: c}}]}}\n"
                for i in range(60)]
        last = pods[-1].replace("b59", "bad").replace("{name: c}", "{name: C_}")
        (tmp_path / "batches.yaml").write_text("---\n".join([*pods, last]))
        refused = berth("apply", "-f", str(tmp_path / "batches.yaml"), env=small)
        assert refused.returncode == 2 and "spec.containers[0].name" in refused.stderr, refused.stderr
        assert berth("get", "pods", "-n", "batch", "-o", "name", env=env).stdout == "", "nothing was applied"
        (tmp_path / "batches.yaml").write_text("---\n".join(pods))
        applied = berth("apply", "-f", str(tmp_path / "batches.yaml"), env=small)
        assert applied.returncode == 0 and applied.stdout.count(" created\n") == 60, applied.stderr
        assert " batches; 60 events published" in applied.stderr, applied.stderr

        proc.send_signal(signal.SIGINT)  # `kill -INT`, though it started with SIGINT ignored
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)
    deadline = time.monotonic() + 5
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
        assert time.monotonic() < deadline, "a process outlived berth up"
        time.sleep(0.05)
    assert not (state / "berth.json").exists()


def _metric(url: str, name: str, service: str) -> float | None:
    with urllib.request.urlopen(url + "/metrics", timeout=2) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(f'{name}{{service="{service}"}} '):
                return float(line.split()[-1])
    return None


def test_berth_up_restarts_a_service_that_dies(state: Path, tmp_path: Path) -> None:
    """SIGKILL the queue and the gateway under berth up: each comes back (the gateway on its URL),
    the restarts show in the supervisor's /metrics, and the cluster still schedules."""
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    try:
        wait_line(proc, "berth ready: ", 60)
        info = json.loads((state / "berth.json").read_text())
        supervisor = info["supervisor_url"]
        for label in ("queue", "gateway"):
            old = info["pids"][label]
            os.kill(old, signal.SIGKILL)
            deadline = time.monotonic() + 60
            while _metric(supervisor, "berth_service_restarts_total", label) != 1:
                assert proc.poll() is None, "berth up stopped instead of restarting"
                assert time.monotonic() < deadline, f"{label} was not restarted"
                time.sleep(0.2)
            info = json.loads((state / "berth.json").read_text())
            assert info["pids"][label] != old and _metric(supervisor, "berth_service_up", label) == 1
        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        applied = berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env)
        assert applied.returncode == 0, applied.stderr
        deadline = time.monotonic() + 30
        while True:
            got = berth("get", "pods", "-A", "-o", "json", env=env)
            assert got.returncode == 0, got.stderr
            phases = [p["status"]["phase"] for p in json.loads(got.stdout)["items"]]
            if phases == ["Bound", "Bound"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert phases == ["Bound", "Bound"]
        err.flush()
        said = (tmp_path / "up.err").read_text()
        assert "berth: queue exited with code -9; restarting in 1 s" in said
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)


def _kill_everything(proc: subprocess.Popen[str], state: Path) -> None:
    """SIGKILL berth up first (so nothing restarts), then every process it launched."""
    pids = json.loads((state / "berth.json").read_text())["pids"].values()
    proc.kill()
    proc.wait(10)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(pid).wait(10)


def _pods(env: dict[str, str]) -> list[dict[str, Any]]:
    got = berth("get", "pods", "-A", "-o", "json", env=env)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)["items"]


def test_berth_up_resumes_after_everything_is_killed(state: Path, tmp_path: Path) -> None:
    """Apply a cluster, SIGKILL every process while it schedules, `berth up` again on the same state:
    the log is rebuilt from the event store, every accepted pod is there and ends bound exactly once,
    no node is over-committed, every decision replays, and new pods schedule."""
    env = user_env(state)
    workload = tmp_path / "cluster.yaml"
    generated = berth("generate", "SchedulingBasic", "--nodes", "20", "--pods", "300", "-o", str(workload), env=env)
    assert generated.returncode == 0, generated.stderr
    first_err = (tmp_path / "up1.err").open("w")
    first = start_up(state, env, first_err)
    try:
        wait_line(first, "berth ready: ", 60)
        applied = berth("apply", "-f", str(workload), env=env)
        assert applied.returncode == 0, applied.stderr
        accepted = applied.stdout.count(" created")
        _kill_everything(first, state)
    finally:
        reap(first, first_err)

    err = (tmp_path / "up2.err").open("w")
    proc = start_up(state, env, err)
    try:
        wait_line(proc, "berth ready: ", 60)
        err.flush()
        assert "berth: log rebuilt from the event store" in (tmp_path / "up2.err").read_text()
        deadline = time.monotonic() + 60
        while True:
            items = _pods(env)
            if (len(items) == accepted - 20 and all(p["status"]["phase"] == "Bound" for p in items)
                    or time.monotonic() > deadline):
                break
            time.sleep(0.5)
        assert len(items) == accepted - 20, "every accepted pod is known (20 of the objects are nodes)"
        assert all(p["status"]["phase"] == "Bound" for p in items)

        info = json.loads((state / "berth.json").read_text())
        from berth.bench.ledger import read_ledger
        from shared.events import TopicRegistry
        from shared.settings import load_settings

        settings = load_settings({}, kafka_bootstrap_servers=info["kafka_bootstrap_servers"],
                                 database_url=info["database_url"], topic_prefix=info["topic_prefix"])
        ledger = asyncio.run(read_ledger(settings, TopicRegistry(info["topic_prefix"])))
        assert not ledger.problems(), ledger.problems()[:5]
        assert ledger.bound == {p["metadata"]["uid"] for p in items}, "the scheduler and the read model agree"

        (tmp_path / "late.yaml").write_text("kind: Pod\nmetadata: {name: late}\nspec: {containers: [{name: c}]}\n")
        assert berth("apply", "-f", str(tmp_path / "late.yaml"), env=env).returncode == 0
        deadline = time.monotonic() + 30
        while not any(p["metadata"]["name"] == "late" and p["status"]["phase"] == "Bound" for p in _pods(env)):
            assert time.monotonic() < deadline, "a pod applied after the restart was not bound"
            time.sleep(0.3)
        replayed = berth("replay", "-o", "json", env=env)
        assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)


def test_berth_up_brings_back_the_broker_and_the_database(state: Path, tmp_path: Path) -> None:
    """SIGKILL the embedded broker, then the database: each comes back on its port (the broker with
    its log rebuilt, the services restarted on it), and the cluster keeps what it had and schedules."""
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    try:
        ready = wait_line(proc, "berth ready: ", 60)
        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        assert berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env).returncode == 0
        info = json.loads((state / "berth.json").read_text())
        for label in ("tansu", "postgres"):
            old = info["pids"][label]
            os.kill(old, signal.SIGKILL)
            deadline = time.monotonic() + 90
            while _metric(info["supervisor_url"], "berth_service_restarts_total", label) != 1:
                assert proc.poll() is None, "berth up stopped instead of restarting"
                assert time.monotonic() < deadline, f"{label} was not restarted"
                time.sleep(0.2)
            info = json.loads((state / "berth.json").read_text())
            assert info["pids"][label] != old and info["gateway_url"] in ready, "same endpoints, new process"
        (tmp_path / "more.yaml").write_text("kind: Pod\nmetadata: {name: p3}\nspec: {containers: [{name: c}]}\n")
        assert berth("apply", "-f", str(tmp_path / "more.yaml"), env=env).returncode == 0
        deadline = time.monotonic() + 60
        while True:
            phases = sorted((p["metadata"]["name"], p["status"]["phase"]) for p in _pods(env))
            if all(phase == "Bound" for _, phase in phases) and len(phases) == 3 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert phases == [("p1", "Bound"), ("p2", "Bound"), ("p3", "Bound")]
        err.flush()
        said = (tmp_path / "up.err").read_text()
        assert "berth: tansu exited with code -9; restarting in 1 s" in said
        assert "berth: log rebuilt from the event store" in said
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)


def _phases(env: dict[str, str], until: Callable[[dict[str, dict[str, Any]]], bool],
            timeout: float = 20) -> dict[str, dict[str, Any]]:
    """Each pod's status by name, polled until `until` holds (or the time is up)."""
    deadline = time.monotonic() + timeout
    while True:
        status = {p["metadata"]["name"]: p["status"] for p in _pods(env)}
        if until(status) or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def test_pods_created_on_a_node_pass_its_admission(state: Path, tmp_path: Path) -> None:
    """A pod applied with spec.nodeName is admitted by its node as the kubelet would: Bound when it
    fits and counted by the scheduler from then on, Failed with OutOfcpu when it does not, Pending
    while its node does not exist."""
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    pod = ("kind: Pod\nmetadata: {{name: {name}}}\n"
           "spec: {{{node}containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\n")
    try:
        wait_line(proc, "berth ready: ", 60)
        first = tmp_path / "first.yaml"
        first.write_text("kind: Node\nmetadata: {name: big}\n"
                         "status: {allocatable: {cpu: 8, memory: 8Gi, pods: 110}}\n---\n"
                         + pod.format(name="six", node="nodeName: big, ", cpu=6)
                         + "---\n" + pod.format(name="lost", node="nodeName: ghost, ", cpu=1))
        assert berth("apply", "-f", str(first), env=env).returncode == 0
        status = _phases(env, lambda s: s.get("six", {}).get("phase") == "Bound")
        assert status["six"]["phase"] == "Bound" and status["lost"]["phase"] == "Pending", status

        second = tmp_path / "second.yaml"
        second.write_text(pod.format(name="seven", node="nodeName: big, ", cpu=7) + "---\n"
                          + pod.format(name="three", node="", cpu=3))
        assert berth("apply", "-f", str(second), env=env).returncode == 0
        status = _phases(env, lambda s: s.get("seven", {}).get("phase") == "Failed" and
                         bool(s.get("three", {}).get("message")))
        assert (status["seven"]["phase"], status["seven"]["reason"]) == ("Failed", "OutOfcpu"), status
        assert status["seven"]["message"] == ("Pod was rejected: Node didn't have enough resource: cpu, "
                                              "requested: 7000, used: 6000, capacity: 8000")
        # The scheduler counts the admitted pod: 2 of 8 CPUs are left.
        assert status["three"]["phase"] == "Pending" and "Insufficient cpu" in status["three"]["message"], status
        listed = berth("get", "pods", env=env).stdout
        assert any(line.split()[:3] == ["default", "seven", "OutOfcpu"] for line in listed.splitlines()), listed
        described = berth("describe", "node", "big", env=env).stdout
        assert "cpu       6 (75%)" in described, described

        (tmp_path / "ghost.yaml").write_text(
            "kind: Node\nmetadata: {name: ghost}\nstatus: {allocatable: {cpu: 2, memory: 2Gi, pods: 110}}\n")
        assert berth("apply", "-f", str(tmp_path / "ghost.yaml"), env=env).returncode == 0
        status = _phases(env, lambda s: s["lost"]["phase"] == "Bound")
        assert status["lost"]["phase"] == "Bound" and status["seven"]["phase"] == "Failed", status

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)


NAMESPACED = """
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
kind: Namespace
metadata: {name: team-b, labels: {team: b}}
---
kind: Node
metadata: {name: n1, labels: {zone: z1}}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
kind: Node
metadata: {name: n2, labels: {zone: z2}}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
kind: Pod
metadata: {name: scan, namespace: team-b, labels: {app: scan}}
spec: {nodeName: n1, containers: [{name: c}]}
---
kind: Pod
metadata: {name: scan, namespace: team-a, labels: {app: scan}}
spec: {nodeName: n2, containers: [{name: c}]}
"""
NEAR_TEAM_A = """
kind: Pod
metadata: {name: near}
spec:
  containers: [{name: c}]
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: scan}}
        namespaceSelector: {matchLabels: {team: a}}
        topologyKey: zone
"""


def test_namespace_labels_steer_pod_affinity(state: Path, tmp_path: Path) -> None:
    """Namespaces applied to a running cluster are stored with their labels, and a pod affinity's
    namespaceSelector is matched against them by the services."""
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    try:
        wait_line(proc, "berth ready: ", 60)
        (tmp_path / "cluster.yaml").write_text(NAMESPACED)
        applied = berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env)
        assert applied.returncode == 0, applied.stderr
        assert "namespace/team-a created" in applied.stdout.splitlines(), applied.stdout
        _phases(env, lambda s: len([p for p in s.values() if p.get("phase") == "Bound"]) == 2)
        (tmp_path / "near.yaml").write_text(NEAR_TEAM_A)
        assert berth("apply", "-f", str(tmp_path / "near.yaml"), env=env).returncode == 0
        deadline = time.monotonic() + 20
        while True:
            near = [p for p in _pods(env) if p["metadata"]["name"] == "near"]
            if (near and near[0]["status"]["phase"] == "Bound") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert near[0]["status"]["phase"] == "Bound" and near[0]["spec"]["nodeName"] == "n2", near
        listed = json.loads(berth("get", "namespaces", "-o", "json", env=env).stdout)["items"]
        labels = {ns["metadata"]["name"]: ns["metadata"].get("labels", {}) for ns in listed}
        assert labels["team-a"] == {"team": "a", "kubernetes.io/metadata.name": "team-a"}
        assert labels["default"] == {"kubernetes.io/metadata.name": "default"}
        again = berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env)
        # The same file again: every object as stored, nothing published (kubectl apply's habit).
        assert "namespace/team-a unchanged" in again.stdout.splitlines(), again.stdout
        assert "node/n1 unchanged" in again.stdout.splitlines(), again.stdout
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        reap(proc, err)
