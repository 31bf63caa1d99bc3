"""Prometheus metrics of one service, in its own registry (several services can share a process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

# kube-scheduler exposes no `_created` series; neither does Berth (one series less per counter).
disable_created_metrics()


class RuntimeMetrics:
    def __init__(self, service: str) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.consumed = Counter("berth_events_consumed", "Events decoded and handed to the handler",
                                ["service", "topic", "type"], registry=reg)
        self.duplicates = Counter("berth_events_duplicate", "Redelivered events dropped before the handler",
                                  ["service", "topic"], registry=reg)
        self.published = Counter("berth_events_published", "Events published by the handler", ["service", "topic"],
                                 registry=reg)
        self.dead_lettered = Counter("berth_events_dead_lettered", "Messages sent to the dead-letter topic",
                                     ["service", "topic", "cause"], registry=reg)
        self.retries = Counter("berth_handler_retries", "Retries after retriable failures", ["service", "stage"],
                               registry=reg)
        self.rebalances = Counter("berth_rebalances", "Partition assignments received", ["service"], registry=reg)
        self.rests = Counter("berth_rests", "Fetch-free pauses taken while nothing came (a spare filter worker's)",
                             ["service"], registry=reg)
        self.batch_seconds = Histogram("berth_batch_seconds", "Handle + publish + commit time per batch", ["service"],
                                       buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
                                       registry=reg)
        self.lag = Gauge("berth_consumer_lag", "High watermark minus next offset to handle",
                         ["service", "topic", "partition"], registry=reg)
        self.assigned = Gauge("berth_assigned_partitions", "Partitions this replica owns", ["service"], registry=reg)
        self.service = service
