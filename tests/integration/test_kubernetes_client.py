"""The Python `kubernetes` client against `berth up`, configured by the kubeconfig it writes: list,
watch, create and delete, as a controller written for Kubernetes would use them."""
# The client's models declare every field optional; the gateway fills those read here.
# mypy: disable-error-code="union-attr,type-var,index"

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests import kube_protobuf

from .user_cluster import CLUSTER, berth, running

pytestmark = pytest.mark.integration

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is not installed (make test installs it)")


def test_the_python_client_lists_watches_creates_and_deletes(state: Path, tmp_path: Path) -> None:
    from kubernetes import client, config, watch

    with running(state, tmp_path) as cluster:
        env, kubeconfig = cluster.env, cluster.kubeconfig
        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        assert berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env).returncode == 0
        config.load_kube_config(kubeconfig)
        v1 = client.CoreV1Api()
        deadline = time.monotonic() + 20
        while sorted(p.status.phase for p in v1.list_pod_for_all_namespaces().items) != ["Bound", "Bound"]:
            assert time.monotonic() < deadline, "the applied pods were never bound"
            time.sleep(0.2)
        listed = v1.list_namespaced_pod("default", label_selector="app=web")
        assert [p.metadata.name for p in listed.items] == ["p1"]
        assert [n.metadata.name for n in v1.list_node().items] == ["n1"]

        pod = client.V1Pod(metadata=client.V1ObjectMeta(name="made", labels={"app": "web"}),
                           spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))
        created = v1.create_namespaced_pod("default", pod)
        assert created.metadata.uid and created.kind == "Pod"
        seen: list[tuple[str, str, str]] = []
        for event in watch.Watch().stream(v1.list_namespaced_pod, "default", label_selector="app=web",
                                          resource_version=listed.metadata.resource_version, timeout_seconds=20):
            obj = event["object"]
            seen.append((event["type"], obj.metadata.name, obj.status.phase))
            if (obj.metadata.name, obj.status.phase) == ("made", "Bound"):
                break
        assert seen[0] == ("ADDED", "made", "Pending") and seen[-1] == ("MODIFIED", "made", "Bound"), seen
        assert {name for _, name, _ in seen} == {"made"}, "only changes after the list's version"

        v1.delete_namespaced_pod("made", "default")
        deadline = time.monotonic() + 20  # reads follow the log: the deletion shows once projected
        while _exists(v1, "made"):
            assert time.monotonic() < deadline, "the deleted pod never went"
            time.sleep(0.1)
        with pytest.raises(client.exceptions.ApiException) as gone:
            v1.read_namespaced_pod("made", "default")
        assert gone.value.status == 404


def _call(info: dict[str, str], method: str, path: str, body: object) -> tuple[int, dict[str, Any]]:
    """`body` as JSON, or as Kubernetes' protobuf when it is bytes."""
    content_type = ("application/vnd.kubernetes.protobuf" if isinstance(body, bytes)
                    else "application/merge-patch+json" if method == "PATCH" else "application/json")
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(info["gateway_url"] + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {info['api_token']}",
                                              "Content-Type": content_type})
    context = ssl.create_default_context(cafile=info["ca_file"])
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_another_scheduler_binds_its_pods_and_a_kubelet_reports_node_status(state: Path, tmp_path: Path) -> None:
    """The binding subresource, checked by the node's binder, and the status subresources."""

    from kubernetes import client, config

    with running(state, tmp_path) as cluster:
        env, kubeconfig, info = cluster.env, cluster.kubeconfig, cluster.info
        (tmp_path / "c.yaml").write_text(
            CLUSTER + "---\nkind: Pod\nmetadata: {name: mine}\n"
            "spec: {schedulerName: my-scheduler, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}\n"
            "---\nkind: Pod\nmetadata: {name: big}\n"
            "spec: {schedulerName: my-scheduler, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n")
        assert berth("apply", "-f", str(tmp_path / "c.yaml"), env=env).returncode == 0
        config.load_kube_config(kubeconfig)
        v1 = client.CoreV1Api()
        deadline = time.monotonic() + 20
        while not (_exists(v1, "p1") and _exists(v1, "mine")
                   and v1.read_namespaced_pod("p1", "default").status.phase == "Bound"):
            assert time.monotonic() < deadline, "Berth's own pod was never bound"
            time.sleep(0.2)
        assert v1.read_namespaced_pod("mine", "default").status.phase == "Pending", (
            "Berth leaves another scheduler's pod alone")

        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "mine"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
        code, status = _call(info, "POST", "/api/v1/namespaces/default/pods/mine/binding", binding)
        assert (code, status["status"]) == (201, "Success"), status
        pod = v1.read_namespaced_pod("mine", "default")
        assert (pod.status.phase, pod.spec.node_name) == ("Bound", "n1")
        code, status = _call(info, "POST", "/api/v1/namespaces/default/pods/mine/binding", binding)
        assert code == 409 and "already assigned to node 'n1'" in str(status["message"])
        code, status = _call(info, "POST", "/api/v1/namespaces/default/pods/big/binding",
                             {**binding, "metadata": {"name": "big"}})
        assert code == 409 and "Insufficient cpu" in str(status["message"]), "n1 has 0.4 CPU left: never over-committed"
        code, status = _call(info, "POST", "/api/v1/namespaces/default/pods/p1/binding", binding)
        assert code == 409 and "scheduled by Berth" in str(status["message"])

        assert v1.read_namespaced_pod_status("mine", "default").spec.node_name == "n1"
        code, node = _call(info, "PATCH", "/api/v1/nodes/n1/status",
                           {"status": {"allocatable": {"cpu": "4", "memory": "2Gi", "pods": "10"}},
                            "metadata": {"labels": {"ignored": "yes"}}})
        assert code == 200 and node["status"]["allocatable"]["cpu"] == "4"
        assert "ignored" not in (node["metadata"].get("labels") or {}), "only status changes there"
        deadline = time.monotonic() + 20
        # In protobuf this time, as kube-scheduler's client sends it by default.
        while _call(info, "POST", "/api/v1/namespaces/default/pods/big/binding",
                    kube_protobuf.binding("big", "default", "n1"))[0] != 201:
            assert time.monotonic() < deadline, "the node's new room never let the pod bind"
            time.sleep(0.3)
        assert v1.read_node_status("n1").status.allocatable["cpu"] == "4"


def _exists(v1: Any, name: str) -> bool:
    from kubernetes import client

    try:
        v1.read_namespaced_pod(name, "default")
    except client.exceptions.ApiException:
        return False
    return True
