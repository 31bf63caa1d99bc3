"""PodInfo's derived data: kept once per set of containers, never shared across different ones."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from shared.cluster.view import bound_copy
from shared.framework.pod_info import PodInfo, compute_pod_requests
from tests.builders import MakePod


def test_bound_copies_and_replicas_share_the_derived_requests() -> None:
    pod = MakePod().name("a").req(cpu="100m", memory="500Mi").host_port(8080).obj()
    replica = MakePod().name("b").req(cpu="100m", memory="500Mi").host_port(8080).obj()
    first, placed, other = PodInfo(pod), PodInfo(bound_copy(pod, "n1")), PodInfo(replica)
    assert placed.requests is first.requests is other.requests
    assert first.requests.milli_cpu == 100 and first.host_ports == (("", "TCP", 8080),)


def test_different_containers_are_derived_apart() -> None:
    small = PodInfo(MakePod().name("a").req(cpu="100m").obj())
    large = PodInfo(MakePod().name("b").req(cpu="2").obj())
    no_request = PodInfo(MakePod().name("c").container().obj())
    sidecar = PodInfo(MakePod().name("d").req(cpu="100m").init_req({"cpu": "1"}, restart_policy="Always").obj())
    assert (small.requests.milli_cpu, large.requests.milli_cpu, no_request.requests.milli_cpu) == (100, 2000, 0)
    assert no_request.non_zero_milli_cpu == 100  # scoring's default for a container with no request
    assert sidecar.requests.milli_cpu == compute_pod_requests(sidecar.pod).milli_cpu == 1100


def _requests(pod_level: dict[str, str] | None, containers: list[dict[str, str]],
              init: Sequence[tuple[dict[str, str], bool]] = ()) -> dict[str, int]:
    b = MakePod().name("p")
    if pod_level is not None:
        b.pod_resources(pod_level)
    for c in containers:
        b.res(c)
    for c, sidecar in init:
        b.init_req(c, restart_policy="Always" if sidecar else None)
    got = compute_pod_requests(b.obj())
    out = {"cpu": got.milli_cpu, "memory": got.memory, "ephemeral-storage": got.ephemeral_storage, **got.scalar}
    return {k: v for k, v in out.items() if v}


MI, GI = 1 << 20, 1 << 30
# Upstream's component-helpers TestPodLevelResourceRequests (v1.34), cpu in millicores.
POD_LEVEL = [
    ("nil", {}, [], [], {}),
    ("pod level memory resource", {"memory": "2Mi"}, [], [], {"memory": 2 * MI}),
    ("pod level memory and container level cpu resources", {"memory": "2Mi"}, [{"cpu": "2m"}], [],
     {"memory": 2 * MI, "cpu": 2}),
    ("pod level unsupported resources set at both pod-level and container-level",
     {"ephemeral-storage": "2Mi"}, [{"ephemeral-storage": "3Mi"}], [], {"ephemeral-storage": 3 * MI}),
    ("pod level unsupported resources set at pod-level", {"ephemeral-storage": "2Mi"}, [{"memory": "3Mi"}], [],
     {"memory": 3 * MI}),
    ("both container-level and pod-level resources set", {"memory": "6Mi", "cpu": "8m"},
     [{"memory": "3Mi", "cpu": "2m"}], [], {"memory": 6 * MI, "cpu": 8}),
    ("container-level resources, init and sidecar containers set", None, [{"memory": "3Mi", "cpu": "2m"}],
     [({"memory": "5Mi", "cpu": "4m"}, True), ({"memory": "6Mi", "cpu": "8m"}, False)],
     {"memory": 11 * MI, "cpu": 12}),
    ("pod-level resources, container-level resources, init and sidecar containers set",
     {"memory": "15Mi", "cpu": "18m"}, [{"memory": "3Mi", "cpu": "2m"}],
     [({"memory": "5Mi", "cpu": "4m"}, True), ({"memory": "6Mi", "cpu": "8m"}, False)],
     {"memory": 15 * MI, "cpu": 18}),
    ("pod-level hugepages, multiple page sizes", {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}, [], [],
     {"cpu": 1000, "hugepages-2Mi": 2 * MI, "hugepages-1Gi": GI}),
    ("hugepages of different page sizes at pod level and container level",
     {"cpu": "1", "hugepages-2Mi": "10Mi"}, [{"memory": "4Mi", "hugepages-1Gi": "1Gi"}], [],
     {"cpu": 1000, "memory": 4 * MI, "hugepages-2Mi": 10 * MI, "hugepages-1Gi": GI}),
]


@pytest.mark.parametrize(("pod_level", "containers", "init", "want"), [c[1:] for c in POD_LEVEL],
                         ids=[c[0] for c in POD_LEVEL])
def test_pod_level_requests_replace_the_containers_for_cpu_memory_and_hugepages(
        pod_level: dict[str, str] | None, containers: list[dict[str, str]],
        init: list[tuple[dict[str, str], bool]], want: dict[str, int]) -> None:
    assert _requests(pod_level, containers, init) == want


def test_scoring_defaults_fill_only_what_neither_the_pod_nor_a_container_requests() -> None:
    both = PodInfo(MakePod().name("a").pod_resources({"cpu": "1"}).container().container().obj())
    assert (both.non_zero_milli_cpu, both.non_zero_memory) == (1000, 2 * 200 * MI)
    overhead = PodInfo(MakePod().name("b").pod_resources({"cpu": "1"}).req(cpu="100m").overhead({"cpu": "250m"}).obj())
    assert overhead.requests.milli_cpu == 1250
