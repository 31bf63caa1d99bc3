"""Extenders with preemptVerb, recorded and replayed.

The preemption service wraps each configured extender in a `RecordingExtender`: the evaluator
calls it as it would the extender, and what came back (or the error) is kept as an
`ExtenderAnswer` for the decision's event. Replay hands those answers back through
`ReplayedExtender`s in the same order, so a recorded preemption is re-made without the extender.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.events import ExtenderAnswer
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.preemption.evaluator import PreemptionExtender
from shared.preemption.victims import Victims

PREEMPT = "preempt"


class RecordedFailure(Exception):
    """A preempt call that failed when it was made, failing again as recorded (its message)."""


class RecordingExtender:
    def __init__(self, inner: PreemptionExtender, answers: list[ExtenderAnswer]) -> None:
        self.inner, self.answers = inner, answers
        self.name = inner.name

    def supports_preemption(self) -> bool:
        return self.inner.supports_preemption()

    def is_interested(self, pod: PodInfo) -> bool:
        return self.inner.is_interested(pod)

    def is_ignorable(self) -> bool:
        return self.inner.is_ignorable()

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims]) -> dict[str, Victims]:
        try:
            result = self.inner.process_preemption(pod, node_to_victims)
        except Exception as exc:
            self.answers.append(ExtenderAnswer(extender=self.name, verb=PREEMPT, error=str(exc),
                                               ignored=self.inner.is_ignorable()))
            raise
        self.answers.append(ExtenderAnswer(
            extender=self.name, verb=PREEMPT,
            victims={node: [p.uid for p in v.pods] for node, v in result.items() if v is not None},
            pdb_violations={node: v.num_pdb_violations for node, v in result.items() if v is not None}))
        return result


class ReplayedExtender:
    """One recorded preempt call: answers it again from the record (victims looked up by uid
    among the node's pods, as a nodeCacheCapable extender's answer is)."""

    def __init__(self, answer: ExtenderAnswer, node_info: Callable[[str], NodeInfo | None]) -> None:
        self.answer, self.node_info = answer, node_info
        self.name = answer.extender

    def supports_preemption(self) -> bool:
        return True

    def is_interested(self, pod: PodInfo) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return self.answer.ignored

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims]) -> dict[str, Victims]:
        if self.answer.error:
            raise RecordedFailure(self.answer.error)
        out: dict[str, Victims] = {}
        for node, uids in self.answer.victims.items():
            sent = {p.uid: p for p in node_to_victims[node].pods} if node in node_to_victims else {}
            info = self.node_info(node)
            running = {p.uid: p for p in info.pods} if info is not None else {}
            pods = [sent.get(u) or running[u] for u in uids if u in sent or u in running]
            out[node] = Victims(pods, self.answer.pdb_violations.get(node, 0))
        return out


def replayed(answers: Sequence[ExtenderAnswer], node_info: Callable[[str], NodeInfo | None]) -> list[ReplayedExtender]:
    return [ReplayedExtender(a, node_info) for a in answers if a.verb == PREEMPT]
