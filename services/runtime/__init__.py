"""The service runtime: one consume loop (decode → dedupe → handle → publish → commit), rebalance
hooks, retries with backoff, dead letters, graceful stop, health and Prometheus endpoints."""

from .dedupe import RecentEvents
from .handler import Handler
from .loop import RetryPolicy
from .service import Rest, Service, ServiceConfig, run_service

__all__ = ["Handler", "RecentEvents", "Rest", "RetryPolicy", "Service", "ServiceConfig", "run_service"]
