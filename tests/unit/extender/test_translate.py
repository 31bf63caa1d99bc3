from __future__ import annotations

import ssl

import msgspec
import pytest

from shared.adapters.extender_http import (
    DEFAULT_TIMEOUT_SECONDS,
    HTTPExtender,
    build_extenders,
    parse_duration,
)
from shared.errors import InvalidInput
from shared.extender import (
    ExtenderError,
    ExtenderFilterResult,
    ExtenderPreemptionResult,
    filter_args,
    filter_result,
    interested,
    preemption_args,
    preemption_result,
)
from shared.model.config import (
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
)
from shared.preemption.victims import Victims
from tests.builders import MakeNode, MakePod


def test_wire_names_are_upstreams() -> None:
    pod = MakePod().name("p").uid("u1").info()
    nodes = [MakeNode().name("a").info(), MakeNode().name("b").info()]
    full = msgspec.to_builtins(filter_args(pod, nodes, node_cache_capable=False))
    assert set(full) == {"Pod", "Nodes"}
    assert full["Nodes"]["kind"] == "NodeList"
    assert [n["metadata"]["name"] for n in full["Nodes"]["items"]] == ["a", "b"]
    assert full["Pod"]["metadata"]["uid"] == "u1"
    cached = msgspec.to_builtins(filter_args(pod, nodes, node_cache_capable=True))
    assert set(cached) == {"Pod", "NodeNames"} and cached["NodeNames"] == ["a", "b"]
    victim = MakePod().name("v").uid("uv").info()
    meta = msgspec.to_builtins(preemption_args(pod, {"a": Victims([victim], 1)}, node_cache_capable=True))
    assert meta["NodeNameToMetaVictims"] == {"a": {"Pods": [{"UID": "uv"}], "NumPDBViolations": 1}}
    whole = msgspec.to_builtins(preemption_args(pod, {"a": Victims([victim])}, node_cache_capable=False))
    assert whole["NodeNameToVictims"]["a"]["Pods"][0]["metadata"]["name"] == "v"


def test_filter_result_keeps_sent_nodes_and_rejects_strangers() -> None:
    nodes = [MakeNode().name("a").info(), MakeNode().name("b").info()]
    raw = b'{"NodeNames": ["b"], "FailedNodes": {"a": "full"}, "FailedAndUnresolvableNodes": null, "Error": ""}'
    result = msgspec.json.decode(raw, type=ExtenderFilterResult)
    kept, failed, unresolvable = filter_result("ext", result, nodes, node_cache_capable=True)
    assert [n.name for n in kept] == ["b"] and failed == {"a": "full"} and unresolvable == {}
    with pytest.raises(ExtenderError, match="not found in the input node list"):
        filter_result("ext", ExtenderFilterResult(node_names=["zz"]), nodes, node_cache_capable=True)
    with pytest.raises(ExtenderError, match="boom"):
        filter_result("ext", ExtenderFilterResult(error="boom"), nodes, node_cache_capable=False)


def test_preemption_result_maps_uids_to_pods_on_the_node() -> None:
    victim = MakePod().name("v").uid("uv").node("a").info()
    node = MakeNode().name("a").info(victim)
    raw = b'{"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "uv"}], "NumPDBViolations": 2}}}'
    result = msgspec.json.decode(raw, type=ExtenderPreemptionResult)
    out = preemption_result("ext", result, {"a": node}.get, Victims)
    assert [p.name for p in out["a"].pods] == ["v"] and out["a"].num_pdb_violations == 2
    bad = msgspec.json.decode(b'{"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "nope"}]}}}',
                              type=ExtenderPreemptionResult)
    with pytest.raises(ExtenderError, match="but the pod is not on the node"):
        preemption_result("ext", bad, {"a": node}.get, Victims)


def test_interested_only_in_pods_using_managed_resources() -> None:
    plain = MakePod().name("p").req(cpu="1").info()
    gpu = MakePod().name("g").res({"example.com/gpu": 1}).info()
    assert interested(plain, frozenset())
    assert not interested(plain, frozenset({"example.com/gpu"}))
    assert interested(gpu, frozenset({"example.com/gpu"}))


@pytest.mark.parametrize(("value", "seconds"), [
    (None, DEFAULT_TIMEOUT_SECONDS), ("5s", 5.0), ("500ms", 0.5), ("1m30s", 90.0), ("1.5s", 1.5),
    (2, 2.0), (0.25, 0.25), ("0", DEFAULT_TIMEOUT_SECONDS), (0, DEFAULT_TIMEOUT_SECONDS),
])
def test_parse_duration(value: str | float | None, seconds: float) -> None:
    assert parse_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["5", "abc", "-1s", "1d"])
def test_parse_duration_rejects(value: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


def test_build_extenders_validates_like_upstream() -> None:
    ok = Extender(url_prefix="http://x/", prioritize_verb="p", weight=2, http_timeout="250ms",
                  managed_resources=[ExtenderManagedResource(name="example.com/gpu")])
    [ext] = build_extenders(KubeSchedulerConfiguration(extenders=[ok]))
    assert isinstance(ext, HTTPExtender)
    assert ext.name == "http://x/" and ext.url_prefix == "http://x" and ext.timeout == 0.25
    assert ext.supports_prioritize() and not ext.supports_filter() and not ext.supports_preemption()
    with pytest.raises(InvalidInput, match="positive weight"):
        build_extenders(KubeSchedulerConfiguration(extenders=[Extender(url_prefix="http://x", prioritize_verb="p")]))
    with pytest.raises(InvalidInput, match="httpTimeout"):
        build_extenders(KubeSchedulerConfiguration(extenders=[Extender(url_prefix="http://x", http_timeout="x")]))


@pytest.mark.parametrize("ext", [
    Extender(url_prefix="https://x", enable_https=True),
    Extender(url_prefix="HTTPS://x"),
    Extender(url_prefix="https://x", tls_config=ExtenderTLSConfig(server_name="x.example")),
])
def test_https_verifies_the_server_by_default(ext: Extender) -> None:
    # Upstream's makeTransport would skip verification for enableHTTPS without a CA.
    ctx = HTTPExtender(ext).context
    assert ctx is not None and ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


def test_only_insecure_turns_verification_off() -> None:
    ctx = HTTPExtender(Extender(url_prefix="https://x", tls_config=ExtenderTLSConfig(insecure=True))).context
    assert ctx is not None and ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname


def test_plain_http_without_tls_settings_has_no_context() -> None:
    assert HTTPExtender(Extender(url_prefix="http://x")).context is None
    # enableHTTPS builds (so validates) the settings; urllib uses them for https:// URLs only.
    assert HTTPExtender(Extender(url_prefix="http://x", enable_https=True)).context is not None


@pytest.mark.parametrize(("tls", "message"), [
    (ExtenderTLSConfig(insecure=True, ca_file="/etc/ssl/ca.pem"), "with the insecure flag is not allowed"),
    (ExtenderTLSConfig(ca_file="/nonexistent/ca.pem"), "No such file"),
    (ExtenderTLSConfig(ca_data="bm90IGEgY2VydGlmaWNhdGU="), "does not contain a certificate"),
])
def test_bad_tls_config_is_invalid_input(tls: ExtenderTLSConfig, message: str) -> None:
    ext = Extender(url_prefix="https://x", filter_verb="f", tls_config=tls)
    with pytest.raises(InvalidInput, match=message) as err:
        build_extenders(KubeSchedulerConfiguration(extenders=[ext]))
    assert err.value.field == "extenders[0].tlsConfig"
