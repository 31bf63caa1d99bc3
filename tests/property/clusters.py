"""Hypothesis strategies the property tests share: small clusters of nodes and pods drawn from
a few shapes (resources, priorities, host ports, taints, zones, spread constraints)."""

from __future__ import annotations

from hypothesis import strategies as st


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


@st.composite
def large_clusters(draw: st.DrawFn) -> list[dict]:
    """Above 100 nodes: each attempt walks part of them, from a rotating start; fillers of low
    priority on some nodes give preemption its ground."""
    docs: list[dict] = []
    n_nodes = draw(st.integers(101, 160))
    full = draw(st.integers(0, 100))  # percent of nodes a low-priority pod fills: preemption's ground
    for i in range(n_nodes):
        cpu = draw(st.sampled_from(["1", "2"]))
        node: dict = {"kind": "Node", "metadata": {"name": f"n{i:03d}", "labels": {"zone": f"z{i % 3}"}},
                      "status": {"allocatable": {"cpu": cpu, "memory": "2Gi", "pods": str(draw(st.integers(1, 4)))}}}
        if draw(st.integers(0, 99)) < full:
            docs.append({"kind": "Pod", "metadata": {"name": f"filler{i:03d}"}, "spec": {
                "nodeName": f"n{i:03d}", "priority": draw(st.sampled_from([0, 50])),
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}})
        roll = draw(st.integers(0, 9))
        if roll < 2:
            node["spec"] = {"taints": [{"key": "t", "value": "v", "effect": ["NoSchedule", "PreferNoSchedule"][roll]}]}
        elif roll == 2:
            node["spec"] = {"unschedulable": True}
        docs.append(node)
    specs = st.fixed_dictionaries({
        "cpu": st.sampled_from(["500m", "1", "1500m"]),
        "priority": st.sampled_from([0, 0, 10, 100]),
        "port": st.sampled_from([0, 0, 80]),
        "tolerate": st.booleans(),
        "zone": st.sampled_from([None, None, "z0", "z1"]),
        "spread": st.sampled_from([None, None, "DoNotSchedule", "ScheduleAnyway"]),
        "app": st.sampled_from(["a", "b"]),
    })
    shapes = [draw(specs) for _ in range(3)]  # few shapes: many identical pods
    for i in range(draw(st.integers(20, 70))):
        spec = shapes[draw(st.integers(0, 2))]
        pod_spec = spec_of(spec)
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i:03d}", "labels": {"app": spec["app"]}},
                     "spec": pod_spec})
    return docs
