"""A node's admission of a pod created with `spec.nodeName`, as the kubelet admits it.

Such a pod skips the scheduler, yet it must fit: the kubelet of its node checks its requests, the
node's pod count and its host ports against the pods already admitted, and refuses it otherwise
(phase Failed, reason `OutOfcpu`, message "Pod was rejected: Node didn't have enough resource:
…"). In Berth the node's binder, the single writer of the node's pods, does that check: the
queue asks it with a BindRequested whose attempt id marks an admission, and the binder answers
PodBound or BindRejected like any bind. Until then the pod counts on its node nowhere but as an
assumption in flight; a node that does not exist yet leaves the pod Pending until it does, as a
pod bound to a node no kubelet runs stays Pending.
"""

from __future__ import annotations

import uuid

from shared.events import BindRequested, Envelope, envelope
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.model import Pod
from shared.plugins.names import NODE_PORTS
from shared.plugins.nodeports import ERR_REASON as PORTS_REASON
from shared.plugins.noderesources.fit import fits_request

PREFIX = "admission/"
_IDS = uuid.UUID("6d1f4c1e-2b7a-4f0e-9a51-7f3c2e8b9d40")
"""Namespace of admission requests' event ids: one pod's n-th request always has the same id, so a
request published again (a restarted queue) is answered once."""


def attempt_id(uid: str, tries: int) -> str:
    return f"{PREFIX}{uid}/{tries}"


def is_admission(attempt: str) -> bool:
    return attempt.startswith(PREFIX)


def tries_of(attempt: str) -> int:
    """The request's number among the pod's admission requests (1 for the first)."""
    return int(attempt.rsplit("/", 1)[1]) if is_admission(attempt) else 0


def admission_request(pod: Pod, tries: int, producer: str) -> Envelope:
    """The `tries`-th request to the binder of `pod.spec.nodeName` to admit the pod."""
    uid = pod.metadata.uid
    attempt = attempt_id(uid, tries)
    bind = BindRequested(pod_uid=uid, pod=pod, node_name=pod.spec.node_name, attempt_id=attempt, seed=0)
    return envelope(bind, producer=producer, event_id=uuid.uuid5(_IDS, attempt))


def refusal(pod: PodInfo, node: NodeInfo, ignored_resources: frozenset[str] = frozenset(),
            ignored_groups: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The kubelet's (reason, message) for a pod its node cannot admit now; None when it fits.
    The first resource short is named, as the kubelet names it (`OutOf<resource>`)."""
    short = fits_request(pod.requests, node, ignored_resources, ignored_groups)
    if short:
        r = short[0]
        return (f"OutOf{r.resource_name}", f"Pod was rejected: Node didn't have enough resource: "
                f"{r.resource_name}, requested: {r.requested}, used: {r.used}, capacity: {r.capacity}")
    if any(node.used_ports.check_conflict(ip, protocol, port) for ip, protocol, port in pod.host_ports):
        return NODE_PORTS, f"Pod was rejected: Predicate {NODE_PORTS} failed: {PORTS_REASON}"
    return None
