"""kube-scheduler's metric names, so existing dashboards work against Berth."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from services.runtime.loop_metrics import LoopCounter, LoopHistogram

if TYPE_CHECKING:
    from shared.queue import SchedulingQueue

_ATTEMPT_BUCKETS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192)
_SLI_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84)
PENDING_EVERY_S = 0.5
"""How often the pending-pod gauges are read from the queue at most (reading them walks it)."""


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        # Those updated for every pod are loop metrics (`services.runtime.loop_metrics`).
        self.attempts = LoopCounter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result.",
            ["result", "profile"], registry=registry)
        self.pending = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", ["queue"], registry=registry)
        self.attempt_seconds = LoopHistogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding request).",
            ["result", "profile"], buckets=_ATTEMPT_BUCKETS, registry=registry)
        self.sli_seconds = LoopHistogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.",
            ["attempts"], buckets=_SLI_BUCKETS, registry=registry)
        self.algorithm_seconds = LoopHistogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds: from a pod's pop until its decision (Berth filters and "
            "scores a batch of pods together).", buckets=_ATTEMPT_BUCKETS, registry=registry)
        self.incoming = LoopCounter(
            "scheduler_queue_incoming_pods", "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"], registry=registry)
        self.unschedulable = Gauge(
            "scheduler_unschedulable_pods", "The number of unschedulable pods broken down by plugin name. A pod "
            "will increment the gauge for all plugins that caused it to not schedule.",
            ["plugin", "profile"], registry=registry)
        self.batch_pods = Histogram(
            "berth_queue_batch_pods", "Pods per scatter/gather cycle.",
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048), registry=registry)
        self.walked_again_pods = Counter(
            "berth_queue_walked_again_pods", "Pods the queue walked again itself: every candidate its ranking "
            "offered was taken by pods decided before it in the batch (a whole attempt in the queue).",
            registry=registry)
        self.answer_wait_seconds = Counter(
            "berth_queue_answer_wait_seconds", "Seconds the queue's loop was off the CPU while it waited for the "
            "filter workers' answers to the batch it decides next (pipelined): waiting for the workers, or, on a "
            "machine short of cores, for a core.", registry=registry)
        self.proposed_pods = Counter(
            "berth_queue_proposed_pods", "Pods sent to the filter workers in batches they decide (propose).",
            registry=registry)
        self._pending_read = float("-inf")
        self._unschedulable_labels: set[tuple[str, str]] = set()

    def pending_in(self, queue: SchedulingQueue) -> None:
        """The pending and unschedulable gauges as `queue` holds its pods now (a plugin's gauge no
        pod names any more goes to zero), at most every `PENDING_EVERY_S`."""
        now = time.monotonic()
        if now - self._pending_read < PENDING_EVERY_S:
            return
        self._pending_read = now
        for name, count in queue.pending_pods().counts().items():
            self.pending.labels(name).set(count)
        by_plugin = queue.unschedulable_by_plugin()
        for labels in self._unschedulable_labels - by_plugin.keys():
            self.unschedulable.labels(*labels).set(0)
        for labels, count in by_plugin.items():
            self.unschedulable.labels(*labels).set(count)
        self._unschedulable_labels |= by_plugin.keys()

    def attempted(self, result: str, profile: str, seconds: float) -> None:
        """One attempt ended with `result` after `seconds` (for every pod the queue decides)."""
        self.attempts.labels(result, profile).inc()
        self.attempt_seconds.labels(result, profile).observe(seconds)
        self.algorithm_seconds.observe(seconds)

    def scheduled(self, attempts: int, seconds: float) -> None:
        """A pod bound `seconds` after it entered the queue, at its `attempts`th attempt."""
        self.sli_seconds.labels(str(min(attempts, 15))).observe(seconds)

    def count_incoming(self, queue: str, event: str) -> None:
        """One pod into `queue` on `event`."""
        self.incoming.labels(queue, event).inc()
