"""Whether a pod of that name exists for a create: stored, or accepted and not stored yet."""

from __future__ import annotations

from shared.ports import AcceptedIntentLog, ReadModelReader


async def pod_exists(queries: ReadModelReader, intents: AcceptedIntentLog, namespace: str, name: str) -> bool:
    """A pod accepted but not projected yet exists too: a second create right after the first would
    otherwise submit a second pod of that name. The accepted intents are read first: the projector
    stores a pod's event and its row in one transaction, after which the intent is no longer
    pending, so read the other way round a projection committed between the two reads would hide
    the pod from both."""
    if (namespace, name) in await intents.pending_pods():
        return True
    existing = await queries.pod(namespace, name)
    return existing is not None and not existing.deleted
