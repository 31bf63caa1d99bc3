"""The read-model fold: what each event does, and that the result does not depend on how the
projector interleaves partitions (only on each partition's own order)."""

from __future__ import annotations

import random
import uuid
import zlib
from datetime import UTC, datetime, timedelta

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.events import (
    BindRejected,
    BindRequested,
    Envelope,
    NodeDeleted,
    NodeUpserted,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    SchedulingAttempted,
    TopicRegistry,
    envelope,
)
from shared.projection import ReadModel, apply, fold, keys_for
from tests.unit.events.samples import lifecycle, make_node, make_pod

REGISTRY = TopicRegistry()
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _envs(payloads: list) -> list[Envelope]:
    return [envelope(p, producer="t", timestamp=T0 + timedelta(milliseconds=i), event_id=uuid.UUID(int=i + 1))
            for i, p in enumerate(payloads)]


def _partition(env: Envelope) -> tuple[str, int]:
    topic = REGISTRY.topic_of(env.payload)
    return topic, zlib.crc32(env.key.encode()) % REGISTRY.spec(topic).partitions


def test_pod_lifecycle_columns() -> None:
    pod = make_pod("web", "u1")
    model = fold(_envs([
        PodSubmitted(pod=pod),
        SchedulingAttempted(pod_uid="u1", attempt=1, profile="p", node_name=None, message="0/1 nodes", seed=1,
                            config_hash="h"),
        BindRequested(pod_uid="u1", pod=pod, node_name="n1", attempt_id="a2", seed=2),
        PodBound(pod_uid="u1", node_name="n1", attempt_id="a2"),
    ]))
    row = model.pods["u1"]
    assert (row.phase, row.node_name, row.namespace, row.name, row.message) == (
        "Bound", "n1", "default", "web", "0/1 nodes")
    binding = model.bindings[("u1", "a2")]
    assert (binding.state, binding.seed, binding.node_name) == ("Bound", 2, "n1")
    assert model.attempts[("u1", 1)].message == "0/1 nodes"


def test_binding_spends_the_nomination_in_either_order() -> None:
    pod = make_pod("web", "u1")
    nominated, bound = PodNominated(uid="u1", node_name="n2"), PodBound(pod_uid="u1", node_name="n2", attempt_id="a")
    assert fold(_envs([PodSubmitted(pod=pod), nominated])).pods["u1"].nominated_node_name == "n2"
    for order in ([nominated, bound], [bound, nominated]):
        row = fold(_envs([PodSubmitted(pod=pod), *order])).pods["u1"]
        assert (row.phase, row.node_name, row.nominated_node_name) == ("Bound", "n2", "")


def test_a_pod_created_on_a_node_is_bound_once_its_node_admitted_it() -> None:
    created = PodSubmitted(pod=make_pod("sys", "u2", node_name="n9"))
    model = fold(_envs([created]))
    assert (model.pods["u2"].phase, model.pods["u2"].node_name) == ("Pending", "n9")
    model = fold(_envs([created, PodBound(pod_uid="u2", node_name="n9", attempt_id="admission/u2/1")]))
    assert (model.pods["u2"].phase, model.pods["u2"].node_name) == ("Bound", "n9")


def test_a_pod_its_node_refused_has_failed_with_the_kubelets_reason() -> None:
    refused = BindRejected(pod_uid="u2", node_name="n9", attempt_id="admission/u2/1", status_reason="OutOfcpu",
                           reason="Pod was rejected: Node didn't have enough resource: cpu")
    model = fold(_envs([PodSubmitted(pod=make_pod("sys", "u2", node_name="n9")), refused]))
    row = model.pods["u2"]
    assert (row.phase, row.failed_reason, row.failed_message) == ("Failed", "OutOfcpu", refused.reason)
    not_found = BindRejected(pod_uid="u3", node_name="ghost", attempt_id="admission/u3/1", reason="node not found")
    model = fold(_envs([PodSubmitted(pod=make_pod("late", "u3", node_name="ghost")), not_found]))
    assert model.pods["u3"].phase == "Pending", "no such node yet: it waits for one"


def test_events_before_the_submission_leave_a_stub_that_the_submission_completes() -> None:
    model = ReadModel()
    bound, submitted = _envs([PodBound(pod_uid="u3", node_name="n1", attempt_id="a"),
                              PodSubmitted(pod=make_pod("late", "u3"))])
    apply(model, bound)
    assert (model.pods["u3"].name, model.pods["u3"].phase) == ("", "Bound")
    apply(model, submitted)
    assert (model.pods["u3"].name, model.pods["u3"].phase) == ("late", "Bound")


def test_a_rejection_is_not_undone_by_a_late_request() -> None:
    pod = make_pod("p", "u4")
    rejected, requested = _envs([
        BindRejected(pod_uid="u4", node_name="n1", attempt_id="a", reason="Insufficient cpu"),
        BindRequested(pod_uid="u4", pod=pod, node_name="n1", attempt_id="a", seed=5),
    ])
    model = fold([rejected, requested])
    row = model.bindings[("u4", "a")]
    assert (row.state, row.reason, row.seed) == ("Rejected", "Insufficient cpu", 5)


def test_delete_removes_nodes_and_marks_pods() -> None:
    model = fold(_envs([NodeUpserted(node=make_node("n1")), NodeDeleted(node_name="n1"),
                        PodDeleted(uid="u5", namespace="default", name="gone")]))
    assert "n1" not in model.nodes
    assert (model.pods["u5"].phase, model.pods["u5"].name) == ("Deleted", "gone")


def test_a_victim_evicted_before_its_bind_landed_keeps_the_eviction_node() -> None:
    pod = make_pod("low", "u6")
    model = fold(_envs([PodSubmitted(pod=pod),
                        BindRequested(pod_uid="u6", pod=pod, node_name="n3", attempt_id="a", seed=1),
                        PodEvicted(uid="u6", preemptor_uid="u7", node_name="n3"),
                        BindRejected(pod_uid="u6", node_name="n3", attempt_id="a", reason="pod has been deleted")]))
    row = model.pods["u6"]
    assert (row.phase, row.node_name, row.preempted_by, row.preempted_on) == ("Deleted", "", "u7", "n3")


def test_apply_reports_only_real_changes_and_fold_skips_repeated_ids() -> None:
    (env,) = _envs([NodeUpserted(node=make_node("n1"))])
    model = ReadModel()
    assert apply(model, env) == {("nodes", "n1")}
    assert apply(model, env) == set()
    assert fold([env, env]) == model
    assert keys_for(env) == [("nodes", "n1")]


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=0, max_value=50))
def test_fold_is_independent_of_the_interleaving_of_partitions(rnd: random.Random, seed: int) -> None:
    history = _envs(lifecycle(n_nodes=3, n_pods=10, seed=seed))
    queues: dict[tuple[str, int], list[Envelope]] = {}
    for env in history:
        queues.setdefault(_partition(env), []).append(env)
    interleaved = []
    while queues:
        key = rnd.choice(sorted(queues))
        interleaved.append(queues[key].pop(0))
        if not queues[key]:
            del queues[key]
    assert fold(interleaved) == fold(history)


def test_rows_survive_a_json_round_trip() -> None:
    model = fold(_envs(lifecycle()))
    for table in ("nodes", "pods", "attempts", "bindings", "preemptions"):
        for row in model.table(table).values():
            data = msgspec.json.decode(msgspec.json.encode(row))
            assert msgspec.convert(data, type(row)) == row
