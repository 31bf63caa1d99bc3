"""The Table form of a list (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns
`kubectl get` prints, computed by the server as the API server's printers compute them.

Each row carries the object's metadata (PartialObjectMetadata), which kubectl reads for the
NAMESPACE column of `-A` and for `--show-labels`; with `includeObject=Object` the whole object
(kubectl asks so for `--sort-by`, which sorts the rows by a field of it), with `None` nothing.
Columns of priority 1 are `-o wide`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shared.errors import InvalidInput
from shared.model.age import human_duration

NONE = "<none>"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    description: str
    type: str = "string"
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


NAME = Column("Name", "Name must be unique within a namespace.", format="name")
AGE = Column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created.")

Cells = Callable[[dict[str, Any], datetime], list[Any]]


def wants_table(accept: str) -> bool:
    """Whether a request's Accept header asks for the Table form (kubectl get's first choice)."""
    return any("as=Table" in part for part in accept.split(","))


INCLUDE_OBJECT = ("Metadata", "Object", "None")
"""The API server's `includeObject` values; the first is the default."""


def include_object(query: Mapping[str, str]) -> str:
    """A request's `includeObject` (absent: the default), or InvalidInput naming the values."""
    value = query.get("includeObject", "")
    if not value:
        return INCLUDE_OBJECT[0]
    if value not in INCLUDE_OBJECT:
        raise InvalidInput("request", "includeObject", f"unsupported value {value!r}: {', '.join(INCLUDE_OBJECT)}")
    return value


def table(kind: str, items: list[dict[str, Any]], now: datetime | None = None, *,
          resource_version: str = "", include: str = INCLUDE_OBJECT[0]) -> dict[str, Any]:
    columns, cells = PRINTERS[kind]
    now = now or datetime.now(UTC)
    rows = []
    for item in items:
        row: dict[str, Any] = {"cells": cells(item, now)}
        if include != "None":
            row["object"] = item if include == "Object" else _partial(item)
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": [c.definition() for c in columns], "rows": rows}


def _partial(item: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": item.get("metadata") or {}}




def age(item: dict[str, Any], now: datetime) -> str:
    return _since((item.get("metadata") or {}).get("creationTimestamp"), now)


def _since(stamp: Any, now: datetime) -> str:
    if not stamp:
        return "<unknown>"
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return human_duration((now - created).total_seconds())


def _name(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("name", ""))


# --- pods ------------------------------------------------------------------------------------------

POD_COLUMNS = (
    NAME,
    Column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "The aggregate status of the containers in this pod."),
    Column("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                       "container in this pod has restarted."),
    AGE,
    Column("IP", "podIP address allocated to the pod. Routable at least within the cluster.", priority=1),
    Column("Node", "NodeName indicates in which node this pod is scheduled.", priority=1),
    Column("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node.",
           priority=1),
    Column("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", priority=1),
)


def pod_cells(pod: dict[str, Any], now: datetime) -> list[Any]:
    """No kubelet runs the containers: none is ready and none restarted; the status is the pod's
    reason when a node refused it, else its phase (Pending, Bound)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    containers = len(spec.get("containers") or [])
    gates = spec.get("readinessGates") or []
    return [_name(pod), f"0/{containers}", status.get("reason") or status.get("phase") or "Pending", "0",
            age(pod, now), NONE, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE,
            f"0/{len(gates)}" if gates else NONE]


# --- nodes -----------------------------------------------------------------------------------------

NODE_COLUMNS = (
    NAME,
    Column("Status", "The status of the node"),
    Column("Roles", "The roles of the node"),
    AGE,
    Column("Version", "Kubelet Version reported by the node."),
    Column("Internal-IP", "List of internal IPs for the node.", priority=1),
    Column("External-IP", "List of external IPs for the node.", priority=1),
    Column("OS-Image", "OS image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
           priority=1),
    Column("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
           priority=1),
    Column("Container-Runtime", "Container runtime version reported by the node.", priority=1),
)
ROLE_PREFIX = "node-role.kubernetes.io/"


def node_cells(node: dict[str, Any], now: datetime) -> list[Any]:
    """Ready unless a Ready condition says otherwise; SchedulingDisabled when cordoned; roles from
    the node-role.kubernetes.io/ labels, as kubectl shows them."""
    spec, status = node.get("spec") or {}, node.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = ["Ready" if ready is None or ready.get("status") == "True" else "NotReady"]
    if spec.get("unschedulable"):
        state.append("SchedulingDisabled")
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(k[len(ROLE_PREFIX):] for k in labels if k.startswith(ROLE_PREFIX) and len(k) > len(ROLE_PREFIX))
    if labels.get("kubernetes.io/role"):
        roles = sorted({*roles, labels["kubernetes.io/role"]})
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind), NONE)

    return [_name(node), ",".join(state), ",".join(roles) or NONE, age(node, now), info.get("kubeletVersion", ""),
            address("InternalIP"), address("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


# --- namespaces, priority classes, budgets ---------------------------------------------------------

NAMESPACE_COLUMNS = (NAME, Column("Status", "The status of the namespace"), AGE)


def namespace_cells(ns: dict[str, Any], now: datetime) -> list[Any]:
    return [_name(ns), (ns.get("status") or {}).get("phase", "Active"), age(ns, now)]


PRIORITY_CLASS_COLUMNS = (
    NAME,
    Column("Value", "The value of this priority class.", type="integer"),
    Column("Global-Default", "globalDefault specifies whether this PriorityClass should be considered as the "
                             "default priority.", type="boolean"),
    AGE,
    Column("PreemptionPolicy", "PreemptionPolicy is the Policy for preempting pods with lower priority."),
)


def priority_class_cells(pc: dict[str, Any], now: datetime) -> list[Any]:
    return [_name(pc), pc.get("value", 0), bool(pc.get("globalDefault", False)), age(pc, now),
            pc.get("preemptionPolicy") or "PreemptLowerPriority"]


PDB_COLUMNS = (
    NAME,
    Column("Min Available", "The minimum number of pods that must be available simultaneously."),
    Column("Max Unavailable", "The maximum number of pods that may be unavailable simultaneously."),
    Column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.", type="integer"),
    AGE,
)


def pdb_cells(pdb: dict[str, Any], now: datetime) -> list[Any]:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    given = ("minAvailable" in spec, "maxUnavailable" in spec)
    return [_name(pdb), str(spec["minAvailable"]) if given[0] else "N/A",
            str(spec["maxUnavailable"]) if given[1] else "N/A", status.get("disruptionsAllowed", 0), age(pdb, now)]


# --- events ----------------------------------------------------------------------------------------

EVENT_COLUMNS = (
    Column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    Column("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
    Column("Reason", "This should be a short, machine understandable string that gives the reason for the "
                     "transition into the object's current status."),
    Column("Object", "The object that this event is about."),
    Column("Subobject", "The field path of the object that this event is about.", priority=1),
    Column("Source", "The component reporting this event.", priority=1),
    Column("Message", "A human-readable description of the status of this operation."),
    Column("First Seen", "The time at which the event was first recorded.", priority=1),
    Column("Count", "The number of times this event has occurred.", type="integer", priority=1),
    Column("Name", "Name must be unique within a namespace.", priority=1),
)


def event_cells(event: dict[str, Any], now: datetime) -> list[Any]:
    involved = event.get("involvedObject") or {}
    source = (event.get("source") or {}).get("component", "")
    return [_since(event.get("lastTimestamp"), now), event.get("type", ""), event.get("reason", ""),
            f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}", "", source,
            event.get("message", ""), _since(event.get("firstTimestamp"), now), event.get("count", 1), _name(event)]


# --- services (Berth holds none: the list kubectl cluster-info reads is empty) -------------------

SERVICE_COLUMNS = (
    NAME, Column("Type", "How the service is exposed."),
    Column("Cluster-IP", "The service's address inside the cluster."),
    Column("External-IP", "The load balancer's address, where one serves it."),
    Column("Port(s)", "The ports the service exposes."), AGE,
    Column("Selector", "The pods the service routes to.", priority=1),
)


def service_cells(service: dict[str, Any], now: datetime) -> list[Any]:
    spec = service.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or ())
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    return [_name(service), spec.get("type", "ClusterIP"), spec.get("clusterIP") or NONE, NONE, ports or NONE,
            age(service, now), selector or NONE]


PRINTERS: dict[str, tuple[tuple[Column, ...], Cells]] = {
    "Pod": (POD_COLUMNS, pod_cells),
    "Node": (NODE_COLUMNS, node_cells),
    "Namespace": (NAMESPACE_COLUMNS, namespace_cells),
    "PriorityClass": (PRIORITY_CLASS_COLUMNS, priority_class_cells),
    "PodDisruptionBudget": (PDB_COLUMNS, pdb_cells),
    "Event": (EVENT_COLUMNS, event_cells),
    "Service": (SERVICE_COLUMNS, service_cells),
}
