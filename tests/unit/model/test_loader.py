import json

import pytest

from shared.errors import InvalidInput
from shared.model.loader import load_objects, parse_documents

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "2"}}}


def pod(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def load(*docs: dict):
    return load_objects(("test", d) for d in docs)


def test_yaml_multi_document_and_json_list_are_equivalent() -> None:
    yaml_text = ("---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    json_text = json.dumps({"kind": "List", "items": [NODE, pod("p")]})
    assert [d["kind"] for d in parse_documents(yaml_text)] == ["Node", "Pod"]
    assert [d["kind"] for d in parse_documents(json_text)] == ["Node", "Pod"]


def test_defaults_applied() -> None:
    cluster = load(NODE, pod("p"))
    p = cluster.pods[0]
    assert p.metadata.namespace == "default"
    assert p.spec.scheduler_name == "default-scheduler"
    assert p.spec.priority == 0
    assert p.spec.preemption_policy == "PreemptLowerPriority"


def test_priority_from_class_and_global_default() -> None:
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000,
         "preemptionPolicy": "Never"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "base"}, "value": 7,
         "globalDefault": True},
    ]
    cluster = load(*classes, pod("a", priorityClassName="high"), pod("b"), pod("c", priority=3))
    by_name = {p.metadata.name: p for p in cluster.pods}
    assert (by_name["a"].spec.priority, by_name["a"].spec.preemption_policy) == (1000, "Never")
    assert by_name["b"].spec.priority == 7
    assert by_name["c"].spec.priority == 3


def test_yaml_timestamps_stay_strings() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
            "status: {startTime: 2024-01-01T00:00:10Z}\n")
    cluster = load_objects(("t", d) for d in parse_documents(text))
    assert cluster.pods[0].status.start_time == "2024-01-01T00:00:10Z"


@pytest.mark.parametrize(
    ("docs", "field", "reason"),
    [
        ([pod("p", priority="high")], "spec.priority", "must be an integer, got a string"),
        ([{**pod("p"), "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}],
         "spec.containers[0].resources.requests[cpu]", "quantities must match"),
        ([pod("p", priorityClassName="missing")], "spec.priorityClassName",
         "no PriorityClass with name missing was found"),
        ([{**pod("p"), "spec": {}}], "spec.containers", "at least one container"),
        ([{"kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}}],
         "spec.taints[0].effect", "unsupported value"),
        ([pod("p", topologySpreadConstraints=[
            {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}])],
         "spec.topologySpreadConstraints[0].maxSkew", "greater than zero"),
        ([pod("p"), pod("p")], "metadata.name", "duplicate"),
        ([{"kind": "Deployment", "metadata": {"name": "d"}}], "kind", "unsupported kind"),
        ([{**pod("p"), "metadata": {}}], "metadata.name", "Required value: name or generateName is required"),
        ([{**pod("p"), "metadata": {"generateName": "job-"}}], "metadata.name",
         "generateName names an object on a create (kubectl create, a POST) alone; an apply needs a name"),
        ([{"kind": "Node", "metadata": {"generateName": "n-"}}], "metadata.name", "an apply needs a name"),
    ],
    ids=["priority-type", "bad-quantity", "unknown-priority-class", "no-containers", "taint-effect",
         "max-skew", "duplicate-pod", "unknown-kind", "unnamed", "generate-name-applied", "generate-name-node"],
)
def test_invalid_input_names_field_and_reason(docs: list[dict], field: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load(*docs)
    assert info.value.field == field
    assert reason in info.value.reason


def test_every_invalid_field_of_a_pod_is_named_at_once() -> None:
    # As the API server reports them: each part of the pod checked, each part's first error.
    bad = pod("p", tolerations=[{"operator": "Bogus"}], topologySpreadConstraints=[
        {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}])
    bad["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "lots"}}},
                                 {"name": "d", "ports": [{"containerPort": 80, "protocol": "XTP"}]}]
    with pytest.raises(InvalidInput) as info:
        load(bad)
    err = info.value
    assert [err.field, *(e.field for e in err.also)] == [
        "spec.containers[0].resources.requests[cpu]", "spec.containers[1].ports[0].protocol",
        "spec.tolerations[0].operator"], "the scheduling fields' first error: the constraint's is not reached"
    assert all(e.obj == "Pod default/p" for e in err.also)
    assert str(err).startswith("Pod default/p: spec.containers[0].resources.requests[cpu]: quantities must")
    assert "; spec.containers[1].ports[0].protocol: unsupported value 'XTP'" in str(err) and "\n" not in str(err)


def test_every_invalid_field_of_a_node_is_named_at_once() -> None:
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "lots"}},
            "spec": {"taints": [{"key": "", "effect": "NoSchedule"}, {"key": "k", "effect": "Sometimes"}]}}
    with pytest.raises(InvalidInput) as info:
        load(node)
    assert [info.value.field, *(e.field for e in info.value.also)] == [
        "status.allocatable[cpu]", "spec.taints[0].key", "spec.taints[1].effect"]


def test_a_missing_priority_class_is_refused_alone() -> None:
    # Admission (the Priority plugin) refuses the pod before validation looks at its fields.
    bad = pod("p", priorityClassName="missing", tolerations=[{"operator": "Bogus"}])
    with pytest.raises(InvalidInput) as info:
        load(bad)
    assert info.value.field == "spec.priorityClassName" and info.value.also == ()


def test_host_network_publishes_container_ports() -> None:
    p = pod("p", hostNetwork=True)
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    cluster = load(p)
    assert cluster.pods[0].spec.containers[0].ports[0].host_port == 8080
