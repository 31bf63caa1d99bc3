"""What the bench reads from its fleet's Prometheus texts: the queues' counters and attempt
latencies, and whether each filter worker answers requests or rests (the warm-up's)."""

from __future__ import annotations

import re
import sys
import urllib.request
from dataclasses import dataclass

from ..fleet import Fleet, Member

_BUCKET = re.compile(r'^scheduler_scheduling_attempt_duration_seconds_bucket\{(?P<labels>[^}]*)\} (?P<value>\S+)$')


_SENT = re.compile(r"^berth_queue_batch_pods_sum (?P<value>\S+)$", re.MULTILINE)
_PROPOSED = re.compile(r"^berth_queue_proposed_pods_total (?P<value>\S+)$", re.MULTILINE)
_WALKED_AGAIN = re.compile(r"^berth_queue_walked_again_pods_total (?P<value>\S+)$", re.MULTILINE)
_ANSWER_WAIT = re.compile(r"^berth_queue_answer_wait_seconds_total (?P<value>\S+)$", re.MULTILINE)


def queue_metrics(fleet: Fleet) -> str:
    """The queues' Prometheus texts, one after another ("" for one that cannot be read)."""
    return "\n".join(metrics_of(m) for m in fleet.members.values() if m.spec.name == "queue")


def metrics_of(member: Member, *, warn: bool = True) -> str:
    """A member's Prometheus text ("" when it cannot be read; `warn`: say so on stderr)."""
    try:
        with urllib.request.urlopen(member.url + "/metrics", timeout=5) as resp:
            return resp.read().decode()
    except OSError as e:
        if warn:
            print(f"warning: {member.label}'s metrics could not be read: {e}", file=sys.stderr)
        return ""


def _value(pattern: re.Pattern[str], metrics: str) -> float:
    """The sum of the samples `pattern` finds in metrics texts (each queue's one, or a worker's), 0
    where there is none."""
    return sum(float(m.group("value")) for m in pattern.finditer(metrics))


def sent_pods(metrics: str) -> float:
    """Pods the queue has sent to the filter workers so far (the batch-size histogram's sum)."""
    return _value(_SENT, metrics)


def proposed_pods(metrics: str) -> float:
    """Pods the queue has sent to the filter workers in batches they propose, so far."""
    return _value(_PROPOSED, metrics)


def walked_again_pods(metrics: str) -> float:
    """Pods the queue has walked again itself so far (their ranked candidates all taken)."""
    return _value(_WALKED_AGAIN, metrics)


def answer_wait_seconds(metrics: str) -> float:
    """Seconds the queue has waited so far for answers to the batch it decides next."""
    return _value(_ANSWER_WAIT, metrics)


def attempt_latency(text: str) -> tuple[float, float]:
    """p50 and p99 of the queue's attempt-duration histogram (bucket upper bounds, as Prometheus'
    histogram_quantile would bound them)."""
    cumulative: dict[float, float] = {}
    for line in text.splitlines():
        m = _BUCKET.match(line)
        if m is None:
            continue
        le = re.search(r'le="([^"]+)"', m.group("labels"))
        if le is None:
            continue
        bound = float("inf") if le.group(1) == "+Inf" else float(le.group(1))
        cumulative[bound] = cumulative.get(bound, 0.0) + float(m.group("value"))
    if not cumulative:
        return 0.0, 0.0
    bounds = sorted(cumulative)
    total = cumulative[bounds[-1]]

    def quantile(q: float) -> float:
        for b in bounds:
            if cumulative[b] >= q * total:
                return b if b != float("inf") else bounds[-2] if len(bounds) > 1 else 0.0
        return 0.0

    return quantile(0.5), quantile(0.99)


_ANSWERED = re.compile(r'^berth_events_published_total\{[^}]*topic="[^"]*shard-results"[^}]*\} (?P<value>\S+)$',
                       re.MULTILINE)
_RESTED = re.compile(r'^berth_rests_total\{[^}]*\} (?P<value>\S+)$', re.MULTILINE)


@dataclass(frozen=True)
class WorkersState:
    """What the filter workers' metrics say of them in the warm-up."""

    answering: int
    """Filter workers that have answered a request (their metrics count the answers published)."""
    idle: int
    """Those that have answered none and rested at least once."""
    unread: int
    """Those whose metrics could not be read."""
    workers: int
    """Every filter worker."""

    @property
    def settled(self) -> bool:
        """Every worker either answered (the queue uses it) or rests (it does not)."""
        return self.answering + self.idle >= self.workers

    def unsettled(self, busy: int) -> str:
        """What the warm-up waited for in vain, in words."""
        others = self.workers - self.answering
        said = [f"{self.answering} of the {busy} filter workers to be kept busy answered"
                if self.answering < busy else f"{self.answering} of the {self.workers} filter workers answered",
                f"{self.idle} of the {others} others rested"]
        if self.unread:
            said.append(f"the metrics of {self.unread} could not be read")
        return ", ".join(said)


def workers_state(metrics: list[str]) -> WorkersState:
    """What the filter workers' metrics texts say of them ("" where one could not be read)."""
    answering = [_value(_ANSWERED, text) > 0 for text in metrics]  # counters: a sum above 0 is a sample above 0
    idle = [not a and _value(_RESTED, text) > 0 for a, text in zip(answering, metrics, strict=True)]
    return WorkersState(sum(answering), sum(idle), sum(not text for text in metrics), len(metrics))


def workers_state_of(fleet: Fleet) -> WorkersState:
    """What the fleet's filter workers' metrics say of them now."""
    return workers_state([metrics_of(member, warn=False) for member in fleet.members.values()
                          if member.spec.name == "filter"])
