"""Whatever the cluster and the pods, no simulated placement over-commits a node."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.framework.node_info import node_allocatable
from shared.framework.pod_info import PodInfo
from shared.model.loader import load_objects
from shared.simulation.simulator import Simulator

cpu = st.sampled_from(["100m", "250m", "500m", "1", "1500m", "2", "3"])
memory = st.sampled_from(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"])


@st.composite
def clusters(draw: st.DrawFn) -> list[dict]:
    docs: list[dict] = []
    n_nodes = draw(st.integers(1, 6))
    node_names = [f"n{i}" for i in range(n_nodes)]
    for name in node_names:
        alloc = {"cpu": draw(st.sampled_from(["1", "2", "4"])), "memory": draw(st.sampled_from(["1Gi", "2Gi", "8Gi"])),
                 "pods": str(draw(st.integers(1, 6)))}
        docs.append({"kind": "Node", "metadata": {"name": name, "labels": {"zone": f"z{draw(st.integers(0, 2))}"}},
                     "status": {"allocatable": alloc}})
    for i in range(draw(st.integers(1, 20))):
        container: dict = {"name": "c", "resources": {"requests": {"cpu": draw(cpu), "memory": draw(memory)}}}
        if draw(st.booleans()):
            container["ports"] = [{"containerPort": 80, "hostPort": draw(st.sampled_from([80, 443, 8080]))}]
        spec: dict = {"containers": [container], "priority": draw(st.sampled_from([0, 10, 100]))}
        if draw(st.integers(0, 4)) == 0:
            spec["nodeName"] = draw(st.sampled_from(node_names))
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"app": draw(st.sampled_from(["a", "b"]))}},
                     "spec": spec})
    return docs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 3))
def test_scheduled_pods_never_exceed_allocatable_pods_or_ports(docs: list[dict], seed: int) -> None:
    cluster = load_objects(("generated", d) for d in docs)
    report = Simulator(cluster, seed=seed).run()
    pods = {p.metadata.name: p for p in cluster.pods}
    nodes = {n.metadata.name: n for n in cluster.nodes}
    preset = {p.metadata.name for p in cluster.pods if p.spec.node_name}
    for node_name, node in nodes.items():
        placed = [PodInfo(pods[o.name]) for o in report.pods if o.phase == "Bound" and o.nodeName == node_name]
        scheduled = [pi for pi in placed if pi.name not in preset]
        if not scheduled:
            continue  # only pre-bound pods: the input itself may over-commit
        alloc = node_allocatable(node)
        # Every scheduled pod fitted when it was placed, so the node as a whole fits unless the
        # input's own pre-bound pods already exceeded it.
        preset_cpu = sum(pi.requests.milli_cpu for pi in placed if pi.name in preset)
        preset_mem = sum(pi.requests.memory for pi in placed if pi.name in preset)
        if preset_cpu <= alloc.milli_cpu and preset_mem <= alloc.memory:
            assert sum(pi.requests.milli_cpu for pi in placed) <= alloc.milli_cpu
            assert sum(pi.requests.memory for pi in placed) <= alloc.memory
        assert len(placed) <= max(alloc.allowed_pod_number, len(placed) - len(scheduled))
        ports = Counter(port for pi in scheduled for (_ip, _proto, port) in pi.host_ports)
        preset_ports = Counter(port for pi in placed if pi.name in preset for (_ip, _proto, port) in pi.host_ports)
        for port, count in ports.items():
            assert count + preset_ports[port] <= 1 or (count == 0), f"host port {port} used twice on {node_name}"
