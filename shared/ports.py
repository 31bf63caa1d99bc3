"""The seams between Berth's pure core and its I/O: Protocols the adapters implement.

- `Publisher`: puts events on topics (Kafka in services, a list in tests).
- `EventSource`: reads stored history back in order (the Postgres event store; replay uses it).
- `ProjectionStore`: applies events to the read model exactly once per consumer group, keeping the
  group's positions in the same transaction.

Each has an in-memory implementation in `shared.adapters.memory` and a real one under
`shared.adapters`; `tests/contract/` runs one suite against both.

The gateway's reads and its intent log are ports too, so that only its composition root names
Postgres; they have the Postgres implementation alone:

- `EventStoreReader`: the event store as the API reads it (resourceVersions, watches, the log).
- `ReadModelReader`: the read model's rows, as the fold produces them.
- `AcceptedIntentLog`: what the gateway accepted, kept until the event store holds it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from shared.events import OutgoingEvent, ReceivedEvent
from shared.projection import (
    AttemptRow,
    BindingRow,
    NamespaceRow,
    NodeRow,
    PdbRow,
    PodRow,
    PodState,
    PriorityClassRow,
    ReadModel,
)

TopicPartition = tuple[str, int]
"""(logical topic, partition)."""


@runtime_checkable
class Publisher(Protocol):
    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        """Publish `events` in order; when this returns, every one of them is durable on the broker.

        Raises a retriable `BrokerUnavailable` when that cannot be promised; some events may then
        have been published already, which consumers tolerate (at-least-once).
        """
        ...


@runtime_checkable
class EventSource(Protocol):
    def read(
        self, *, after: int = 0, since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[tuple[int, ReceivedEvent]]:
        """Stored events in the order they were stored, as (sequence number, event).

        `after` skips sequence numbers up to and including it; `since`/`until` bound event timestamps.
        """
        ...


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What `ProjectionStore.apply` did with a batch."""

    applied: int = 0
    """Events applied to the read model (first time seen)."""
    duplicates: int = 0
    """Events whose id was already stored (published twice); skipped."""
    stale: int = 0
    """Events below the group's stored position (redelivered); skipped."""


@runtime_checkable
class ProjectionStore(Protocol):
    async def positions(self, group: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offset to read for each partition the group has applied anything from."""
        ...

    async def apply(self, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
        """Store and apply `batch` and advance the group's positions, atomically.

        Events below the stored position or with an already stored event id change nothing, so a
        redelivered batch is harmless.
        """
        ...

    async def load(self) -> ReadModel:
        """The whole read model."""
        ...


@runtime_checkable
class EventStoreReader(EventSource, Protocol):
    """The event store's `seq` is the API's resourceVersion: these reads answer by it."""

    async def last_seq(self) -> int:
        """The highest stored seq (0 when nothing is stored): the version a list is read at."""
        ...

    async def page(self, *, after: int = 0, limit: int = 500, topics: Sequence[str] = (),
                   types: Sequence[str] = (), pod_uid: str | None = None) -> list[tuple[int, ReceivedEvent]]:
        """Up to `limit` events after seq `after`, in storage order, narrowed to topics, event types,
        or the events about one pod."""
        ...

    async def changes(self, *, after: int, limit: int, types: Sequence[str]) -> list[tuple[int, str, Any]]:
        """Every stored event's (seq, type, payload) after `after`, gaps included so a watch sees
        them; the payload only for `types` (else None), as its JSON builtins."""
        ...

    async def live_keys(self, *, at: int, created: Sequence[str], deleted: Sequence[str]) -> set[str]:
        """The keys whose latest `created`/`deleted` event up to seq `at` is a creation."""
        ...

    async def created_at(self, keys: Sequence[str], created: Sequence[str]) -> dict[str, int]:
        """The seq of each key's first `created` event (keys without one are left out)."""
        ...

    async def holding(self, event_ids: Sequence[Any]) -> set[Any]:
        """Those of `event_ids` the store holds: a write is read back only once it is stored."""
        ...

    async def versions(self, keys: Sequence[str] | None, types: Sequence[str]) -> dict[str, int]:
        """Each key's latest seq among events of `types` (every key's when `keys` is None)."""
        ...


@runtime_checkable
class ReadModelReader(Protocol):
    """Rows of the read model; stub pods (not submitted yet) are left out of listings."""

    async def nodes(self) -> list[NodeRow]:
        ...

    async def node(self, name: str) -> NodeRow | None:
        ...

    async def nodes_by_name(self, names: Sequence[str]) -> list[NodeRow]:
        ...

    async def node_versions(self) -> dict[str, datetime]:
        """Each node's name and when its row last changed: a summary is redone only for those."""
        ...

    async def pods(self, namespace: str | None = None, *, include_deleted: bool = False) -> list[PodRow]:
        ...

    async def pod(self, namespace: str, name: str) -> PodRow | None:
        """The live pod of that name, else the most recently submitted deleted one."""
        ...

    async def pods_by_uid(self, uids: Sequence[str]) -> list[PodRow]:
        ...

    async def pod_states(self) -> list[PodState]:
        """Every named pod's scheduling state without its spec: cheap to read for thousands."""
        ...

    async def attempts(self, pod_uid: str) -> list[AttemptRow]:
        ...

    async def bindings(self, pod_uid: str) -> list[BindingRow]:
        ...

    async def namespaces(self) -> list[NamespaceRow]:
        ...

    async def priority_classes(self) -> list[PriorityClassRow]:
        ...

    async def pdbs(self, namespace: str | None = None) -> list[PdbRow]:
        ...


@runtime_checkable
class AcceptedIntentLog(Protocol):
    """Writes the gateway accepted, kept so a broker that loses its log gets them again."""

    async def record(self, events: Sequence[OutgoingEvent]) -> None:
        """Keep `events` (already acknowledged by the broker); one already kept is left as it is."""
        ...

    async def pending_pods(self) -> set[tuple[str, str]]:
        """(namespace, name) of the pods accepted but not stored yet: a retried apply whose reply
        was lost must not submit its pod twice."""
        ...
