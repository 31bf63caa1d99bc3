"""`kubectl auth can-i`: what each token may do, as the reviews answer it."""

from __future__ import annotations

import pytest

from services.gateway.access_review import access, rules
from services.gateway.auth import FORBIDDEN
from services.gateway.protobuf_body import decode
from shared.errors import InvalidInput

# `kubectl auth can-i create pods` as kubectl v1.32 sent it (its -v=9 dump).
CAN_I_CREATE_PODS = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a656374416363657373526576"
    "696577123f0a100a0012001a0022002a0032003800420012210a1f0a0764656661756c7412066372656174651a0022002a04706f64"
    "7332003a001a08080012001a0020001a002200")


def _on(verb: str, resource: str, group: str = "", subresource: str = "") -> dict[str, object]:
    return {"resourceAttributes": {"verb": verb, "resource": resource, "group": group, "subresource": subresource}}


def test_kubectls_review_reads_as_its_spec() -> None:
    review = decode(CAN_I_CREATE_PODS)
    assert review["kind"] == "SelfSubjectAccessReview"
    assert review["spec"] == {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}}


def test_the_admin_token_may_do_what_the_api_serves() -> None:
    assert access("admin", _on("create", "pods")) == {"allowed": True}
    assert access("admin", _on("patch", "priorityclasses", "scheduling.k8s.io")) == {"allowed": True}
    assert access("admin", _on("create", "pods", subresource="binding")) == {"allowed": True}
    assert access("admin", _on("create", "deployments", "apps")) == {
        "allowed": False, "reason": "Berth serves no deployments in group 'apps'"}
    assert access("admin", _on("delete", "events")) == {"allowed": False,
                                                        "reason": "Berth does not delete events: get, list"}
    assert access("admin", _on("*", "pods"))["allowed"] and not access("admin", _on("*", "events"))["allowed"]
    assert access("admin", _on("create", "*", "apps")) == {"allowed": False,
                                                         "reason": "Berth serves no * in group 'apps'"}
    assert access("admin", _on("create", "*"))["allowed"]


def test_the_viewer_token_may_read() -> None:
    assert access("viewer", _on("list", "pods")) == {"allowed": True}
    assert access("viewer", _on("watch", "nodes")) == {"allowed": True}
    assert access("viewer", _on("create", "pods")) == {"allowed": False, "reason": FORBIDDEN}
    assert access("viewer", {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}) == {"allowed": True}
    assert access("viewer", {"nonResourceAttributes": {"verb": "get", "path": "/metrics"}}) == {"allowed": True}
    assert not access("viewer", {"nonResourceAttributes": {"verb": "post", "path": "/healthz"}})["allowed"]
    asking = _on("create", "selfsubjectaccessreviews", "authorization.k8s.io")
    assert access("viewer", asking) == {"allowed": True}, "every token may ask what it may do"


def test_a_review_asks_of_a_resource_or_a_path() -> None:
    for spec in ({}, {**_on("get", "pods"), "nonResourceAttributes": {"verb": "get", "path": "/healthz"}}):
        with pytest.raises(InvalidInput, match="exactly one of resourceAttributes and nonResourceAttributes"):
            access("admin", spec)


def test_the_rules_list_what_each_token_may_do() -> None:
    admin = {r["resources"][0]: r["verbs"] for r in rules("admin")["resourceRules"]}
    viewer = {r["resources"][0]: r["verbs"] for r in rules("viewer")["resourceRules"]}
    assert "create" in admin["pods"] and admin["pods/binding"] == ["create"]
    assert viewer["pods"] == ["get", "list", "watch"] and "pods/binding" not in viewer
    assert viewer["events"] == ["get", "list"] and viewer["selfsubjectaccessreviews"] == ["create"]
