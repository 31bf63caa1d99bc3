"""Test builders in the spirit of upstream's st.MakePod()/st.MakeNode():

    pod = MakePod().name("p").req(cpu="1", memory="1Gi").priority(10).obj()
    info = MakeNode().name("n1").capacity(cpu="4", memory="8Gi", pods=110).label("zone", "a").info()

`obj()` returns the model object (defaults applied as the loader applies them), `info()` the
PodInfo / NodeInfo the plugins take.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.model import Node, Pod


def _set(d: dict[str, Any], *path: str) -> dict[str, Any]:
    for p in path:
        d = d.setdefault(p, {})
    return d


class MakePod:
    def __init__(self) -> None:
        self._d: dict[str, Any] = {
            "metadata": {"name": "", "namespace": "default"},
            "spec": {"schedulerName": "default-scheduler", "containers": []},
        }

    # metadata
    def name(self, name: str) -> MakePod:
        self._d["metadata"]["name"] = name
        return self

    def namespace(self, ns: str) -> MakePod:
        self._d["metadata"]["namespace"] = ns
        return self

    def uid(self, uid: str) -> MakePod:
        self._d["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> MakePod:
        _set(self._d, "metadata", "labels")[key] = value
        return self

    def labels(self, labels: dict[str, str]) -> MakePod:
        _set(self._d, "metadata", "labels").update(labels)
        return self

    def creation_timestamp(self, ts: str) -> MakePod:
        self._d["metadata"]["creationTimestamp"] = ts
        return self

    def owner(self, kind: str, name: str, uid: str = "") -> MakePod:
        self._d["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid or name, "controller": True})
        return self

    # spec
    def node(self, node_name: str) -> MakePod:
        self._d["spec"]["nodeName"] = node_name
        return self

    def scheduler_name(self, name: str) -> MakePod:
        self._d["spec"]["schedulerName"] = name
        return self

    def priority(self, value: int) -> MakePod:
        self._d["spec"]["priority"] = value
        return self

    def preemption_policy(self, policy: str) -> MakePod:
        self._d["spec"]["preemptionPolicy"] = policy
        return self

    def container(self, image: str = "registry.k8s.io/pause:3.9", requests: dict[str, Any] | None = None,
                  limits: dict[str, Any] | None = None, ports: list[dict[str, Any]] | None = None,
                  name: str = "") -> MakePod:
        c: dict[str, Any] = {"name": name or f"c{len(self._d['spec']['containers'])}", "image": image}
        if requests or limits:
            c["resources"] = {}
            if requests:
                c["resources"]["requests"] = dict(requests)
            if limits:
                c["resources"]["limits"] = dict(limits)
        if ports:
            c["ports"] = ports
        self._d["spec"]["containers"].append(c)
        return self

    def req(self, **requests: Any) -> MakePod:
        """A container with these requests; keyword names use '_' for '-' (ephemeral_storage)."""
        return self.container(requests={k.replace("_", "-"): v for k, v in requests.items()})

    def res(self, requests: dict[str, Any]) -> MakePod:
        """A container with requests given by their resource names (e.g. "example.com/gpu")."""
        return self.container(requests=requests)

    def init_req(self, requests: dict[str, Any] | None, restart_policy: str | None = None,
                 image: str = "registry.k8s.io/pause:3.9") -> MakePod:
        """An init container; with requests None it has no resources at all."""
        ics = self._d["spec"].setdefault("initContainers", [])
        c: dict[str, Any] = {"name": f"init{len(ics)}", "image": image}
        if requests is not None:
            c["resources"] = {"requests": dict(requests)}
        if restart_policy:
            c["restartPolicy"] = restart_policy
        ics.append(c)
        return self

    def overhead(self, overhead: dict[str, Any]) -> MakePod:
        self._d["spec"]["overhead"] = dict(overhead)
        return self

    def pod_resources(self, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> MakePod:
        """Pod-level resources (spec.resources)."""
        self._d["spec"]["resources"] = {"requests": dict(requests or {}), "limits": dict(limits or {})}
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> MakePod:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def node_selector(self, selector: dict[str, str]) -> MakePod:
        self._d["spec"]["nodeSelector"] = dict(selector)
        return self

    def node_affinity_required(self, terms: list[dict[str, Any]]) -> MakePod:
        """terms: NodeSelectorTerm dicts,
        e.g. [{"matchExpressions": [{"key": .., "operator": "In", "values": [..]}]}]."""
        _set(self._d, "spec", "affinity", "nodeAffinity")["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": terms}
        return self

    def node_affinity_in(self, key: str, values: list[str]) -> MakePod:
        return self.node_affinity_required([{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}])

    def node_affinity_preferred(self, weight: int, term: dict[str, Any]) -> MakePod:
        na = _set(self._d, "spec", "affinity", "nodeAffinity")
        na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": term})
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> MakePod:
        """operator "" leaves the operator unset."""
        t: dict[str, Any] = {"operator": operator} if operator else {}
        if key:
            t["key"] = key
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._d["spec"].setdefault("tolerations", []).append(t)
        return self

    def _affinity_term(self, kind: str, required: bool, term: dict[str, Any], weight: int) -> MakePod:
        aff = _set(self._d, "spec", "affinity", kind)
        if required:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    @staticmethod
    def term(topology_key: str, match_labels: dict[str, str] | None = None,
             match_expressions: list[dict[str, Any]] | None = None, namespaces: list[str] | None = None,
             namespace_selector: dict[str, Any] | None = None) -> dict[str, Any]:
        """A PodAffinityTerm dict."""
        sel: dict[str, Any] = {}
        if match_labels is not None:
            sel["matchLabels"] = match_labels
        if match_expressions is not None:
            sel["matchExpressions"] = match_expressions
        t: dict[str, Any] = {"topologyKey": topology_key, "labelSelector": sel}
        if namespaces is not None:
            t["namespaces"] = namespaces
        if namespace_selector is not None:
            t["namespaceSelector"] = namespace_selector
        return t

    def pod_affinity(self, term: dict[str, Any], weight: int = 0) -> MakePod:
        """Required when weight is 0, preferred with that weight otherwise."""
        return self._affinity_term("podAffinity", weight == 0, term, weight)

    def pod_anti_affinity(self, term: dict[str, Any], weight: int = 0) -> MakePod:
        return self._affinity_term("podAntiAffinity", weight == 0, term, weight)

    def spread(self, max_skew: int, topology_key: str, when: str = "DoNotSchedule",
               selector: dict[str, Any] | None = None, min_domains: int | None = None,
               node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
               match_label_keys: list[str] | None = None) -> MakePod:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = selector
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys:
            c["matchLabelKeys"] = match_label_keys
        self._d["spec"].setdefault("topologySpreadConstraints", []).append(c)
        return self

    def scheduling_gates(self, *names: str) -> MakePod:
        self._d["spec"]["schedulingGates"] = [{"name": n} for n in names]
        return self

    def host_network(self) -> MakePod:
        self._d["spec"]["hostNetwork"] = True
        return self

    # status
    def nominated_node(self, node_name: str) -> MakePod:
        _set(self._d, "status")["nominatedNodeName"] = node_name
        return self

    def start_time(self, ts: str) -> MakePod:
        _set(self._d, "status")["startTime"] = ts
        return self

    def phase(self, phase: str) -> MakePod:
        _set(self._d, "status")["phase"] = phase
        return self

    def raw(self) -> dict[str, Any]:
        return self._d

    def obj(self, default_container: bool = True, default_uid: bool = True) -> Pod:
        """default_container: a pod given no container gets one; default_uid: a pod given no uid
        gets "namespace/name"."""
        if default_container and not self._d["spec"]["containers"]:
            self.container()
        pod = msgspec.convert(self._d, Pod)
        if default_uid and not pod.metadata.uid:
            meta = msgspec.structs.replace(pod.metadata, uid=f"{pod.metadata.namespace}/{pod.metadata.name}")
            pod = msgspec.structs.replace(pod, metadata=meta)
        return pod

    def info(self, default_container: bool = True, default_uid: bool = True) -> PodInfo:
        return PodInfo(self.obj(default_container, default_uid))


class MakeNode:
    def __init__(self) -> None:
        self._d: dict[str, Any] = {"metadata": {"name": ""}, "spec": {}, "status": {}}

    def name(self, name: str) -> MakeNode:
        self._d["metadata"]["name"] = name
        return self

    def label(self, key: str, value: str) -> MakeNode:
        _set(self._d, "metadata", "labels")[key] = value
        return self

    def labels(self, labels: dict[str, str]) -> MakeNode:
        _set(self._d, "metadata", "labels").update(labels)
        return self

    def capacity(self, resources: dict[str, Any] | None = None, **kw: Any) -> MakeNode:
        """Sets capacity and allocatable alike; keyword names use '_' for '-'."""
        res = dict(resources or {})
        res.update({k.replace("_", "-"): v for k, v in kw.items()})
        self._d["status"]["capacity"] = dict(res)
        self._d["status"]["allocatable"] = dict(res)
        return self

    def allocatable(self, resources: dict[str, Any]) -> MakeNode:
        self._d["status"]["allocatable"] = dict(resources)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> MakeNode:
        self._d["spec"].setdefault("taints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self, flag: bool = True) -> MakeNode:
        self._d["spec"]["unschedulable"] = flag
        return self

    def image(self, names: list[str], size_bytes: int) -> MakeNode:
        self._d["status"].setdefault("images", []).append({"names": names, "sizeBytes": size_bytes})
        return self

    def obj(self) -> Node:
        return msgspec.convert(self._d, Node)

    def info(self, *pods: Pod | PodInfo) -> NodeInfo:
        info = NodeInfo(self.obj())
        for p in pods:
            info.add_pod(p if isinstance(p, PodInfo) else PodInfo(p))
        return info
