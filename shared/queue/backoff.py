"""backoffQ: pods waiting out their backoff, ordered by expiry (upstream backoff_queue.go).

Two heaps, as upstream: pods rejected by plugins, and pods that failed with an error (no rejector
plugins). Both are flushed the same way; keeping them apart preserves upstream's flush order.
"""

from __future__ import annotations

from .clock import Clock
from .heap import KeyedHeap
from .queued_pod_info import QueuedPodInfo


def _key(q: QueuedPodInfo) -> str:
    return q.key


class BackoffQueue:
    __slots__ = ("clock", "initial", "maximum", "_rejected", "_errored")

    def __init__(self, clock: Clock, initial_seconds: float, max_seconds: float) -> None:
        self.clock = clock
        self.initial = float(initial_seconds)
        self.maximum = float(max_seconds)
        # A pod's backoff time is its rank: it holds while the pod waits here (`backoff_time`).
        self._rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, self._less, self.backoff_time)
        self._errored: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, self._less, self.backoff_time)

    # -- timing ---------------------------------------------------------------------------------
    def backoff_duration(self, attempts: int) -> float:
        """initial * 2^(attempts-1), capped at the maximum; 0 for a pod never attempted."""
        if attempts <= 0:
            return 0.0
        duration = self.initial
        for _ in range(1, attempts):
            # Compare before doubling, as upstream, so the cap applies without overshoot.
            if duration > self.maximum - duration:
                return self.maximum
            duration += duration
        return duration

    def backoff_time(self, q: QueuedPodInfo) -> float:
        """When `q` completes backoff; cached on the pod until its next pop or failure."""
        if q.backoff_expiration is None:
            q.backoff_expiration = q.timestamp + self.backoff_duration(q.attempts)
        return q.backoff_expiration

    def is_backing_off(self, q: QueuedPodInfo) -> bool:
        return self.backoff_time(q) > self.clock.now()

    def _less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.backoff_time(a) < self.backoff_time(b)

    # -- contents -------------------------------------------------------------------------------
    def add(self, q: QueuedPodInfo) -> None:
        if not q.rejector_plugins():
            self._errored.add_or_update(q)
            self._rejected.delete(q.key)
        else:
            self._rejected.add_or_update(q)
            self._errored.delete(q.key)

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._rejected.get(key) or self._errored.get(key)

    def has(self, key: str) -> bool:
        return self._rejected.has_key(key) or self._errored.has_key(key)

    def update(self, key: str, q: QueuedPodInfo) -> bool:
        """Re-sift `q` (already updated in place) if it is queued here."""
        for heap in (self._rejected, self._errored):
            if heap.has_key(key):
                heap.add_or_update(q)
                return True
        return False

    def delete(self, key: str) -> QueuedPodInfo | None:
        return self._rejected.delete(key) or self._errored.delete(key)

    def pop_all_completed(self) -> list[QueuedPodInfo]:
        """Every pod whose backoff has expired: the rejected heap first, then the errored one."""
        done: list[QueuedPodInfo] = []
        for heap in (self._rejected, self._errored):
            while (head := heap.peek()) is not None and not self.is_backing_off(head):
                heap.pop()
                done.append(head)
        return done

    def next_expiry(self) -> float | None:
        heads = [h.peek() for h in (self._rejected, self._errored)]
        times = [self.backoff_time(h) for h in heads if h is not None]
        return min(times) if times else None

    def list(self) -> list[QueuedPodInfo]:
        return [*self._rejected, *self._errored]

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errored)


__all__ = ["BackoffQueue"]
