"""A batch decided on a view that moved since its walks re-checks each pod where it goes, except on
a node unchanged since the walks' view (`unchanged_below`) for a pod whose verdicts read nothing
but the pod and that node: such a node passes as it did. The decisions are the same either way."""

from __future__ import annotations

from collections.abc import Callable

from shared.cluster.view import bound_copy
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import PreFilterResult
from shared.framework.node_info import NodeInfo, generation_mark
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status
from shared.profiles import build_profiles
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.sharded import MergedFilter
from shared.queue import Nominator
from tests.builders import MakeNode, MakePod

ZONE = "topology.kubernetes.io/zone"
NODES = {"a": "z1", "b": "z1", "c": "z2"}
Change = Callable[[Framework, Snapshot], None]


def _cluster() -> tuple[Framework, Snapshot]:
    """Three nodes with room for two one-CPU pods each; a and b in zone z1, c in z2."""
    fwk = build_profiles(None)["default-scheduler"]
    snapshot = Snapshot([MakeNode().name(n).label(ZONE, z).capacity(cpu="2", memory="16Gi", pods="10").info()
                         for n, z in NODES.items()])
    fwk.set_snapshot(snapshot)
    fwk.set_nominator(Nominator())
    return fwk, snapshot


def _place(snapshot: Snapshot, info: PodInfo, node: str) -> None:
    snapshot.node_info_map[node].add_pod(info.placed(bound_copy(info.pod, node)))


RAW = {"NodeResourcesFit": {"a": 90, "b": 50, "c": 10}}
"""The walks' raw scores: every pod ranks a, then b, then c."""


def _decide(pods: list[PodInfo], change: Change, *, marked: bool) -> tuple[list[Decision], list[str]]:
    """Each pod walked on the empty cluster (every node feasible); then `change` moves the view
    before the batch is decided with its pods re-checked. Returns the decisions and the nodes the
    re-checks ran Filter on, in order."""
    fwk, snapshot = _cluster()
    mark = generation_mark()
    change(fwk, snapshot)
    checked: list[str] = []
    run = fwk.run_filter_plugins_with_nominated_pods

    def recording(state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        checked.append(node_info.name)
        return run(state, pod, node_info)

    fwk.run_filter_plugins_with_nominated_pods = recording  # type: ignore[method-assign]  # records the nodes checked
    items = [BatchItem(fwk, info, MergedFilter(feasible=["a", "b", "c"]), RAW, 0) for info in pods]
    by_uid = {info.uid: info for info in pods}
    decisions = decide_batch(items, lambda: snapshot, lambda uid, host: _place(snapshot, by_uid[uid], host),
                             placed_before=True, unchanged_below=mark if marked else None)
    return decisions, checked


def _both(pods: Callable[[], list[PodInfo]], change: Change) -> tuple[list[str], list[str], list[str]]:
    """The hosts (the same with and without the mark) and the nodes checked without and with it."""
    plain, checked_plain = _decide(pods(), change, marked=False)
    marked, checked_marked = _decide(pods(), change, marked=True)
    assert [(d.verdict, d.host) for d in marked] == [(d.verdict, d.host) for d in plain]
    return [d.host for d in plain], checked_plain, checked_marked


def _plain_pods(n: int, **labels: str) -> Callable[[], list[PodInfo]]:
    return lambda: [MakePod().name(f"p{k}").uid(f"uid-p{k}").labels(labels).req(cpu="1").info() for k in range(n)]


def _nothing(fwk: Framework, snapshot: Snapshot) -> None:
    pass


def test_a_node_unchanged_since_the_walks_is_not_checked_again() -> None:
    hosts, plain, marked = _both(_plain_pods(2), _nothing)
    assert hosts == ["a", "a"]
    assert (plain, marked) == (["a", "a"], ["a"])  # the second pod finds a changed by the first


def test_a_node_changed_since_the_walks_is_checked_again() -> None:
    def fill_a(fwk: Framework, snapshot: Snapshot) -> None:
        _place(snapshot, MakePod().name("big").uid("uid-big").req(cpu="2").info(), "a")

    hosts, plain, marked = _both(_plain_pods(1), fill_a)
    assert hosts == ["b"]
    assert (plain, marked) == (["a", "b"], ["a"])  # a is full since; b, unchanged, passes as it did


def test_a_pod_with_required_pod_anti_affinity_is_checked_on_an_unchanged_node() -> None:
    def web_in_z1(fwk: Framework, snapshot: Snapshot) -> None:
        _place(snapshot, MakePod().name("web").uid("uid-web").label("app", "web").req(cpu="1").info(), "b")

    def repelled() -> list[PodInfo]:
        term = MakePod.term(ZONE, {"app": "web"})
        return [MakePod().name("p0").uid("uid-p0").req(cpu="1").pod_anti_affinity(term).info()]

    hosts, plain, marked = _both(repelled, web_in_z1)
    assert hosts == ["c"]  # a is unchanged, but the web pod placed on b since repels it from z1
    assert marked == plain == ["a", "b", "c"]


def test_a_placed_pods_anti_affinity_is_respected_on_an_unchanged_node() -> None:
    def guard_in_z1(fwk: Framework, snapshot: Snapshot) -> None:
        term = MakePod.term(ZONE, {"app": "web"})
        guard = MakePod().name("guard").uid("uid-guard").req(cpu="1").pod_anti_affinity(term).info()
        _place(snapshot, guard, "b")

    hosts, plain, marked = _both(_plain_pods(1, app="web"), guard_in_z1)
    assert hosts == ["c"]
    assert marked == plain == ["a", "b", "c"]


def test_a_pod_with_a_hard_spread_constraint_is_checked_on_an_unchanged_node() -> None:
    def two_in_z1(fwk: Framework, snapshot: Snapshot) -> None:
        for k in range(2):
            _place(snapshot, MakePod().name(f"s{k}").uid(f"uid-s{k}").label("app", "s").req(cpu="1").info(), "b")

    def spread() -> list[PodInfo]:
        return [MakePod().name("p0").uid("uid-p0").label("app", "s").req(cpu="1")
                .spread(1, ZONE, selector={"matchLabels": {"app": "s"}}).info()]

    hosts, plain, marked = _both(spread, two_in_z1)
    assert hosts == ["c"]  # z1 holds two matching pods since: a third there would skew the zones by 3
    assert marked == plain == ["a", "b", "c"]


def test_a_node_with_a_pod_nominated_since_is_checked_again() -> None:
    def nominate_to_a(fwk: Framework, snapshot: Snapshot) -> None:
        nominated = MakePod().name("high").uid("uid-high").priority(100).req(cpu="2").info()
        nominator = fwk.nominator()
        assert isinstance(nominator, Nominator)
        nominator.add_nominated_pod(nominated, "a")

    hosts, plain, marked = _both(_plain_pods(1), nominate_to_a)
    assert hosts == ["b"]  # a's room is held for the nominated pod of higher priority
    assert (plain, marked) == (["a", "b"], ["a"])


def test_pods_of_one_spec_share_prefilter_where_its_outcome_is_the_specs_alone() -> None:
    fwk, snapshot = _cluster()
    ran: list[str] = []
    run = fwk.run_pre_filter_plugins

    def recording(state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        ran.append(pod.uid)
        return run(state, pod)

    fwk.run_pre_filter_plugins = recording  # type: ignore[method-assign]  # counts the pods that run PreFilter
    apart = MakePod.term("kubernetes.io/hostname", {"app": "apart"})
    pods = [*_plain_pods(3)(),
            *(MakePod().name(f"q{k}").uid(f"uid-q{k}").label("app", "apart").req(cpu="1").pod_anti_affinity(apart)
              .info() for k in range(2))]
    items = [BatchItem(fwk, info, MergedFilter(feasible=["a", "b", "c"]), RAW, 0) for info in pods]
    by_uid = {info.uid: info for info in pods}
    decisions = decide_batch(items, lambda: snapshot, lambda uid, host: _place(snapshot, by_uid[uid], host),
                             placed_before=True)
    assert [(d.verdict, d.host) for d in decisions] == [("bind", "a"), ("bind", "a"), ("bind", "b"),
                                                        ("bind", "b"), ("bind", "c")]
    # The plain pods' PreFilter state is their spec's: the first pod's serves the others. Each pod
    # with required anti-affinity counts the pods placed before it in its own PreFilter.
    assert ran == ["uid-p0", "uid-q0", "uid-q1"]
