"""API discovery as the API server serves it, for what Berth holds: kubectl and client libraries
ask `/api`, `/apis` and each group version which resources exist before any other request.

    GET /version                      the server's version (kube-scheduler's, whose semantics Berth has)
    GET /api                          APIVersions: the core group's versions
    GET /api/v1                       APIResourceList of the core group
    GET /apis                         APIGroupList: the named groups
    GET /apis/{group}/{version}       APIResourceList of that group version

`/api` and `/apis` answer in the aggregated form (apidiscovery.k8s.io/v2: every version and
resource at once) to a client that asks for it first, as kubectl does, and in the unaggregated one
otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from shared.errors import NotFound

KUBERNETES_VERSION = ("1", "34")
"""The kube-scheduler release whose semantics Berth has (docs/conformance.md)."""


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    """"" for the core group."""
    version: str
    name: str
    singular: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


READ = ("get", "list")
WRITE = ("create", "delete", "get", "list", "patch", "update", "watch")
RESOURCES = (
    Resource("", "v1", "pods", "pod", "Pod", True, WRITE, ("po",), ("all",)),
    Resource("", "v1", "nodes", "node", "Node", False, WRITE, ("no",)),
    Resource("", "v1", "events", "event", "Event", True, READ, ("ev",)),
    Resource("", "v1", "namespaces", "namespace", "Namespace", False, WRITE, ("ns",)),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", False, WRITE, ("pc",)),
    Resource("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True, WRITE,
             ("pdb",)),
)
"""The kinds Berth stores, each with its OpenAPI schema."""
EMPTY = (Resource("", "v1", "services", "service", "Service", True, READ, ("svc",), ("all",)),)
"""Kinds Berth holds none of, listed empty where kubectl reads them: `kubectl cluster-info` lists
kube-system's services, and prints the control plane's address only once that list answers."""
REVIEWS = (
    Resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview",
             "SelfSubjectAccessReview", False, ("create",)),
    Resource("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview",
             "SelfSubjectRulesReview", False, ("create",)),
)
"""What `kubectl auth can-i` asks (`access_review`): answered, not stored."""
DISCOVERED = RESOURCES + EMPTY + REVIEWS


def group_version_of(kind: str) -> str:
    """The apiVersion of `kind`'s objects and lists ("v1" for the core group)."""
    return next((r.group_version for r in RESOURCES if r.kind == kind), "v1")


def version_info() -> dict[str, str]:
    major, minor = KUBERNETES_VERSION
    return {"major": major, "minor": minor, "gitVersion": f"v{major}.{minor}.0+berth", "gitCommit": "",
            "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z", "goVersion": "", "compiler": "",
            "platform": "linux/amd64"}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def group_versions() -> dict[str, list[str]]:
    """Each named group's versions, in the order resources are listed."""
    groups: dict[str, list[str]] = {}
    for r in DISCOVERED:
        if r.group and r.version not in groups.setdefault(r.group, []):
            groups[r.group].append(r.version)
    return groups


def api_group_list() -> dict[str, Any]:
    groups = []
    for name, versions in group_versions().items():
        listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        groups.append({"name": name, "versions": listed, "preferredVersion": listed[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


@dataclass(frozen=True, slots=True)
class Subresource:
    resource: str
    name: str
    namespaced: bool
    kind: str
    verbs: tuple[str, ...]

    def listed(self) -> dict[str, Any]:
        return {"name": f"{self.resource}/{self.name}", "singularName": "", "namespaced": self.namespaced,
                "kind": self.kind, "verbs": list(self.verbs)}


SUBRESOURCES = (
    Subresource("pods", "binding", True, "Binding", ("create",)),
    Subresource("pods", "status", True, "Pod", ("get",)),
    Subresource("nodes", "status", False, "Node", ("get", "patch")),
)


def subresources_of(r: Resource) -> tuple[Subresource, ...]:
    """The subresources Berth serves of `r` (only the core group's resources have any)."""
    return tuple(s for s in SUBRESOURCES if s.resource == r.name and not r.group)


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group version, or None when Berth serves no such version."""
    resources = [r for r in DISCOVERED if (r.group, r.version) == (group, version)]
    if not resources:
        return None
    listed = [_resource(r) for r in resources] + ([s.listed() for s in SUBRESOURCES] if not group else [])
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": resources[0].group_version,
            "resources": listed}


def _resource(r: Resource) -> dict[str, Any]:
    out: dict[str, Any] = {"name": r.name, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                           "verbs": list(r.verbs)}
    if r.short_names:
        out["shortNames"] = list(r.short_names)
    if r.categories:
        out["categories"] = list(r.categories)
    return out


AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether the client takes aggregated discovery (kubectl asks for it first)."""
    return any("as=APIGroupDiscoveryList" in part and "v=v2" in part and "v2beta1" not in part
               for part in accept.split(","))


def aggregated(core: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of the core group (`/api`) or of the named groups (`/apis`): every
    group, version and resource in one answer instead of one request per group version."""
    items = []
    names = [""] if core else list(group_versions())
    for group in names:
        versions = sorted({r.version for r in DISCOVERED if r.group == group})
        items.append({"metadata": {"name": group}, "versions": [
            {"version": v, "freshness": "Current",
             "resources": [_aggregated_resource(r) for r in DISCOVERED if (r.group, r.version) == (group, v)]}
            for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    out: dict[str, Any] = {"resource": r.name, "singularResource": r.singular,
                           "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                           "scope": "Namespaced" if r.namespaced else "Cluster", "verbs": list(r.verbs)}
    if r.short_names:
        out["shortNames"] = list(r.short_names)
    if r.categories:
        out["categories"] = list(r.categories)
    subresources = [{"subresource": s.name, "verbs": list(s.verbs),
                     "responseKind": {"group": r.group, "version": r.version, "kind": s.kind}}
                    for s in subresources_of(r)]
    if subresources:
        out["subresources"] = subresources
    return out


def _discovery(request: web.Request, core: bool, legacy: dict[str, Any]) -> web.Response:
    if wants_aggregated(request.headers.get("Accept", "")):
        return web.Response(body=json.dumps(aggregated(core)), headers={"Content-Type": AGGREGATED})
    return web.json_response(legacy)


def install(app: web.Application) -> None:

    async def version(request: web.Request) -> web.Response:
        return web.json_response(version_info())

    async def core(request: web.Request) -> web.Response:
        return _discovery(request, True, api_versions(request.host))

    async def core_v1(request: web.Request) -> web.Response:
        return web.json_response(resource_list("", "v1"))

    async def groups(request: web.Request) -> web.Response:
        return _discovery(request, False, api_group_list())

    async def group_version(request: web.Request) -> web.Response:
        group, ver = request.match_info["group"], request.match_info["version"]
        listed = resource_list(group, ver)
        if listed is None:
            raise NotFound("groupversions", f"{group}/{ver}")
        return web.json_response(listed)

    app.router.add_get("/version", version)
    app.router.add_get("/api", core)
    app.router.add_get("/api/v1", core_v1)
    app.router.add_get("/apis", groups)
    app.router.add_get("/apis/{group}/{version}", group_version)
