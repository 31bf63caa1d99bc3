"""The binder refuses a bind that breaks a required anti-affinity scoped to the node, both ways, as
InterPodAffinity's Filter would; constraints spanning nodes are left to one queue (`spans_nodes`)."""

from __future__ import annotations

import msgspec
import pytest

from shared.binding import anti_affinity_filtered
from shared.binding.node_local import spans_nodes
from shared.events import BindRejected, PodBound
from shared.model import Node, Pod
from shared.model.config import (
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from shared.plugins.interpodaffinity import (
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from shared.plugins.names import INTER_POD_AFFINITY
from shared.profiles import build_profiles
from tests.builders import MakeNode, MakePod

from .support import bind, outcome, state_with

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _node(name: str = "n1") -> Node:
    return MakeNode().name(name).label(HOST, name).label(ZONE, "z1").capacity(cpu="8", memory="8Gi", pods=10).obj()


def _pod(uid: str, app: str = "web", avoid: str | None = None, key: str = HOST,
         namespace_selector: dict[str, object] | None = None) -> Pod:
    b = MakePod().name(uid).uid(uid).label("app", app).req(cpu="100m")
    if avoid is not None:
        b = b.pod_anti_affinity(MakePod.term(key, {"app": avoid}, namespace_selector=namespace_selector))
    return b.obj()


def test_a_pod_whose_host_anti_affinity_selects_a_pod_on_the_node_is_refused() -> None:
    state = state_with(_node())
    assert isinstance(outcome(state, bind(_pod("db", app="db"), attempt="a1")), PodBound)
    got = outcome(state, bind(_pod("web", avoid="db"), attempt="a2"))
    assert isinstance(got, BindRejected) and got.reason == ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH


def test_a_pod_selected_by_the_host_anti_affinity_of_a_pod_on_the_node_is_refused() -> None:
    state = state_with(_node())
    assert isinstance(outcome(state, bind(_pod("web", avoid="db"), attempt="a1")), PodBound)
    got = outcome(state, bind(_pod("db", app="db"), attempt="a2"))
    assert isinstance(got, BindRejected) and got.reason == ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH


def test_replicas_avoiding_each_other_get_one_per_node() -> None:
    state = state_with(_node("n1"), _node("n2"))
    first = outcome(state, bind(_pod("r1", avoid="web"), "n1", attempt="a1"))
    second = outcome(state, bind(_pod("r2", avoid="web"), "n1", attempt="a2"))
    third = outcome(state, bind(_pod("r3", avoid="web"), "n2", attempt="a3"))
    assert isinstance(first, PodBound) and isinstance(third, PodBound)
    assert isinstance(second, BindRejected)
    assert second.reason == ", ".join([ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                                       ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH])


@pytest.mark.parametrize("second", [
    pytest.param(_pod("web", avoid="db", key=ZONE), id="zone-wide term: the queue's to check"),
    pytest.param(_pod("web", avoid="db", namespace_selector={}), id="namespaces by label: not followed here"),
    pytest.param(_pod("web", avoid="cache"), id="selects nothing on the node"),
])
def test_terms_the_node_cannot_judge_or_that_select_nothing_there_bind(second: Pod) -> None:
    state = state_with(_node())
    assert isinstance(outcome(state, bind(_pod("db", app="db"), attempt="a1")), PodBound)
    assert isinstance(outcome(state, bind(second, attempt="a2")), PodBound)


@pytest.mark.parametrize(("pod", "spans"), [
    pytest.param(MakePod().name("p").obj(), False, id="no constraint"),
    pytest.param(_pod("p", avoid="web"), False, id="host anti-affinity"),
    pytest.param(_pod("p", avoid="web", key=ZONE), True, id="zone anti-affinity"),
    pytest.param(_pod("p", avoid="web", namespace_selector={}), True, id="host anti-affinity, namespaces by label"),
    pytest.param(MakePod().name("p").pod_affinity(MakePod.term(HOST, {"app": "db"})).obj(), True,
                 id="required pod affinity"),
    pytest.param(MakePod().name("p").pod_affinity(MakePod.term(ZONE, {"app": "db"}), weight=5).obj(), False,
                 id="preferred pod affinity"),
    pytest.param(MakePod().name("p").spread(1, ZONE).obj(), True, id="hard spread"),
    pytest.param(MakePod().name("p").spread(1, ZONE, when="ScheduleAnyway").obj(), False, id="soft spread"),
])
def test_which_pods_have_constraints_spanning_nodes(pod: Pod, spans: bool) -> None:
    assert spans_nodes(pod) is spans


def test_only_binds_of_profiles_that_filter_by_anti_affinity_are_held_to_it() -> None:
    no_anti_affinity = PluginSet(disabled=[PluginRef(name=INTER_POD_AFFINITY)])
    lax = Profile(scheduler_name="lax", plugins=Plugins(filter=no_anti_affinity))
    checked = anti_affinity_filtered(build_profiles(KubeSchedulerConfiguration(profiles=[Profile(), lax])))
    assert checked == {DEFAULT_SCHEDULER_NAME}
    state = state_with(_node())
    state.anti_affinity = checked
    assert isinstance(outcome(state, bind(_pod("db", app="db"), attempt="a1")), PodBound)
    for uid, scheduler in (("lax-web", "lax"), ("other-web", "another-scheduler")):
        web = _pod(uid, avoid="db")
        other = msgspec.structs.replace(web, spec=msgspec.structs.replace(web.spec, scheduler_name=scheduler))
        assert isinstance(outcome(state, bind(other, attempt=uid)), PodBound), scheduler
    assert isinstance(outcome(state, bind(_pod("web", avoid="db"), attempt="a2")), BindRejected)
