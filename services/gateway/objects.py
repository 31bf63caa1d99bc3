"""Request bodies in, validated objects and events out; read-model rows back to Kubernetes-shaped JSON.

Validation reuses the input loader (`shared.model.loader`), so the gateway accepts and defaults
objects exactly as `berth simulate` does. Pods may name a PriorityClass stored in the cluster: the
stored classes are handed to the loader next to the request's own (which win).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec

from shared.errors import InvalidInput
from shared.events import (
    AnyEvent,
    NamespaceUpserted,
    NodeUpserted,
    PodDisruptionBudgetUpserted,
    PodSubmitted,
    PriorityClassUpserted,
)
from shared.model import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from shared.model.api_fields import FieldValidation
from shared.model.loader import ClusterInput, describe, load_objects, parse_documents
from shared.projection import NodeRow, PodRow

APPLY_KINDS = ("Namespace", "Node", "Pod", "PriorityClass", "PodDisruptionBudget")
_STORED = "<stored>"


def parse_body(text: str, source: str = "request body", *, kind: str | None = None) -> list[dict[str, Any]]:
    """The objects of a JSON or (multi-document) YAML body; only the kinds the API serves. Posted to
    one kind's URL, an object without `kind` is of that kind, as the API server takes it (client
    libraries leave it out)."""
    docs = parse_documents(text, source)
    if kind is not None:
        for doc in docs:
            doc.setdefault("kind", kind)
    for i, doc in enumerate(docs):
        kind = doc.get("kind")
        if not kind:
            raise InvalidInput(f"{source}: {describe(doc)}", "kind", "required")
        if kind not in APPLY_KINDS:
            raise InvalidInput(f"{source}: document {i}", "kind",
                               f"unsupported kind {kind!r}: expected one of {', '.join(APPLY_KINDS)}")
    return docs


@dataclass
class Validated:
    """A request's objects after validation and defaulting, ready to publish."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


Created = Mapping[tuple[str, str, str], str]
"""When each stored object was first created, by (kind, namespace, name)."""


def _refuse_nul(doc: dict[str, Any]) -> None:
    """No key or string of an object holds a NUL character: PostgreSQL's JSON and text refuse one,
    so the event store and the read models could not hold the object that the scheduler had
    accepted (a pod taking room that no read shows and no delete finds)."""
    def path_of(value: Any, path: str) -> str | None:
        if isinstance(value, str):
            return path if "\x00" in value else None
        if isinstance(value, dict):
            for key, item in value.items():
                inner = f"{path}.{key}" if path else str(key)
                if "\x00" in str(key):
                    return inner
                found = path_of(item, inner)
                if found is not None:
                    return found
        elif isinstance(value, list):
            for i, item in enumerate(value):
                found = path_of(item, f"{path}[{i}]")
                if found is not None:
                    return found
        return None

    try:
        if b"\\u0000" not in msgspec.json.encode(doc):
            return  # one pass in C; the walk below only to name the field
    except (TypeError, msgspec.EncodeError):
        pass  # a value JSON cannot hold (validation names it): the walk decides
    field = path_of(doc, "")
    if field is not None:
        meta = doc.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        name = "/".join(str(part) for part in (meta.get("namespace"), meta.get("name")) if part)
        what = " ".join(str(part) for part in (doc.get("kind") or "object", name) if part)
        raise InvalidInput(what.replace("\x00", "\\0"), field.replace("\x00", "\\0"),
                           "must not contain the NUL character (\\u0000)")


def validate(docs: list[dict[str, Any]], stored_classes: list[PriorityClass], *,
             field_validation: FieldValidation = "Strict", created: Created | None = None) -> Validated:
    """Validate `docs` as a whole (any error rejects all of them); pods get fresh uids, and every
    object the creation time the server gives it (kept from the stored object when it is one)."""
    for doc in docs:
        _refuse_nul(doc)
    own = {d.get("metadata", {}).get("name") for d in docs if d.get("kind") == "PriorityClass"}
    extra = [(_STORED, _class_doc(pc)) for pc in stored_classes if pc.metadata.name not in own]
    loaded: ClusterInput = load_objects([("request", d) for d in docs] + extra, field_validation=field_validation,
                                        names="Strict")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pods = []
    for pod in loaded.pods:
        # The API server owns uids and creation times; whatever the client sent is replaced.
        meta = msgspec.structs.replace(pod.metadata, uid=str(uuid.uuid4()), creation_timestamp=now,
                                       resource_version="")
        pods.append(msgspec.structs.replace(pod, metadata=meta))
    known: Created = created or {}

    def stamped(kind: str, obj: _Stamped) -> _Stamped:
        when = known.get((kind, obj.metadata.namespace or "", obj.metadata.name)) or now
        # The server owns versions too: one a client sent back is its precondition, not the object's.
        meta = msgspec.structs.replace(obj.metadata, creation_timestamp=when, resource_version="")
        return msgspec.structs.replace(obj, metadata=meta)

    return Validated(
        nodes=[stamped("Node", n) for n in loaded.nodes],
        pods=pods,
        priority_classes=[stamped("PriorityClass", pc) for pc in loaded.priority_classes if pc.metadata.name in own],
        pdbs=[stamped("PodDisruptionBudget", b) for b in loaded.pdbs],
        namespaces=[stamped("Namespace", ns) for ns in loaded.namespaces],
        warnings=loaded.warnings,
    )


_Stamped = TypeVar("_Stamped", Node, PriorityClass, PodDisruptionBudget, Namespace)


def _class_doc(pc: PriorityClass) -> dict[str, Any]:
    doc: dict[str, Any] = msgspec.to_builtins(pc)
    doc["kind"] = "PriorityClass"
    return doc


def events_of(v: Validated) -> list[AnyEvent]:
    """Namespaces, classes and budgets first: a consumer then knows them before the pods that refer
    to them."""
    out: list[AnyEvent] = [NamespaceUpserted(namespace=ns) for ns in v.namespaces]
    out += [PriorityClassUpserted(priority_class=pc) for pc in v.priority_classes]
    out += [PodDisruptionBudgetUpserted(pdb=pdb) for pdb in v.pdbs]
    out += [NodeUpserted(node=n) for n in v.nodes]
    out += [PodSubmitted(pod=p) for p in v.pods]
    return out


# --- rendering ---------------------------------------------------------------------------------


ALWAYS_WRITTEN: dict[str, dict[str, Any]] = {
    "PriorityClass": {"value": 0},
    # Berth deletes a namespace's contents with it at once: every namespace it serves is Active.
    "Namespace": {"status": {"phase": "Active"}},
    # What the scheduler reads of a budget no status was given for: no disruption allowed.
    "PodDisruptionBudget": {"status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                       "expectedPods": 0}},
}
"""Fields upstream's JSON has even at their zero value (no omitempty), which Berth's structs leave out."""


def render_object(obj: msgspec.Struct, api_version: str, kind: str) -> dict[str, Any]:
    """Any stored object in the API's JSON shape, with its apiVersion and kind."""
    data: dict[str, Any] = msgspec.to_builtins(obj)
    rest = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    defaults = ALWAYS_WRITTEN.get(kind)
    return {"apiVersion": api_version, "kind": kind, **(_under(defaults, rest) if defaults else rest)}


def _under(defaults: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """`data` with `defaults` filled in where it has no value, object by object (every object it
    returns is new: a caller may change what it is handed, never the defaults)."""
    out = {**defaults, **data}
    for key, default in defaults.items():
        if isinstance(default, dict) and (key not in data or isinstance(data[key], dict)):
            out[key] = _under(default, data.get(key, {}))
    return out


def render_node(node: Node) -> dict[str, Any]:
    return render_object(node, "v1", "Node")


def render_node_row(row: NodeRow) -> dict[str, Any]:
    return render_node(row.node)


def render_pod(pod: Pod) -> dict[str, Any]:
    return render_object(pod, "v1", "Pod")


def render_pod_row(row: PodRow) -> dict[str, Any]:
    """The pod as submitted, with Berth's view of its scheduling in `status` and `spec.nodeName`.

    `status.phase` is Berth's phase (Pending, Bound, Failed, Deleted); the PodScheduled condition
    carries the last scheduling message as kube-scheduler words it. A pod created on a node that
    refused it is Failed with the kubelet's `status.reason` and `status.message`.
    """
    data: dict[str, Any] = (render_pod(row.pod) if row.pod is not None
                            else {"apiVersion": "v1", "kind": "Pod", "spec": {}})
    meta = data.setdefault("metadata", {})
    meta.update(name=row.name, namespace=row.namespace, uid=row.uid)
    if row.submitted_at is not None and not meta.get("creationTimestamp"):
        meta["creationTimestamp"] = row.submitted_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if row.node_name:
        data.setdefault("spec", {})["nodeName"] = row.node_name
    condition: dict[str, Any] = {"type": "PodScheduled", "status": "True" if row.phase == "Bound" else "False"}
    if row.phase != "Bound" and row.message:
        condition.update(reason="Unschedulable", message=row.message)
    status: dict[str, Any] = {"phase": row.phase, "conditions": [condition]}
    if row.nominated_node_name:
        status["nominatedNodeName"] = row.nominated_node_name
    if row.message is not None:
        status["message"] = row.message
    if row.phase == "Failed":
        status.update(reason=row.failed_reason, message=row.failed_message)
    if row.preempted_by:
        status["preemptedBy"] = row.preempted_by
    if row.last_attempt:
        status["schedulingAttempts"] = row.last_attempt
    data["status"] = status
    return data


def render_list(kind: str, items: list[dict[str, Any]], resource_version: str = "",
                api_version: str = "v1") -> dict[str, Any]:
    metadata = {"resourceVersion": resource_version}
    return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": metadata, "items": items}


POD_UPDATE_FORBIDDEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def pod_update_problems(stored: Pod, applied: Pod) -> list[str]:
    """Applying `applied` over the live `stored` pod, as the API server's update validation sees it:
    a changed spec is refused (InvalidInput, upstream's words); changed labels or annotations, which
    Berth does not update, come back as warnings."""
    name = f"Pod {applied.metadata.namespace}/{applied.metadata.name}"
    if _comparable(stored.spec) != _comparable(applied.spec):
        raise InvalidInput(name, "spec", POD_UPDATE_FORBIDDEN)
    out = []
    for part in ("labels", "annotations"):
        if getattr(stored.metadata, part) != getattr(applied.metadata, part):
            out.append(f"{name}: metadata.{part} changed; Berth keeps a pod's {part} as first applied")
    return out


def _comparable(spec: Any) -> Any:
    """A spec without what the API server allows an update to change."""
    return msgspec.structs.replace(
        spec, containers=[msgspec.structs.replace(c, image="") for c in spec.containers],
        init_containers=[msgspec.structs.replace(c, image="") for c in spec.init_containers])
