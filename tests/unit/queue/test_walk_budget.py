"""On a large cluster the queue sizes a batch by its distinct walks, not its pods: pods that only
their names tell apart share one walk's answer, so a ReplicaSet's pods fill a whole batch where
pods that differ are cut at the feasible-node budget."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from prometheus_client import CollectorRegistry

from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from shared.framework.pod_info import PodInfo
from shared.model import KubeSchedulerConfiguration, PluginRef, Plugins, PluginSet, Pod, Profile
from shared.protocol.same_answers import WalkBudget
from tests.builders import MakePod
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod

NODES = 10  # under 100 nodes every node is sought: 10 feasible nodes a walk


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    return None


def _live(pods: Sequence[Pod], *, budget: int = 10**6, batch: int = 256) -> Scheduler:
    view = ClusterView()
    for i in range(NODES):
        view.apply(envelope(NodeUpserted(node=make_node(f"node-{i}", cpu="4")), producer="t"))
    for p in pods:
        view.apply(envelope(PodSubmitted(pod=p), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(batch_size=batch, feasible_budget=budget))
    s.start_live()
    return s


def _replicas(n: int) -> list[Pod]:
    return [make_pod(f"web-{i}", cpu="1", priority=0) for i in range(n)]


def _sizes(s: Scheduler) -> list[int]:
    sizes = []
    while (batch := s.pop_batch()):
        sizes.append(len(batch))
    return sizes


def test_pods_that_share_a_walk_fill_the_batch_whatever_the_budget() -> None:
    s = _live(_replicas(40), budget=2 * NODES, batch=16)
    assert _sizes(s) == [16, 16, 8]


def test_pods_that_differ_are_cut_at_the_budget() -> None:
    pods = [make_pod(f"p-{i}", cpu=f"{i + 1}00m", priority=0) for i in range(7)]
    s = _live(pods, budget=3 * NODES)
    assert _sizes(s) == [3, 3, 1]


def test_a_budget_of_less_than_one_walk_still_takes_a_pod() -> None:
    pods = [make_pod(f"p-{i}", cpu=f"{i + 1}00m", priority=0) for i in range(2)]
    s = _live(pods, budget=1)
    assert _sizes(s) == [1, 1]


def _nominated(pod: Pod) -> Pod:
    return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, nominated_node_name="node-1"))


def test_a_pod_whose_status_names_a_node_walks_alone() -> None:
    budget = WalkBudget(2)
    nominated, again = (_nominated(make_pod(name, cpu="1", priority=0)) for name in ("nominated", "again"))
    assert budget.admit(PodInfo(nominated))
    assert budget.admit(PodInfo(again))  # the second and last walk
    assert not budget.admit(PodInfo(make_pod("web-0", cpu="1", priority=0)))


def test_replicas_join_the_walk_they_share_once_the_budget_is_spent() -> None:
    budget = WalkBudget(1)
    assert budget.admit(PodInfo(make_pod("web-0", cpu="1", priority=0)))
    assert not budget.admit(PodInfo(make_pod("db-0", cpu="2", priority=0)))
    assert budget.admit(PodInfo(make_pod("web-1", cpu="1", priority=0)))


def test_a_pod_the_nominator_holds_walks_alone() -> None:
    budget = WalkBudget(2)
    assert budget.admit(PodInfo(make_pod("web-0", cpu="1", priority=0)), nominated=True)
    assert budget.admit(PodInfo(make_pod("web-1", cpu="1", priority=0)))  # the second and last walk
    assert not budget.admit(PodInfo(make_pod("web-2", cpu="1", priority=0)), nominated=True)
    assert budget.admit(PodInfo(make_pod("web-3", cpu="1", priority=0)))


def _apart(name: str, app: str = "web") -> Pod:
    """A replica that keeps off every node another of its app runs on."""
    term = MakePod.term("kubernetes.io/hostname", match_labels={"app": app})
    return MakePod().name(name).label("app", app).req(cpu="100m").pod_anti_affinity(term).obj()


def test_replicas_with_required_anti_affinity_share_a_walk_half_its_nodes_at_most() -> None:
    # Ten nodes, all sought: five such replicas to a walk, so the later ones of a batch still
    # have nodes to fall back on instead of being scheduled again in the queue one by one.
    s = _live([_apart(f"web-{i}") for i in range(12)])
    assert _sizes(s) == [NODES // 2, NODES // 2, 2]


def test_the_cap_counts_only_pods_with_required_anti_affinity() -> None:
    budget = WalkBudget(None, repelling_most=lambda info: 2)
    assert all(budget.admit(PodInfo(make_pod(f"web-{i}", cpu="1", priority=0))) for i in range(50))
    assert budget.admit(PodInfo(_apart("a-0")))
    assert budget.admit(PodInfo(_apart("a-1")))
    assert not budget.admit(PodInfo(_apart("a-2")))
    assert budget.admit(PodInfo(make_pod("web-50", cpu="1", priority=0)))


def test_repelling_pods_of_different_walks_count_together() -> None:
    # Every walk of a batch starts at the same node: a StatefulSet's pods, each with labels of
    # its own, search the same nodes as one ReplicaSet's would.
    budget = WalkBudget(None, repelling_most=lambda info: 2)
    assert budget.admit(PodInfo(_apart("web-0")))
    assert budget.admit(PodInfo(_apart("db-0", app="db")))
    assert not budget.admit(PodInfo(_apart("cache-0", app="cache")))


def test_a_pod_refused_by_the_walk_budget_is_not_counted_as_repelling() -> None:
    budget = WalkBudget(1, repelling_most=lambda info: 2)
    assert budget.admit(PodInfo(_apart("web-0")))
    assert not budget.admit(PodInfo(_apart("db-0", app="db")))  # a second walk
    assert budget.repelling == 1
    assert budget.admit(PodInfo(_apart("web-1")))  # the walk it shares


def test_each_pod_is_held_to_its_own_profile_s_walk() -> None:
    # A profile that scores nothing looks for one feasible node: a batch holding one of its
    # repelling pods takes no second one, where the default profile's fill half of a 10-node walk
    # (the lone pod counted among them).
    view = ClusterView()
    for i in range(NODES):
        view.apply(envelope(NodeUpserted(node=make_node(f"node-{i}", cpu="4")), producer="t"))
    lone = [MakePod().name(f"lone-{i}").scheduler_name("no-scores").label("app", "lone").req(cpu="100m")
            .pod_anti_affinity(MakePod.term("kubernetes.io/hostname", match_labels={"app": "lone"})).obj()
            for i in range(2)]
    for p in [*lone, *(_apart(f"web-{i}") for i in range(6))]:
        view.apply(envelope(PodSubmitted(pod=p), producer="t"))
    no_scores = Profile(scheduler_name="no-scores", plugins=Plugins(score=PluginSet(disabled=[PluginRef(name="*")])))
    config = KubeSchedulerConfiguration(profiles=[Profile(scheduler_name="default-scheduler"), no_scores])
    s = Scheduler(view, profiles_from(config), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(), config=config)
    s.start_live()
    assert _sizes(s) == [1, NODES // 2, 2]
