"""The gateway's Prometheus metrics, in a registry of its own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics

# kube-scheduler exposes no `_created` series; neither does Berth (one series less per counter).
disable_created_metrics()


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("berth_gateway_requests", "HTTP requests by method, route and status code",
                                ["method", "route", "code"], registry=self.registry)
        self.seconds = Histogram("berth_gateway_request_seconds", "Request handling time", ["method", "route"],
                                 buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
                                 registry=self.registry)
        self.published = Counter("berth_events_published", "Events published by the gateway",
                                 registry=self.registry)
