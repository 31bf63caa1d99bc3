"""Gateway request validation and rendering, without a broker or database."""

from __future__ import annotations

import pytest

from services.gateway import objects
from shared.errors import InvalidInput
from shared.events import NodeUpserted, PodSubmitted, PriorityClassUpserted
from shared.model import ObjectMeta, PodDisruptionBudget, PriorityClass
from shared.model.policy import PodDisruptionBudgetStatus

POD = {"kind": "Pod", "metadata": {"name": "p", "uid": "client-uid"},
       "spec": {"priorityClassName": "high", "containers": [{"name": "c"}]}}


def test_pod_resolves_a_stored_priority_class_and_gets_a_fresh_uid() -> None:
    stored = [PriorityClass(metadata=ObjectMeta(name="high"), value=7)]
    v = objects.validate([POD], stored)
    assert v.priority_classes == [] and v.pods[0].spec.priority == 7
    assert v.pods[0].metadata.uid not in ("client-uid", "default/p") and len(v.pods[0].metadata.uid) == 36


def test_request_classes_win_and_events_come_in_dependency_order() -> None:
    docs = objects.parse_body("kind: Node\nmetadata: {name: n}\n---\nkind: PriorityClass\nmetadata: {name: high}\n"
                              "value: 9\n---\n" + '{"kind": "Pod", "metadata": {"name": "p"}, '
                              '"spec": {"priorityClassName": "high", "containers": [{"name": "c"}]}}')
    v = objects.validate(docs, [PriorityClass(metadata=ObjectMeta(name="high"), value=1)])
    assert v.pods[0].spec.priority == 9
    assert [type(e) for e in objects.events_of(v)] == [PriorityClassUpserted, NodeUpserted, PodSubmitted]


@pytest.mark.parametrize(("body", "field"), [
    ("kind: Service\nmetadata: {name: s}\n", "kind"),
    ("kind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: nope, containers: [{name: c}]}\n",
     "spec.priorityClassName"),
    ("kind: Pod\nmetadata: {name: p}\nspec: {}\n", "spec.containers"),
], ids=["unsupported-kind", "unknown-class", "no-containers"])
def test_invalid_bodies_name_the_field(body: str, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        objects.validate(objects.parse_body(body), [])
    assert err.value.field == field


@pytest.mark.parametrize(("body", "field"), [
    ('{"kind": "Pod", "metadata": {"name": "p", "namespace": "team", "annotations": {"a": "x\\u0000y"}},'
     ' "spec": {"containers": [{"name": "c"}]}}', "metadata.annotations.a"),
    ('{"kind": "Pod", "metadata": {"name": "p", "namespace": "team"},'
     ' "spec": {"containers": [{"name": "c", "image": "nginx\\u0000"}]}}', "spec.containers[0].image"),
    ('{"kind": "Pod", "metadata": {"name": "p", "namespace": "team", "labels": {"k\\u0000": "v"}},'
     ' "spec": {"containers": [{"name": "c"}]}}', "metadata.labels.k\\0"),
], ids=["annotation", "image", "label-key"])
def test_a_nul_character_anywhere_is_refused_naming_its_field(body: str, field: str) -> None:
    # The event store (PostgreSQL JSON) cannot hold one: accepted, the pod would take room that no
    # read shows and no delete finds.
    with pytest.raises(InvalidInput) as err:
        objects.validate(objects.parse_body(body), [])
    assert (err.value.obj, err.value.field) == ("Pod team/p", field)
    assert str(err.value).endswith("must not contain the NUL character (\\u0000)")


def test_a_priority_class_of_value_zero_shows_its_value() -> None:
    # Upstream's `value` has no omitempty: `kubectl get pc -o jsonpath={.value}` prints 0, not nothing.
    rendered = objects.render_object(PriorityClass(metadata=ObjectMeta(name="zero")), "scheduling.k8s.io/v1",
                                     "PriorityClass")
    assert rendered["value"] == 0 and rendered["metadata"]["name"] == "zero"
    assert objects.render_object(PriorityClass(metadata=ObjectMeta(name="high"), value=7), "scheduling.k8s.io/v1",
                                 "PriorityClass")["value"] == 7


def test_a_budget_shows_the_status_the_scheduler_reads() -> None:
    # No status given: upstream's four counts have no omitempty, and preemption reads 0 allowed.
    bare = objects.render_object(PodDisruptionBudget(metadata=ObjectMeta(name="b")), "policy/v1",
                                 "PodDisruptionBudget")
    assert bare["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    given = PodDisruptionBudget(metadata=ObjectMeta(name="b"), status=PodDisruptionBudgetStatus(disruptions_allowed=2,
                                                                                                 current_healthy=3))
    status = objects.render_object(given, "policy/v1", "PodDisruptionBudget")["status"]
    assert status["disruptionsAllowed"] == 2 and status["currentHealthy"] == 3 and status["expectedPods"] == 0


def test_a_rendered_default_is_the_objects_own() -> None:
    budget = PodDisruptionBudget(metadata=ObjectMeta(name="b"))
    objects.render_object(budget, "policy/v1", "PodDisruptionBudget")["status"]["expectedPods"] = 9
    assert objects.render_object(budget, "policy/v1", "PodDisruptionBudget")["status"]["expectedPods"] == 0
