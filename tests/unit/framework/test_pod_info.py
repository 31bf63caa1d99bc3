"""PodInfo's derived data: kept once per set of containers, never shared across different ones."""

from __future__ import annotations

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
