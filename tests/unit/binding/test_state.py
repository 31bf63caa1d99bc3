"""The binder's pure decision: fit re-check, never over-commit, never bind twice, freeing on delete,
and the rebuild from the log giving the state live handling left."""

from __future__ import annotations

import uuid

import pytest

from shared.binding import NODE_NOT_FOUND, POD_DELETED, BinderState, Ignored, ignored_by_profile, rebuild_shard
from shared.events import BindRejected, BindRequested, NodeDeleted, NodeUpserted, PodBound
from shared.model.config import Extender, ExtenderManagedResource, KubeSchedulerConfiguration
from shared.plugins.nodeports import ERR_REASON as PORTS
from shared.profiles import build_profiles
from tests.builders import MakePod

from .support import NOW, bind, node, outcome, pod, state_with, upsert


def test_fits_then_bound_and_counted() -> None:
    state = state_with(node())
    got = outcome(state, bind(pod("p1")))
    assert got == PodBound(pod_uid="p1", node_name="n1", attempt_id="a1")
    assert state.shards[0].nodes["n1"].requested.milli_cpu == 1000


@pytest.mark.parametrize(("requests", "reason"), [
    pytest.param({"cpu": "3"}, "Insufficient cpu", id="cpu"),
    pytest.param({"memory": "8Gi"}, "Insufficient memory", id="memory"),
    pytest.param({"cpu": "3", "memory": "8Gi"}, "Insufficient cpu, Insufficient memory", id="both"),
])
def test_over_commit_refused(requests: dict[str, str], reason: str) -> None:
    state = state_with(node())
    assert isinstance(outcome(state, bind(pod("p1", cpu="2", memory="2Gi"))), PodBound)
    got = outcome(state, bind(MakePod().name("p2").uid("p2").res(requests).obj()))
    assert isinstance(got, BindRejected) and got.reason == reason
    assert len(state.shards[0].nodes["n1"].pods) == 1


def test_burst_binds_only_up_to_capacity() -> None:
    state = state_with(node(cpu="4"))
    results = [outcome(state, bind(pod(f"p{i}"))) for i in range(10)]
    assert sum(isinstance(r, PodBound) for r in results) == 4
    assert all(r.reason == "Insufficient cpu" for r in results if isinstance(r, BindRejected))


def test_pod_count() -> None:
    state = state_with(node(pods=2))
    results = [outcome(state, bind(pod(f"p{i}", cpu="10m", memory="1Mi"))) for i in range(3)]
    assert [type(r).__name__ for r in results] == ["PodBound", "PodBound", "BindRejected"]
    assert isinstance(results[2], BindRejected) and results[2].reason == "Too many pods"


def test_host_port_conflict() -> None:
    state = state_with(node())
    assert isinstance(outcome(state, bind(pod("p1", port=8080))), PodBound)
    clash = outcome(state, bind(pod("p2", port=8080)))
    assert isinstance(clash, BindRejected) and clash.reason == PORTS
    assert isinstance(outcome(state, bind(pod("p3", port=8081))), PodBound)


def test_redelivered_request_gets_the_same_outcome() -> None:
    state = state_with(node(cpu="1"))
    first, second = bind(pod("p1")), bind(pod("p2"))
    a, b = state.decide(0, first, NOW), state.decide(0, second, NOW)
    assert state.decide(0, first, NOW) == a and state.decide(0, second, NOW) == b
    assert isinstance(b.payload, BindRejected)
    assert len(state.shards[0].nodes["n1"].pods) == 1


def test_pod_never_bound_twice() -> None:
    state = state_with(node("n1"), node("n2"))
    p = pod("p1")
    first = state.decide(0, bind(p, "n1"), NOW)
    again = state.decide(0, bind(p, "n2", attempt="a2"), NOW)
    assert again == first  # the same PodBound, same event id
    assert [len(state.shards[0].nodes[n].pods) for n in ("n1", "n2")] == [1, 0]


def test_pod_bound_in_another_shard_of_the_member() -> None:
    state = BinderState()
    state.install(0, rebuild_shard([upsert(node("n1"))], [], []))
    state.install(5, rebuild_shard([upsert(node("n2"))], [], []))
    first = state.decide(0, bind(pod("p1"), "n1"), NOW)
    assert state.decide(5, bind(pod("p1"), "n2"), NOW) == first
    assert not state.shards[5].nodes["n2"].pods


def test_unknown_and_deleted_node() -> None:
    state = state_with(node("n1"))
    got = outcome(state, bind(pod("p1"), "nope"))
    assert isinstance(got, BindRejected) and got.reason == NODE_NOT_FOUND
    state.shards[0].apply_node(NodeDeleted(node_name="n1"))
    got = outcome(state, bind(pod("p2"), "n1"))
    assert isinstance(got, BindRejected) and got.reason == NODE_NOT_FOUND


def test_node_upsert_keeps_committed_pods() -> None:
    state = state_with(node(cpu="2"))
    assert isinstance(outcome(state, bind(pod("p1", cpu="2"))), PodBound)
    state.shards[0].apply_node(NodeUpserted(node=node(cpu="3")))
    assert state.shards[0].nodes["n1"].requested.milli_cpu == 2000
    got = outcome(state, bind(pod("p2", cpu="2")))
    assert isinstance(got, BindRejected) and got.reason == "Insufficient cpu"


def test_delete_frees_room_and_rejects_the_deleted_pod() -> None:
    state = state_with(node(cpu="1"))
    assert isinstance(outcome(state, bind(pod("p1"))), PodBound)
    assert isinstance(outcome(state, bind(pod("p2"))), BindRejected)
    state.forget("p1")  # PodDeleted / PodEvicted
    assert isinstance(outcome(state, bind(pod("p3"))), PodBound)
    got = outcome(state, bind(pod("p1")))
    assert isinstance(got, BindRejected) and got.reason == POD_DELETED


def test_rebuild_from_the_log_equals_live_state() -> None:
    live = state_with(node(cpu="3"))
    nodes = [upsert(node(cpu="3"))]
    requests = [bind(pod(f"p{i}", port=9000 + i % 2)) for i in range(5)]
    outcomes = [live.decide(0, r, NOW) for r in requests]
    live.forget("p0")
    rebuilt = BinderState()
    # Topics are read separately: placements before the node and the binds must not matter.
    rebuilt.deleted.add("p0")
    rebuilt.install(0, rebuild_shard(nodes, reversed(requests), outcomes, rebuilt.deleted))
    a, b = live.shards[0], rebuilt.shards[0]
    assert a.outcomes == b.outcomes and a.bound == b.bound and set(a.pods) == set(b.pods)
    assert a.nodes["n1"].requested.milli_cpu == b.nodes["n1"].requested.milli_cpu == 1000
    for r, o in zip(requests, outcomes, strict=True):
        assert rebuilt.decide(0, r, NOW) == o  # a redelivery after the rebuild: same answer
    nxt = bind(pod("p9"))
    assert live.decide(0, nxt, NOW) == rebuilt.decide(0, nxt, NOW)


def test_rebuild_applies_deletions_seen_during_it() -> None:
    live = state_with(node(cpu="1"))
    req = bind(pod("p1"))
    out = live.decide(0, req, NOW)
    state = BinderState()
    shard = rebuild_shard([upsert(node(cpu="1"))], [req], [out])
    state.forget("p1")
    state.install(0, shard)
    assert not state.shards[0].pods and not state.shards[0].nodes["n1"].pods


def test_derived_ids_are_stable() -> None:
    req = bind(pod("p1"))
    a, b = state_with(node()).decide(0, req, NOW), state_with(node()).decide(0, req, NOW)
    assert a.event_id == b.event_id != req.event_id
    assert a.event_id != uuid.UUID(int=0)


def test_a_binding_extender_is_asked_only_for_a_pod_that_fits_and_its_refusal_rejects() -> None:
    state = state_with(node(cpu="2"))
    asked: list[str] = []

    def refuse_p2(b: BindRequested) -> str:
        asked.append(b.pod_uid)
        return "the extender refused" if b.pod_uid == "p2" else ""

    assert isinstance(state.decide(0, bind(pod("p1")), NOW, refuse_p2).payload, PodBound)
    refused = state.decide(0, bind(pod("p2"), attempt="a2"), NOW, refuse_p2).payload
    assert isinstance(refused, BindRejected) and refused.reason == "the extender refused"
    too_big = state.decide(0, bind(pod("p3", cpu="2"), attempt="a3"), NOW, refuse_p2).payload
    assert isinstance(too_big, BindRejected) and too_big.reason == "Insufficient cpu"
    assert asked == ["p1", "p2"]  # never asked about a pod that does not fit
    assert state.shards[0].nodes["n1"].requested.milli_cpu == 1000  # the refused pod takes no room


def test_resources_the_scheduler_ignores_are_not_checked_but_the_rest_still_is() -> None:
    config = KubeSchedulerConfiguration(extenders=[Extender(
        url_prefix="http://127.0.0.1:1", filter_verb="filter",
        managed_resources=[ExtenderManagedResource(name="example.com/gpu", ignored_by_scheduler=True),
                           ExtenderManagedResource(name="example.com/fpga")])])
    ignored = ignored_by_profile(build_profiles(config))
    assert ignored == {"default-scheduler": Ignored(frozenset({"example.com/gpu"}), frozenset())}
    state = state_with(node(cpu="2"))
    state.ignored = ignored
    gpu = MakePod().name("gpu").uid("gpu").res({"cpu": "1", "example.com/gpu": 1}).obj()
    assert isinstance(outcome(state, bind(gpu)), PodBound)  # no node offers example.com/gpu
    fpga = MakePod().name("fpga").uid("fpga").res({"cpu": "1", "example.com/fpga": 1}).obj()
    got = outcome(state, bind(fpga))
    assert isinstance(got, BindRejected) and got.reason == "Insufficient example.com/fpga"
    big = MakePod().name("big").uid("big").res({"cpu": "2", "example.com/gpu": 1}).obj()
    got = outcome(state, bind(big))
    assert isinstance(got, BindRejected) and got.reason == "Insufficient cpu"
    # Without the scheduler's configuration, nothing is ignored.
    plain = state_with(node(cpu="2"))
    got = outcome(plain, bind(MakePod().name("g2").uid("g2").res({"cpu": "1", "example.com/gpu": 1}).obj()))
    assert isinstance(got, BindRejected) and got.reason == "Insufficient example.com/gpu"
