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

from .client import EXIT_INVALID_INPUT, CliError


class PodMentions:
    """The events of one pod, named by namespace and name, as a log is read in order."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        self.uids: set[str] = set()

    def learn(self, env: Envelope) -> None:
        """Take the pod's uid from its submission."""
        p = env.payload
        if isinstance(p, PodSubmitted) and p.pod.metadata.uid and p.pod.metadata.name == self.name and \
                (p.pod.metadata.namespace or "default") == self.namespace:
            self.uids.add(p.pod.metadata.uid)

    def concerns(self, env: Envelope) -> bool:
        """Whether `env` is keyed by one of the pod's uids or names one in its payload."""
        self.learn(env)
        if not self.uids:
            return False
        return env.key in self.uids or _names(msgspec.to_builtins(env.payload), self.uids)


def _names(value: Any, uids: set[str]) -> bool:
    if isinstance(value, str):
        return value in uids
    if isinstance(value, dict):  # keys too: a preemption's nominations are keyed by pod uid
        return any(k in uids or _names(v, uids) for k, v in value.items())
    if isinstance(value, list):
        return any(_names(v, uids) for v in value)
    return False


def parse_pod(text: str, namespace: str | None) -> tuple[str, str]:
    """`NAME` (in `namespace`, else default) or `NAMESPACE/NAME`; CliError for an empty part or a
    namespace said twice, differently."""
    ns, _, name = text.rpartition("/")
    if not name or (not ns and "/" in text) or "/" in ns:
        raise CliError(f"--pod {text!r}: expected NAME or NAMESPACE/NAME", EXIT_INVALID_INPUT)
    if ns and namespace and ns != namespace:
        raise CliError(f"--pod {text!r} names namespace {ns!r}, -n {namespace!r}", EXIT_INVALID_INPUT)
    return ns or namespace or "default", name
