"""The Python `kubernetes` client against `berth up`, configured by the kubeconfig it writes: list,
watch, create and delete, as a controller written for Kubernetes would use them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .user_cluster import CLUSTER, berth, reap, start_up, user_env, wait_line

pytestmark = pytest.mark.integration

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is not installed (make test installs it)")


def test_the_python_client_lists_watches_creates_and_deletes(state: Path, tmp_path: Path) -> None:
    from kubernetes import client, config, watch

    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    try:
        wait_line(proc, "berth ready: ", 60)
        kubeconfig = wait_line(proc, "berth kubectl: ", 5).strip().split("KUBECONFIG=", 1)[1]
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
        with pytest.raises(client.exceptions.ApiException) as gone:
            v1.read_namespaced_pod("made", "default")
        assert gone.value.status == 404
    finally:
        proc.terminate()
        proc.wait(60)
        reap(proc, err)
