"""Prometheus metrics of one service, in its own registry (several services can share a process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class RuntimeMetrics:
    def __init__(self, service: str) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = {"registry": self.registry}
        self.consumed = Counter("berth_events_consumed", "Events decoded and handed to the handler",
                                ["service", "topic", "type"], **labels)
        self.duplicates = Counter("berth_events_duplicate", "Redelivered events dropped before the handler",
                                  ["service", "topic"], **labels)
        self.published = Counter("berth_events_published", "Events published by the handler", ["service", "topic"],
                                 **labels)
        self.dead_lettered = Counter("berth_events_dead_lettered", "Messages sent to the dead-letter topic",
                                     ["service", "topic", "cause"], **labels)
        self.retries = Counter("berth_handler_retries", "Retries after retriable failures", ["service", "stage"],
                               **labels)
        self.rebalances = Counter("berth_rebalances", "Partition assignments received", ["service"], **labels)
        self.batch_seconds = Histogram("berth_batch_seconds", "Handle + publish + commit time per batch", ["service"],
                                       buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
                                       **labels)
        self.lag = Gauge("berth_consumer_lag", "High watermark minus next offset to handle",
                         ["service", "topic", "partition"], **labels)
        self.assigned = Gauge("berth_assigned_partitions", "Partitions this replica owns", ["service"], **labels)
        self.service = service
