"""The real kubectl against `berth up`: the kubeconfig it writes, discovery, get in every output,
describe with the scheduler's events, watch, delete. Skipped only where kubectl is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from .user_cluster import berth, running

pytestmark = pytest.mark.integration

KUBECTL = shutil.which("kubectl")

WORKLOAD = """
kind: Node
metadata: {name: n1, labels: {node-role.kubernetes.io/worker: ""}}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
kind: Pod
metadata: {name: small, labels: {app: web}}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
---
kind: Pod
metadata: {name: huge, labels: {app: batch}}
spec: {containers: [{name: c, resources: {requests: {cpu: "8"}}}]}
---
kind: Pod
metadata: {name: other, namespace: team}
spec: {containers: [{name: c}]}
"""


def _kubectl(kubeconfig: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, *args], capture_output=True, text=True,
                          timeout=timeout)


def _ok(kubeconfig: str, *args: str) -> str:
    done = _kubectl(kubeconfig, *args)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_gets_describes_watches_and_deletes(state: Path, tmp_path: Path) -> None:
    with running(state, tmp_path) as cluster:
        env, kubeconfig = cluster.env, cluster.kubeconfig
        assert Path(kubeconfig).stat().st_mode & 0o777 == 0o600, "it holds the admin token"
        assert "v1.34.0+berth" in _ok(kubeconfig, "version")
        # cluster-info reads kube-system's services; Berth lists them, empty.
        control_plane = f"Kubernetes control plane is running at {cluster.info['gateway_url']}"
        assert control_plane in _ok(kubeconfig, "cluster-info")
        assert _ok(kubeconfig, "get", "services", "-A", "-o", "name") == ""
        assert _ok(kubeconfig, "get", "svc", "-n", "kube-system") == "", "as a Table, with the API server's columns"
        made = _kubectl(kubeconfig, "create", "service", "clusterip", "web", "--tcp=80:80")
        assert made.returncode == 1 and "Berth holds no services (it schedules pods)" in made.stderr, made.stderr
        resources = _ok(kubeconfig, "api-resources", "--no-headers")
        assert {line.split()[0] for line in resources.splitlines()} >= {
            "pods", "nodes", "namespaces", "events", "priorityclasses", "poddisruptionbudgets"}
        assert _ok(kubeconfig, "auth", "can-i", "create", "pods").strip() == "yes"
        unserved = _kubectl(kubeconfig, "auth", "can-i", "create", "deployments")
        assert unserved.returncode == 1 and unserved.stdout.strip() == "no - Berth serves no deployments"
        viewer = cluster.info["viewer_token"]
        reader = _kubectl(kubeconfig, f"--token={viewer}", "auth", "can-i", "delete", "nodes")
        assert reader.returncode == 1 and "no - the viewer token may only read" in reader.stdout, reader.stdout
        assert _ok(kubeconfig, f"--token={viewer}", "auth", "can-i", "watch", "pods").strip() == "yes"
        listed_rules = _ok(kubeconfig, f"--token={viewer}", "auth", "can-i", "--list")
        assert any(line.split()[0] == "pods" and line.split()[-3:] == ["[get", "list", "watch]"]
                   for line in listed_rules.splitlines()), listed_rules

        (tmp_path / "w.yaml").write_text(WORKLOAD)
        assert berth("apply", "-f", str(tmp_path / "w.yaml"), env=env).returncode == 0
        deadline = time.monotonic() + 30
        while "Bound" not in _kubectl(kubeconfig, "get", "pod", "small").stdout and time.monotonic() < deadline:
            time.sleep(0.3)

        listed = _ok(kubeconfig, "get", "pods").splitlines()
        assert listed[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert {tuple(line.split()[:3]) for line in listed[1:]} == {("huge", "0/1", "Pending"),
                                                                    ("small", "0/1", "Bound")}
        wide = _ok(kubeconfig, "get", "pods", "-A", "-o", "wide").splitlines()
        assert wide[0].split()[:2] == ["NAMESPACE", "NAME"] and "NOMINATED" in wide[0]
        assert any(line.split()[:2] == ["team", "other"] for line in wide[1:])
        assert next(line for line in wide if " small " in line).split()[7] == "n1"
        assert _ok(kubeconfig, "get", "pods", "-l", "app=web", "-o", "name").split() == ["pod/small"]
        # What a kubelet would serve: kubectl says why there is none, naming the pod.
        for args, lacks in ((("logs", "small"), "has no logs"),
                            (("exec", "small", "--", "ls"), "has no container to exec in")):
            refused = _kubectl(kubeconfig, *args)
            assert refused.returncode == 1 and refused.stderr.startswith("Error from server (BadRequest): ") \
                and f'pod "small" {lacks}' in refused.stderr and "no kubelet" in refused.stderr, refused.stderr
        assert "not found" in _kubectl(kubeconfig, "logs", "nope").stderr
        assert _ok(kubeconfig, "get", "pods", "-A", "--chunk-size=1", "-o", "name").split() == [
            "pod/huge", "pod/small", "pod/other"], "followed page by page"
        pending = _ok(kubeconfig, "get", "pods", "--field-selector", "status.phase=Pending", "-o", "name")
        assert pending.split() == ["pod/huge"]
        # Each kind selects on its own fields; a boolean the object leaves out is false.
        assert _ok(kubeconfig, "get", "pods", "--field-selector", "spec.hostNetwork=false", "-o", "name").split() \
            == ["pod/huge", "pod/small"]
        assert _ok(kubeconfig, "get", "nodes", "--field-selector", "spec.unschedulable=false", "-o", "name") \
            .split() == ["node/n1"]
        unselectable = _kubectl(kubeconfig, "get", "pods", "--field-selector", "spec.unschedulable=false")
        assert unselectable.returncode == 1 and "field label not supported: spec.unschedulable" in \
            unselectable.stderr, unselectable.stderr
        as_json = json.loads(_ok(kubeconfig, "get", "pod", "huge", "-o", "json"))
        [condition] = as_json["status"]["conditions"]
        assert (condition["type"], condition["reason"]) == ("PodScheduled", "Unschedulable")
        assert condition["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
        assert "phase: Bound" in _ok(kubeconfig, "get", "pod", "small", "-o", "yaml")
        assert _ok(kubeconfig, "get", "nodes").splitlines()[1].split()[:3] == ["n1", "Ready", "worker"]

        described = _ok(kubeconfig, "describe", "pod", "huge")
        assert "FailedScheduling" in described and "default-scheduler" in described
        assert "Successfully assigned default/small to n1" in _ok(kubeconfig, "describe", "pod", "small")
        node = _ok(kubeconfig, "describe", "node", "n1")
        assert "small" in node and "500m (25%)" in node

        watcher = subprocess.Popen([KUBECTL or "kubectl", "--kubeconfig", kubeconfig, "get", "pods", "-w",
                                    "--output-watch-events"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        try:
            time.sleep(1.5)
            (tmp_path / "late.yaml").write_text(
                "kind: Pod\nmetadata: {name: late}\nspec: {containers: [{name: c}]}\n")
            assert berth("apply", "-f", str(tmp_path / "late.yaml"), env=env).returncode == 0
            seen: list[list[str]] = []
            assert watcher.stdout is not None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(s[:2] == ["MODIFIED", "late"] and "Bound" in s for s in seen):
                seen.append(watcher.stdout.readline().split())
            assert ["ADDED", "late"] == next(s[:2] for s in seen if s[1:2] == ["late"])
            assert any(s[:2] == ["MODIFIED", "late"] and "Bound" in s for s in seen), seen
        finally:
            watcher.kill()
            watcher.communicate()

        assert 'pod "late" deleted' in _ok(kubeconfig, "delete", "pod", "late")
        gone = _kubectl(kubeconfig, "get", "pod", "late")
        assert gone.returncode == 1 and 'pods "late" not found' in gone.stderr


NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {tier: silver}}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_creates_applies_patches_and_explains(state: Path, tmp_path: Path) -> None:
    with running(state, tmp_path) as cluster:
        kubeconfig = cluster.kubeconfig
        nodes, pod = tmp_path / "nodes.yaml", tmp_path / "pod.yaml"
        nodes.write_text(NODES)
        pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\n"
                       "spec: {priorityClassName: high, containers: [{name: c, image: nginx}]}\n")

        assert _ok(kubeconfig, "apply", "-f", str(nodes)).split() == [
            "node/n1", "created", "priorityclass.scheduling.k8s.io/high", "created"]
        # A write answers once it can be read, as the API server's do: the pod names the class at once.
        assert _ok(kubeconfig, "create", "-f", str(pod)).strip() == "pod/web created"
        duplicate = _kubectl(kubeconfig, "create", "-f", str(pod))
        assert duplicate.returncode == 1 and 'pods "web" already exists' in duplicate.stderr
        assert "unchanged" in _ok(kubeconfig, "apply", "-f", str(nodes)), "the second apply is a no-op"

        nodes.write_text(NODES.replace("tier: silver", "tier: gold"))
        assert "node/n1 configured" in _ok(kubeconfig, "apply", "-f", str(nodes))
        assert "tier=gold" in _ok(kubeconfig, "get", "node", "n1", "--show-labels"), "read at once"
        for value in ("v1", "v2", "v3"):
            _ok(kubeconfig, "label", "node", "n1", f"probe={value}", "--overwrite")
            assert _ok(kubeconfig, "get", "node", "n1", "-o", "jsonpath={.metadata.labels.probe}") == value
        together = tmp_path / "together.yaml"
        together.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: race}\n"
                            "value: 7\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: raced}\n"
                            "spec: {priorityClassName: race, containers: [{name: c}]}\n")
        assert _ok(kubeconfig, "apply", "-f", str(together)).split() == [
            "priorityclass.scheduling.k8s.io/race", "created", "pod/raced", "created"]
        assert _ok(kubeconfig, "get", "pod", "raced", "-o", "jsonpath={.spec.priority}") == "7"
        by_priority = _ok(kubeconfig, "get", "pods", "--sort-by=.spec.priority").splitlines()
        # kubectl sorts the rows by their whole objects (before, their metadata alone: "No resources found").
        assert [line.split()[0] for line in by_priority[1:]] == ["raced", "web"], by_priority  # 7, then 1000
        raced = tmp_path / "raced.yaml"
        raced.write_text(together.read_text().split("---\n")[1])
        assert "pod/raced serverside-applied" in _ok(kubeconfig, "apply", "--server-side", "-f", str(raced)), \
            "a server-side apply of the pod as kubectl's client-side apply made it changes nothing"
        _ok(kubeconfig, "delete", "pod", "raced")
        doomed = tmp_path / "gone.yaml"
        doomed.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: gone}\n---\napiVersion: v1\nkind: Pod\n"
                          "metadata: {name: p, namespace: gone}\nspec: {containers: [{name: c}]}\n")
        _ok(kubeconfig, "apply", "-f", str(doomed))
        assert 'namespace "gone" deleted' in _ok(kubeconfig, "delete", "namespace", "gone")
        assert _kubectl(kubeconfig, "get", "namespace", "gone").returncode == 1, "its pods went with it"
        assert _ok(kubeconfig, "get", "pods", "-n", "gone", "-o", "name").strip() == ""
        kept = _kubectl(kubeconfig, "delete", "namespace", "default")
        assert kept.returncode == 1 and 'namespaces "default" is forbidden: this namespace may not be deleted' \
            in kept.stderr, kept.stderr
        assert _kubectl(kubeconfig, "get", "pod", "raced").returncode == 1, "a delete is read at once too"
        assert "serverside-applied" in _ok(kubeconfig, "apply", "--server-side", "-f", str(nodes))
        assert "labeled" in _ok(kubeconfig, "label", "node", "n1", "disk=ssd")

        relabel = _kubectl(kubeconfig, "label", "pod", "web", "app=db", "--overwrite")
        assert relabel.returncode == 1 and "metadata.labels.app" in relabel.stderr
        assert "a submitted pod does not change in Berth" in relabel.stderr
        bad = tmp_path / "bad.yaml"
        bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\n"
                       "spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n")
        invalid = _kubectl(kubeconfig, "create", "-f", str(bad))
        assert invalid.returncode == 1 and "spec.containers[0].resources.requests[cpu]" in invalid.stderr
        assert invalid.stderr.startswith('The Pod "bad" is invalid: '), invalid.stderr  # the API server's shape
        bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: twice}\n"
                       "spec: {containers: [{name: C, resources: {requests: {cpu: lots}}}]}\n")
        both = _kubectl(kubeconfig, "create", "-f", str(bad))  # every field error at once, as kubectl lists them
        assert both.returncode == 1, both.stderr
        assert both.stderr.startswith('The Pod "twice" is invalid: \n* spec.containers[0].name'), both.stderr
        assert "\n* spec.containers[0].resources.requests[cpu]: " in both.stderr
        bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\n"
                       "spec: {containers: [{name: c}], nodeSelectr: {}}\n")
        typo = _kubectl(kubeconfig, "create", "-f", str(bad))
        assert typo.returncode == 1 and 'unknown field "spec.nodeSelectr"' in typo.stderr, typo.stderr

        dry = tmp_path / "dry.yaml"
        dry.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: dry}\nspec: {containers: [{name: c}]}\n")
        assert "(server dry run)" in _ok(kubeconfig, "create", "-f", str(dry), "--dry-run=server")
        fresh = tmp_path / "fresh.yaml"
        fresh.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '1'}}\n")
        assert "node/n2 serverside-applied" in _ok(kubeconfig, "apply", "--server-side", "-f", str(fresh))
        assert _ok(kubeconfig, "get", "namespace", "default", "-o", "name").strip() == "namespace/default"
        mine = _ok(kubeconfig, "get", "pods", "--field-selector", "spec.schedulerName=default-scheduler", "-o", "name")
        assert mine.split() == ["pod/web"]
        gone = _kubectl(kubeconfig, "get", "pod", "dry")
        assert gone.returncode == 1 and "not found" in gone.stderr, "a dry run creates nothing"
        assert "(server dry run)" in _ok(kubeconfig, "delete", "pod", "web", "--dry-run=server")
        assert _ok(kubeconfig, "get", "pod", "web", "-o", "name").strip() == "pod/web", "a dry run deletes nothing"

        live = tmp_path / "live.yaml"
        live.write_text(_ok(kubeconfig, "get", "pod", "web", "-o", "yaml"))
        assert 'pod/web replaced' in _ok(kubeconfig, "replace", "-f", str(live)), "the pod as it is"
        pc = tmp_path / "pc.yaml"
        pc.write_text(_ok(kubeconfig, "get", "pc", "high", "-o", "yaml").replace("value: 1000", "value: 2000"))
        assert "replaced" in _ok(kubeconfig, "replace", "-f", str(pc))
        stale = _kubectl(kubeconfig, "replace", "-f", str(pc))  # its resourceVersion is now old
        assert stale.returncode == 1 and "the object has been modified" in stale.stderr, stale.stderr

        explained = _ok(kubeconfig, "explain", "pod.spec")
        assert "KIND:       Pod" in explained and "containers\t<[]Container>" in explained
        # The OpenAPI v2 document, which kubectl reads only as protobuf.
        older = _ok(kubeconfig, "explain", "pod.spec.nodeName", "--output", "plaintext-openapiv2")
        assert "FIELD:    nodeName <string>" in older, older
        unknown = tmp_path / "unknown.yaml"
        unknown.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n")
        refused = _kubectl(kubeconfig, "apply", "-f", str(unknown))
        assert refused.returncode == 1 and 'no matches for kind "Deployment" in version "apps/v1"' in refused.stderr, \
            refused.stderr  # as the API server without that kind: no "failed to download openapi"
        generated = tmp_path / "generated.yaml"
        generated.write_text("apiVersion: v1\nkind: Pod\nmetadata: {generateName: job-}\n"
                             "spec: {containers: [{name: c}]}\n")
        made = [_ok(kubeconfig, "create", "-f", str(generated)).split()[0] for _ in range(2)]
        assert all(m.startswith("pod/job-") and len(m) == len("pod/job-") + 5 for m in made) and made[0] != made[1]
        for m in made:
            _ok(kubeconfig, "delete", m)
        # kubectl's typed clients write protobuf: create's generators, and drain's deletes.
        assert _ok(kubeconfig, "create", "namespace", "team").strip() == "namespace/team created"
        assert "created" in _ok(kubeconfig, "create", "priorityclass", "zero", "--value=0", "--description=d")
        assert _ok(kubeconfig, "get", "pc", "zero", "-o", "jsonpath={.value}/{.description}") == "0/d"
        assert "created" in _ok(kubeconfig, "create", "pdb", "budget", "--selector=app=web", "--min-available=50%")
        assert _ok(kubeconfig, "get", "pdb", "budget", "-o", "jsonpath={.metadata.namespace}/{.spec.minAvailable}/"
                   "{.spec.selector.matchLabels.app}") == "default/50%/web"
        drained = _ok(kubeconfig, "drain", "n1", "--force", "--ignore-daemonsets", "--timeout=60s")
        assert "node/n1 drained" in drained, drained
        assert _ok(kubeconfig, "get", "pods", "-o", "name", "--field-selector=spec.nodeName=n1") == ""
        assert 'node "n1" deleted' in _ok(kubeconfig, "delete", "node", "n1")
