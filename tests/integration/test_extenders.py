"""The simulator against real HTTP extenders: the example servers of examples/extenders/ run on
free 127.0.0.1 ports in threads."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from shared.adapters.extender_http import build_extenders
from shared.model.config import (
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
)
from shared.model.loader import ClusterInput
from shared.scheduler.outcome import PodOutcome
from shared.simulation.simulator import Simulator
from tests.builders import MakeNode, MakePod
from tests.unit.extender.servers import Cert, https_url, running, self_signed, server_tls


def _nodes(*names: str) -> list[Any]:
    return [MakeNode().name(n).capacity(cpu="4", memory="8Gi", pods="10").obj() for n in names]


def _simulate(extenders: list[Extender], pods: list[Any], nodes: list[Any]) -> list[PodOutcome]:
    cluster = ClusterInput(nodes=nodes, pods=pods, config=KubeSchedulerConfiguration(extenders=extenders))
    return Simulator(cluster, seed=1, make_extenders=build_extenders).run().pods


def _pod(name: str = "p", **requests: Any) -> Any:
    return MakePod().name(name).uid(f"uid-{name}").req(cpu="1", **requests).obj()


def test_filter_extender_rejects_a_node_and_the_pod_lands_elsewhere() -> None:
    with running("full_node", full={"a"}) as server:
        [out] = _simulate([Extender(url_prefix=server.url, filter_verb="filter")], [_pod()], _nodes("a", "b"))
    assert out.phase == "Bound" and out.nodeName == "b"
    verb, body = server.calls[0]
    assert verb == "filter" and "Nodes" in body and "NodeNames" not in body


def test_filter_extender_rejecting_every_node_is_in_the_fit_error() -> None:
    with running("full_node", full={"a", "b"}, reason="node is full") as server:
        [out] = _simulate([Extender(url_prefix=server.url, filter_verb="filter")], [_pod()], _nodes("a", "b"))
    assert out.phase == "Pending"
    assert out.message is not None and out.message.startswith("0/2 nodes are available: 2 node is full.")


def test_node_cache_capable_extender_gets_node_names() -> None:
    with running("node_cache", blocked={"a"}) as server:
        ext = Extender(url_prefix=server.url + "/", filter_verb="filter", node_cache_capable=True)
        [out] = _simulate([ext], [_pod()], _nodes("a", "b"))
    assert out.nodeName == "b"
    _, body = server.calls[0]
    assert sorted(body["NodeNames"]) == ["a", "b"] and "Nodes" not in body


def test_prioritizer_weight_changes_the_choice() -> None:
    # Two prioritizers disagree; the heavier one decides (scores x weight x 10 join the plugins').
    with running("prioritizer", preferred={"a"}) as likes_a, running("prioritizer", preferred={"b"}) as likes_b:
        def choice(weight_a: int, weight_b: int) -> str | None:
            exts = [Extender(url_prefix=likes_a.url, prioritize_verb="prioritize", weight=weight_a),
                    Extender(url_prefix=likes_b.url, prioritize_verb="prioritize", weight=weight_b)]
            return _simulate(exts, [_pod()], _nodes("a", "b"))[0].nodeName
        assert choice(1, 2) == "b"
        assert choice(3, 1) == "a"
    assert likes_a.calls and "Nodes" in likes_a.calls[0][1]


def test_timing_out_extender_fails_the_attempt_unless_ignorable() -> None:
    with running("full_node", delay=1.0) as server:
        strict = Extender(url_prefix=server.url, filter_verb="filter", http_timeout="100ms")
        [failed] = _simulate([strict], [_pod()], _nodes("a", "b"))
        ignorable = Extender(url_prefix=server.url, filter_verb="filter", http_timeout="100ms", ignorable=True)
        [skipped] = _simulate([ignorable], [_pod()], _nodes("a", "b"))
    assert failed.phase == "Pending" and failed.message is not None and server.url in failed.message
    assert skipped.phase == "Bound"


def test_managed_resources_limit_which_pods_are_sent() -> None:
    nodes = [MakeNode().name(n).capacity({"example.com/gpu": "2"}, cpu="4", memory="8Gi", pods="10").obj()
             for n in ("a", "b")]
    gpu_pod = MakePod().name("gpu").uid("uid-gpu").res({"cpu": "1", "example.com/gpu": 1}).obj()
    with running("full_node", full={"a"}) as server:
        ext = Extender(url_prefix=server.url, filter_verb="filter",
                       managed_resources=[ExtenderManagedResource(name="example.com/gpu")])
        outs = _simulate([ext], [_pod("plain"), gpu_pod], nodes)
    assert [body["Pod"]["metadata"]["name"] for _, body in server.calls] == ["gpu"]
    assert {o.name: o.nodeName for o in outs}["gpu"] == "b"


def test_extenders_run_in_order_and_rejected_nodes_are_not_sent_on() -> None:
    with running("full_node", full={"a"}) as first, running("node_cache", blocked={"b"}) as second:
        exts = [Extender(url_prefix=first.url, filter_verb="filter"),
                Extender(url_prefix=second.url, filter_verb="filter", node_cache_capable=True)]
        [out] = _simulate(exts, [_pod()], _nodes("a", "b", "c"))
    assert out.nodeName == "c"
    assert sorted(second.calls[0][1]["NodeNames"]) == ["b", "c"]


def test_preempt_extender_vetoes_a_node() -> None:
    nodes = [MakeNode().name(n).capacity(cpu="1", memory="8Gi", pods="10").obj() for n in ("a", "b")]
    low = [MakePod().name(f"low-{n}").uid(f"uid-low-{n}").node(n).priority(1).req(cpu="1").obj() for n in ("a", "b")]
    high = MakePod().name("high").uid("uid-high").priority(100).req(cpu="1").obj()
    with running("preempt", protected={"a"}) as server:
        ext = Extender(url_prefix=server.url, preempt_verb="preempt", node_cache_capable=True)
        outs = {o.name: o for o in _simulate([ext], [*low, high], nodes)}
    assert outs["low-a"].phase == "Bound" and outs["low-b"].preemptedBy is not None
    assert outs["high"].nodeName == "b"
    assert any(verb == "preempt" for verb, _ in server.calls)


def test_binder_extender_binds_instead_of_the_default_binder() -> None:
    with running("binder") as server:
        outs = _simulate([Extender(url_prefix=server.url, bind_verb="bind")], [_pod("p"), _pod("q")], _nodes("a"))
    assert [(o.name, o.phase, o.nodeName) for o in outs] == [("p", "Bound", "a"), ("q", "Bound", "a")]
    assert server.bound == {"default/p": "a", "default/q": "a"}
    verb, body = server.calls[0]
    assert verb == "bind" and body == {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "a"}


def test_a_refused_bind_leaves_the_pod_pending_unless_the_binder_is_ignorable() -> None:
    with running("binder", refuse={"a"}) as server:
        [out] = _simulate([Extender(url_prefix=server.url, bind_verb="bind")], [_pod()], _nodes("a"))
        [fallback] = _simulate([Extender(url_prefix=server.url, bind_verb="bind", ignorable=True)], [_pod()],
                               _nodes("a"))
    assert out.phase == "Pending" and out.message == "node a does not take pods from this binder"
    assert fallback.phase == "Bound" and fallback.nodeName == "a"  # the default binder took over


def test_only_one_extender_may_bind() -> None:
    import pytest

    from shared.errors import InvalidInput

    two = [Extender(url_prefix="http://127.0.0.1:1", bind_verb="bind"),
           Extender(url_prefix="http://127.0.0.1:2", bind_verb="bind")]
    with pytest.raises(InvalidInput) as err:
        _simulate(two, [_pod()], _nodes("a"))
    assert err.value.field == "extenders" and "only one extender can implement bind" in str(err.value)


def test_an_error_answer_or_an_http_failure_fails_the_attempt_unless_ignorable() -> None:
    with running("full_node", error="the inventory service is down") as server:
        strict = Extender(url_prefix=server.url, filter_verb="filter")
        [failed] = _simulate([strict], [_pod()], _nodes("a", "b"))
        [skipped] = _simulate([Extender(url_prefix=server.url, filter_verb="filter", ignorable=True)], [_pod()],
                              _nodes("a", "b"))
        # An unknown verb: the server answers 404.
        [not_found] = _simulate([Extender(url_prefix=server.url, filter_verb="nosuchverb")], [_pod()], _nodes("a"))
    assert failed.phase == "Pending" and failed.message is not None
    assert "the inventory service is down" in failed.message
    assert skipped.phase == "Bound"
    assert not_found.phase == "Pending"
    assert not_found.message == f"failed nosuchverb with extender at URL {server.url}/nosuchverb, code 404"


def test_a_prioritizer_error_is_ignored() -> None:
    with running("full_node") as server:
        # full_node has no prioritize verb: the call fails (404), and the pod is scheduled anyway.
        [out] = _simulate([Extender(url_prefix=server.url, prioritize_verb="prioritize", weight=1)],
                          [_pod()], _nodes("a", "b"))
    assert out.phase == "Bound"
    assert [verb for verb, _ in server.calls] == ["prioritize"]


# -- https ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Cert]:
    d = tmp_path_factory.mktemp("certs")
    return {"local": self_signed(d, "local", "DNS:localhost", "IP:127.0.0.1"),
            "named": self_signed(d, "named", "DNS:extender.test"),
            "client": self_signed(d, "client", "DNS:scheduler.test")}


def _filter(url: str, **tls: Any) -> Extender:
    return Extender(url_prefix=url, filter_verb="filter", tls_config=ExtenderTLSConfig(**tls) if tls else None)


@pytest.mark.parametrize("enable_https", [False, True])
def test_https_extender_with_an_untrusted_certificate_fails_the_attempt(certs: dict[str, Cert],
                                                                        enable_https: bool) -> None:
    # Upstream skips verification for enableHTTPS without a CA; Berth verifies against the system store.
    with running("full_node", tls=server_tls(certs["local"])) as server:
        ext = msgspec.structs.replace(_filter(https_url(server)), enable_https=enable_https)
        [out] = _simulate([ext], [_pod()], _nodes("a"))
    assert out.phase == "Pending" and out.message is not None
    assert out.message.startswith(f'Post "{https_url(server)}/filter": tls: failed to verify certificate: ')
    assert "self-signed certificate" in out.message
    assert not server.calls


def test_https_extender_trusted_by_ca_file_or_data_or_insecure_is_called(certs: dict[str, Cert]) -> None:
    ca = certs["local"].cert
    with running("full_node", tls=server_tls(certs["local"]), full={"a"}) as server:
        url = https_url(server)
        for ext in (_filter(url, ca_file=str(ca)),
                    _filter(url, ca_data=base64.b64encode(ca.read_bytes()).decode()),
                    _filter(url, insecure=True)):
            [out] = _simulate([ext], [_pod()], _nodes("a", "b"))
            assert (out.phase, out.nodeName) == ("Bound", "b")
    assert len(server.calls) == 3


def test_https_extender_host_name_is_checked_against_server_name(certs: dict[str, Cert]) -> None:
    ca = str(certs["named"].cert)
    with running("full_node", tls=server_tls(certs["named"])) as server:
        [wrong_host] = _simulate([_filter(https_url(server), ca_file=ca)], [_pod()], _nodes("a"))
        [named] = _simulate([_filter(https_url(server), ca_file=ca, server_name="extender.test")], [_pod()],
                            _nodes("a"))
    assert wrong_host.phase == "Pending" and wrong_host.message is not None
    assert "mismatch, certificate is not valid for '127.0.0.1'" in wrong_host.message
    assert named.phase == "Bound"


def test_https_extender_requiring_a_client_certificate(certs: dict[str, Cert]) -> None:
    ca, client = str(certs["local"].cert), certs["client"]
    with running("full_node", tls=server_tls(certs["local"], client_ca=client.cert)) as server:
        url = https_url(server)
        [anonymous] = _simulate([_filter(url, ca_file=ca)], [_pod()], _nodes("a"))
        [from_files] = _simulate([_filter(url, ca_file=ca, cert_file=str(client.cert), key_file=str(client.key))],
                                 [_pod()], _nodes("a"))
        [from_data] = _simulate([_filter(url, ca_file=ca, cert_data=base64.b64encode(client.cert.read_bytes()).decode(),
                                         key_data=base64.b64encode(client.key.read_bytes()).decode())],
                                [_pod()], _nodes("a"))
    assert anonymous.phase == "Pending"
    assert from_files.phase == "Bound" and from_data.phase == "Bound"
    assert len(server.calls) == 2
