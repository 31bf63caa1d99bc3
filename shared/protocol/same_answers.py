"""Pods that only their names tell apart get one shard answer: a ReplicaSet's pods in one batch,
filtered on one view from one round-robin start, walk the same nodes to the same verdicts and raw
scores. A filter worker evaluates the first and answers for the others with a reference to it
(`PodShardResult.same_as`), which also spares the broker, the queue and the projector 1,023 copies
of a 1,024-pod batch's answer."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from shared.events import PodShardResult
from shared.framework.pod_info import PodInfo
from shared.model import Pod

_encoder = msgspec.json.Encoder()


def answer_key(pod: Pod, start: int, signature: bytes, *, nominated: bool) -> bytes | None:
    """What a shard's filter answer for `pod` depends on besides the view and its shard: the spec
    (`signature`, PodInfo's), everything in metadata and status but the pod's name, uid and
    timestamps, and the walk's start. None for a pod the view's nominator holds (`nominated`) or
    whose status names a node: who the pod is matters then (the nominator counts every nominated
    pod but the pod itself)."""
    if nominated or pod.status.nominated_node_name:
        return None
    meta = pod.metadata
    return _encoder.encode((start, meta.namespace, meta.labels, meta.annotations, meta.deletion_timestamp,
                            meta.owner_references, pod.status)) + signature


class WalkBudget:
    """Admits the pods of one batch while it needs at most `most` distinct walks (None: any
    number): pods that only their names tell apart share one (`answer_key`, the batch's pods
    sharing one start), a pod whose status names a node, or that the view's nominator holds, walks
    alone. Pods with required pod anti-affinity are admitted while the batch holds fewer than
    `repelling_most(pod)` of them (the caller's bound: half the feasible nodes the pod's walk
    seeks). Every walk of a batch starts at the same node, so they search the same nodes, and a
    node one of them takes may be ruled out for the others: with a hostname term that selects the
    pods themselves, a walk of n feasible nodes places at most n of them, and those decided after
    every candidate is gone are scheduled again in the queue, each a whole attempt. (A zone term
    places one pod a zone: such pods still walk again beyond the zones.)"""

    def __init__(self, most: int | None, *, repelling_most: Callable[[PodInfo], int] | None = None) -> None:
        self.most = None if most is None else max(1, most)
        self.repelling_most = repelling_most
        self.walks = 0
        """Distinct walks counted (only while `most` bounds them)."""
        self.repelling = 0
        """Pods with required anti-affinity admitted."""
        self._keys: set[bytes] = set()

    def admit(self, info: PodInfo, *, nominated: bool = False) -> bool:
        """Whether `info` joins the batch (its walk counted if it needs one of its own);
        `nominated`: the view's nominator holds it."""
        cap = self.repelling_most if info.has_required_anti_affinity else None
        if cap is not None and self.repelling >= max(1, cap(info)):
            return False
        if self.most is not None and not self._walk_admitted(info, nominated, self.most):
            return False
        self.repelling += cap is not None
        return True

    def _walk_admitted(self, info: PodInfo, nominated: bool, most: int) -> bool:
        key = answer_key(info.pod, 0, info.signature(), nominated=nominated)
        if key is not None and key in self._keys:
            return True
        if self.walks >= most:
            return False
        self.walks += 1
        if key is not None:
            self._keys.add(key)
        return True


def same_as(pod_uid: str, first: str) -> PodShardResult:
    """The answer of a pod whose answer is `first`'s."""
    return PodShardResult(pod_uid=pod_uid, same_as=first)


def shared_results(results: Iterable[PodShardResult]) -> list[PodShardResult]:
    """One answer's results with each reference replaced by the result it names: the same object,
    whose `pod_uid` stays the first pod's (readers key results by the pod they asked about)."""
    by_uid: dict[str, PodShardResult] = {}
    out: list[PodShardResult] = []
    for r in results:
        target = by_uid.get(r.same_as, r) if r.same_as else r
        by_uid[r.pod_uid] = target
        out.append(target)
    return out
