"""The topic plan: logical names, partition counts, keys, and which events each topic carries.

Logical names ("pods") are what code and the event store use; the physical Kafka topic is the logical
name behind a configurable prefix (BERTH_TOPIC_PREFIX, "berth." by default), so several Berth clusters
or test runs can share one broker.

`nodes`, `binds` and `placements` all have NODE_PARTITIONS partitions and are keyed by node name, so
Kafka's default murmur2 partitioner puts everything about a node on the same partition number in each
of them: a binder assigned partition k of `binds` and `nodes` owns the nodes of that partition.
`filter-requests` has NODE_SHARDS partitions, one copy of each request per partition: the replica
assigned partition k filters the nodes whose murmur2 hash modulo NODE_SHARDS is k.

Partition counts are kept small because the embedded broker's cost grows with them: Tansu (0.6) checks
every partition a fetch names on each pass, about 37 µs each, so it is the number of partitions each
consumer reads, times how often it fetches, that the broker pays for (see docs/platform.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .catalogue import (
    BindRejected,
    BindRequested,
    DeadLettered,
    Event,
    ExtendersAnswered,
    FilterBatchRequested,
    LateBatchDecided,
    NamespaceDeleted,
    NamespaceUpserted,
    NodeDeleted,
    NodeUpserted,
    PodBound,
    PodDeleted,
    PodDisruptionBudgetDeleted,
    PodDisruptionBudgetUpserted,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    PreemptionDecided,
    PreemptionRequested,
    PriorityClassDeleted,
    PriorityClassUpserted,
    SchedulerStarted,
    SchedulingAttempted,
    ShardFiltered,
)

NODE_SHARDS = 8
"""Partitions of `filter-requests`: the shards of the nodes that filter replicas divide among them."""
NODE_PARTITIONS = 4
"""Partitions of `nodes`, `binds` and `placements`: the most binder members that share the work."""

NODES = "nodes"
PODS = "pods"
FILTER_REQUESTS = "filter-requests"
SHARD_RESULTS = "shard-results"
BINDS = "binds"
PLACEMENTS = "placements"
PREEMPTION_REQUESTS = "preemption-requests"
PREEMPTION = "preemption"
DECISIONS = "decisions"
DEAD_LETTERS = "dead-letters"

GATED_TOPICS = (NODES, PODS, PLACEMENTS)
"""The topics a request's watermark names: a filter worker and the preemption service fold them up to
it before deciding (replay too), in this order."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """One logical topic. `broadcast`: producers send one copy to every partition (no key routing)."""

    name: str
    partitions: int
    keyed_by: str
    events: tuple[type[Event], ...]
    broadcast: bool = False
    kept: bool = True
    """Part of the cluster's history: a broker that lost its log gets these topics back from the
    event store, every event at its offset. The others carry requests and answers between running
    services (a restarted queue asks again, and replay finds them by batch id, never by offset)
    and start empty; the event store still has them."""
    earlier: tuple[type[Event], ...] = ()
    """Events earlier releases published here: read from an older log, never routed here."""

    @property
    def event_names(self) -> frozenset[str]:
        return frozenset(cls.__name__ for cls in self.events)

    @property
    def readable_names(self) -> frozenset[str]:
        return self.event_names | {cls.__name__ for cls in self.earlier}


TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec(NODES, NODE_PARTITIONS, "node name", (NodeUpserted, NodeDeleted)),
    TopicSpec(PODS, 4, "pod uid (policies: kind/name)", (PodSubmitted, PodDeleted, PodNominated, PodEvicted,
                                                    PriorityClassUpserted, PriorityClassDeleted,
                                                    PodDisruptionBudgetUpserted, PodDisruptionBudgetDeleted,
                                                    NamespaceUpserted, NamespaceDeleted)),
    TopicSpec(FILTER_REQUESTS, NODE_SHARDS, "partition = node shard", (FilterBatchRequested,), broadcast=True,
              kept=False),
    TopicSpec(SHARD_RESULTS, 4, "batch id", (ShardFiltered,), kept=False),
    TopicSpec(BINDS, NODE_PARTITIONS, "node name", (BindRequested,)),
    TopicSpec(PLACEMENTS, NODE_PARTITIONS, "node name", (PodBound, BindRejected)),
    # One partition: the preemption service folds its view forwards only, so it reads requests in
    # the order the queue made them (their watermarks grow); Kafka keeps an order only within one.
    TopicSpec(PREEMPTION_REQUESTS, 1, "preemptor pod uid (one partition)", (PreemptionRequested,)),
    TopicSpec(PREEMPTION, 4, "preemptor pod uid", (PreemptionDecided,), earlier=(PreemptionRequested,)),
    TopicSpec(DECISIONS, 4, "pod uid (SchedulerStarted: \"scheduler\")", (SchedulingAttempted, ExtendersAnswered,
                                                                       LateBatchDecided, SchedulerStarted)),
    TopicSpec(DEAD_LETTERS, 1, "origin topic", (DeadLettered,)),
)

MOST_QUEUES = next(t.partitions for t in TOPICS if t.name == SHARD_RESULTS)
"""Queues that can share a cluster: each reads its workers' answers from a partition of its own."""


class TopicRegistry:
    """The topic plan under one prefix: logical ↔ physical names and event → topic routing."""

    def __init__(self, prefix: str = "berth.", topics: tuple[TopicSpec, ...] = TOPICS) -> None:
        self.prefix = prefix
        self._specs = {t.name: t for t in topics}
        self._by_event: dict[str, str] = {}
        for spec in topics:
            for name in spec.event_names:
                if name in self._by_event:
                    raise ValueError(f"event {name} is declared on two topics")
                self._by_event[name] = spec.name

    def __iter__(self) -> Iterator[TopicSpec]:
        return iter(self._specs.values())

    def __contains__(self, logical: object) -> bool:
        return logical in self._specs

    def spec(self, logical: str) -> TopicSpec:
        try:
            return self._specs[logical]
        except KeyError:
            raise KeyError(f"unknown topic {logical!r}; known: {', '.join(self._specs)}") from None

    def physical(self, logical: str) -> str:
        """The Kafka topic name for a logical topic."""
        self.spec(logical)
        return f"{self.prefix}{logical}"

    def logical(self, physical: str) -> str:
        """The logical name of a Kafka topic of this registry (KeyError for a foreign topic)."""
        if physical.startswith(self.prefix):
            name = physical[len(self.prefix):]
            if name in self._specs:
                return name
        raise KeyError(f"topic {physical!r} is not one of Berth's under prefix {self.prefix!r}")

    def topic_of(self, event: Event | type[Event] | str) -> str:
        """The logical topic an event type is published on."""
        name = (event if isinstance(event, str)
                else event.__name__ if isinstance(event, type) else type(event).__name__)
        try:
            return self._by_event[name]
        except KeyError:
            raise KeyError(f"no topic carries event type {name!r}") from None

    def physical_names(self) -> list[str]:
        return [self.physical(name) for name in self._specs]
