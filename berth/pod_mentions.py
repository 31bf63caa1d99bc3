"""Which events of the log concern one pod, for `berth events --pod NAME`.

A pod is named by namespace and name; its events by its uid. A PodSubmitted of that namespace and
name gives the uid (a pod deleted and created again has a second one); from then on every event
whose key is one of the uids, or whose payload names one anywhere (a bind, a decision, a filter
batch listing the pod, an eviction naming it as victim or preemptor), concerns it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shared.events import Envelope, PodSubmitted


class PodMentions:
    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        self.uids: set[str] = set()

    def learn(self, env: Envelope) -> None:
        """Take the pod's uid from its submission."""
        p = env.payload
        if isinstance(p, PodSubmitted) and p.pod.metadata.name == self.name and \
                (p.pod.metadata.namespace or "default") == self.namespace:
            self.uids.add(p.pod.metadata.uid)

    def concerns(self, env: Envelope) -> bool:
        self.learn(env)
        if not self.uids:
            return False
        return env.key in self.uids or _names(msgspec.to_builtins(env.payload), self.uids)


def _names(value: Any, uids: set[str]) -> bool:
    if isinstance(value, str):
        return value in uids
    if isinstance(value, dict):
        return any(_names(v, uids) for v in value.values())
    if isinstance(value, list):
        return any(_names(v, uids) for v in value)
    return False


def parse_pod(text: str, namespace: str | None) -> tuple[str, str]:
    """`NAME` (in `namespace`, else default) or `NAMESPACE/NAME`."""
    if "/" in text:
        ns, _, name = text.partition("/")
        return ns, name
    return namespace or "default", text
