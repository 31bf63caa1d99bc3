"""Reusing node-local plugin results never changes a decision: the same cluster scheduled with and
without the memo gives the same report, preemptions and messages included."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.model.loader import load_objects
from shared.simulation.simulator import Simulator


def spec_of(shape: dict) -> dict:
    """A pod spec from a drawn shape: cpu, priority, host port, tolerations, a preferred zone
    ("zone", optional) and a spread constraint over the pods of its app."""
    container: dict = {"name": "c", "resources": {"requests": {"cpu": shape["cpu"], "memory": "256Mi"}}}
    if shape["port"]:
        container["ports"] = [{"containerPort": 80, "hostPort": shape["port"]}]
    pod_spec: dict = {"containers": [container], "priority": shape["priority"]}
    if shape["tolerate"]:
        pod_spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if shape.get("zone"):
        pod_spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": [shape["zone"]]}]}}]}}
    if shape["spread"]:
        pod_spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone",
                                                  "whenUnsatisfiable": shape["spread"],
                                                  "labelSelector": {"matchLabels": {"app": shape["app"]}}}]
    return pod_spec


@st.composite
def clusters(draw: st.DrawFn) -> list[dict]:
    docs: list[dict] = []
    n_nodes = draw(st.integers(1, 5))
    for i in range(n_nodes):
        node: dict = {"kind": "Node", "metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 2}"}},
                      "status": {"allocatable": {"cpu": draw(st.sampled_from(["1", "2"])), "memory": "2Gi",
                                                 "pods": str(draw(st.integers(2, 5)))}}}
        if draw(st.integers(0, 3)) == 0:
            node["spec"] = {"taints": [{"key": "t", "value": "v", "effect": draw(st.sampled_from(
                ["NoSchedule", "PreferNoSchedule"]))}]}
        docs.append(node)
    spec_choices = st.fixed_dictionaries({
        "cpu": st.sampled_from(["250m", "500m", "1"]),
        "priority": st.sampled_from([0, 10, 100]),
        "port": st.sampled_from([0, 0, 80]),
        "tolerate": st.booleans(),
        "app": st.sampled_from(["a", "b"]),
        "spread": st.sampled_from([None, "DoNotSchedule", "ScheduleAnyway"]),
    })
    shared_spec = draw(spec_choices)
    for i in range(draw(st.integers(2, 16))):
        spec = shared_spec if draw(st.booleans()) else draw(spec_choices)  # many identical pods
        pod_spec = spec_of(spec)
        if draw(st.integers(0, 5)) == 0:
            pod_spec["nodeName"] = f"n{draw(st.integers(0, n_nodes - 1))}"
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"app": spec["app"]}}, "spec": pod_spec})
    return docs


def _report(docs: list[dict], seed: int, memoize: bool) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    for fwk in sim.profiles.values():
        fwk.memoize = memoize
    import msgspec

    return msgspec.json.encode(sim.run())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5))
def test_memo_changes_no_outcome(docs: list[dict], seed: int) -> None:
    assert _report(docs, seed, memoize=True) == _report(docs, seed, memoize=False)
