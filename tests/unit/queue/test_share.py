"""Queues sharing a cluster: each pod is exactly one queue's, pods with constraints spanning nodes
the first's; each queue's workers are a contiguous slice of filter-requests; each reads its own
answers; each starts its walks on its own arc of the nodes."""

from __future__ import annotations

import pytest

from services.queue.dispatch import Dispatcher
from services.queue.settings import load
from services.queue.share import QueueShare
from shared.binding.queue_owner import hard_default_spread
from shared.errors import ConfigurationError
from shared.events import PREEMPTION, SHARD_RESULTS
from shared.framework.runtime import Framework
from shared.model.config import KubeSchedulerConfiguration, PluginConfig, Profile
from shared.profiles import build_profiles
from tests.builders import MakePod

PODS = [MakePod().name(f"p{i}").uid(f"default/p{i}").obj() for i in range(400)]


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_every_pod_is_exactly_one_queues(count: int) -> None:
    shares = [QueueShare(i, count) for i in range(count)]
    owners = [[s.index for s in shares if s.owns(p)] for p in PODS]
    assert all(len(o) == 1 for o in owners)
    shares_of = [sum(o == [k] for o in owners) / len(PODS) for k in range(count)]
    assert all(abs(share - 1 / count) < 0.1 for share in shares_of), shares_of


def test_pods_whose_constraints_span_nodes_are_the_first_queues() -> None:
    spread = [MakePod().name(f"s{i}").uid(f"default/s{i}").spread(1, "zone").obj() for i in range(40)]
    assert all(QueueShare(0, 4).owns(p) for p in spread)
    assert not any(QueueShare(k, 4).owns(p) for p in spread for k in (1, 2, 3))


def _strict_profiles() -> dict[str, Framework]:
    hard = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}
    strict = Profile(scheduler_name="strict", plugin_config=[PluginConfig(name="PodTopologySpread", args=hard)])
    return build_profiles(KubeSchedulerConfiguration(profiles=[Profile(), strict]))


def test_profiles_that_spread_by_default_where_it_must_hold() -> None:
    assert hard_default_spread(_strict_profiles()) == {"strict"}  # the system defaults are soft


def test_a_profile_that_spreads_by_default_where_it_must_hold_goes_together() -> None:
    profiles = _strict_profiles()
    strict = [MakePod().name(f"t{i}").uid(f"default/t{i}").scheduler_name("strict").obj() for i in range(40)]
    shares = [QueueShare(k, 4).serving(profiles) for k in range(4)]
    assert all(shares[0].owns(p) for p in strict)
    assert not any(s.owns(p) for p in strict for s in shares[1:])
    # The default profile's pods are still spread over the queues by uid.
    owners = {next(s.index for s in shares if s.owns(p)) for p in PODS}
    assert owners == {0, 1, 2, 3}


@pytest.mark.parametrize(("count", "slices"), [
    (1, [[0, 1, 2, 3, 4, 5, 6, 7]]),
    (2, [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (4, [[0, 1], [2, 3], [4, 5], [6, 7]]),
])
def test_each_queue_sends_to_its_own_slice_of_filter_requests(count: int, slices: list[list[int]]) -> None:
    assert [QueueShare(i, count).filter_partitions() for i in range(count)] == slices
    for i, mine in enumerate(slices):
        d = Dispatcher(mine)
        sent = {d.choose(f"b{k}") for k in range(20)}
        assert sent <= set(mine), i
        d.owned([0, 1, 2, 3, 4, 5, 6, 7])  # a worker owning partitions of several slices
        assert d.workers() == 1


def test_a_queue_reads_its_own_shard_results_and_all_preemption_outcomes() -> None:
    share = QueueShare(1, 2)
    assert [p for p in range(4) if share.reads(SHARD_RESULTS, p)] == [1]
    assert all(share.reads(PREEMPTION, p) for p in range(4))
    assert all(QueueShare().reads(SHARD_RESULTS, p) for p in range(4))


def test_each_queue_starts_on_its_own_arc() -> None:
    assert [QueueShare(i, 4).shifted(10, 100) for i in range(4)] == [10, 35, 60, 85]
    assert QueueShare(3, 4).shifted(40, 100) == 15
    assert QueueShare().shifted(10, 100) == 10


def test_settings_name_the_queue_its_share_and_its_own_consumer_group() -> None:
    one = load({})
    assert one.options.share == QueueShare() and one.group_id == "berth-queue"
    second = load({"BERTH_QUEUE_PARTITIONS": "2", "BERTH_QUEUE_PARTITION": "1"})
    assert second.options.share == QueueShare(1, 2) and second.group_id == "berth-queue-1"


@pytest.mark.parametrize(("env", "says"), [
    ({"BERTH_QUEUE_PARTITIONS": "5"}, "between 1 and 4"),
    ({"BERTH_QUEUE_PARTITIONS": "2", "BERTH_QUEUE_PARTITION": "2"}, "between 0 and 1"),
    ({"BERTH_QUEUE_PARTITIONS": "2", "BERTH_QUEUE_LOCKSTEP": "1"}, "runs one queue"),
])
def test_settings_refuse_a_share_that_cannot_run(env: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        load(env)
