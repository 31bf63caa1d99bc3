"""Pods created with `spec.nodeName`: the queue asks each one's node to admit it (a bind request that
node's binder answers, `shared.binding.admission`): once per pod, again a while later when the
binder did not know the node yet, and only once the node exists."""

from __future__ import annotations

import time
from collections.abc import Callable

from shared.binding.admission import admission_request, tries_of
from shared.cluster import ClusterView
from shared.events import BINDS, BindRejected, BindRequested, OutgoingEvent, PodBound
from shared.model import Pod

ADMISSION_RETRY_S = 0.5
"""How long a pod created on a node its binder did not know yet waits before it is asked about again."""


class Admissions:
    def __init__(self, view: ClusterView, producer: str, wake: Callable[[], None],
                 mine: Callable[[Pod], bool] = lambda pod: True) -> None:
        """`wake`: the queue's loop has requests to publish; `mine`: whether this queue asks for
        the pod (where several share the cluster, the one that would schedule it)."""
        self.view, self.producer, self._wake, self._mine = view, producer, wake, mine
        self.asked: set[str] = set()
        """Pods whose admission is asked and has no outcome yet."""
        self._tries: dict[str, int] = {}
        self._awaiting_node: dict[str, set[str]] = {}
        """Node name → pods whose admission found no such node: asked once it exists."""
        self._requests: list[OutgoingEvent] = []
        self._retries: dict[str, float] = {}
        """Pods to ask about again (monotonic time due): their node's binder did not know the node."""

    def pending(self) -> bool:
        """Pods whose admission is asked and not answered, or to be asked again."""
        return bool(self.asked or self._retries)

    def seen(self, p: BindRequested | PodBound | BindRejected) -> None:
        """An admission's request or outcome, folded from the log (the queue's own requests too)."""
        uid = p.pod_uid
        pod = self.view.specs.get(uid)
        if pod is not None and not self._mine(pod):
            # Another queue's to ask about (its request may have been read before its pod).
            self.asked.discard(uid)
            return
        self._tries[uid] = max(self._tries.get(uid, 0), tries_of(p.attempt_id))
        if isinstance(p, BindRequested):
            if p.attempt_id not in self.view.answered:
                self.asked.add(uid)  # asked before a restart, not answered yet
            return
        self.asked.discard(uid)
        if isinstance(p, BindRejected) and not p.status_reason and self.view.unadmitted(uid):
            if p.node_name in self.view.nodes:
                # The node's binder had not read the node yet: ask again in a while.
                self._retries[uid] = time.monotonic() + ADMISSION_RETRY_S
            else:
                self.request(uid)  # waits for the node

    def request(self, uid: str) -> None:
        """Ask the pod's node to admit it, unless it is answered or asked already; a pod whose node
        does not exist (yet) waits for it."""
        pod = self.view.specs.get(uid)
        if pod is None or uid in self.asked or not self.view.unadmitted(uid) or not self._mine(pod):
            return
        if pod.spec.node_name not in self.view.nodes:
            self._awaiting_node.setdefault(pod.spec.node_name, set()).add(uid)
            return
        tries = self._tries.get(uid, 0) + 1
        self._tries[uid] = tries
        self.asked.add(uid)
        self._requests.append(OutgoingEvent(BINDS, admission_request(pod, tries, self.producer)))
        # It counts on its node from now on, as an assumed pod does (upstream's cache holds a pod
        # created on a node at once): the binds decided before the request is read back are
        # decided with it, so they fit beside it whichever its node's binder reads first.
        self.view.assume(uid, pod.spec.node_name)
        self._wake()

    def node_added(self, name: str) -> None:
        for uid in sorted(self._awaiting_node.pop(name, ())):
            self.request(uid)

    def take(self) -> list[OutgoingEvent]:
        """The requests to publish now, those due to be asked again included."""
        if self._retries:
            now = time.monotonic()
            for uid in [u for u, due in self._retries.items() if due <= now]:
                del self._retries[uid]
                self.request(uid)
        out, self._requests = self._requests, []
        return out
