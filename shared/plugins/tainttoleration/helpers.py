"""Taint/toleration matching (upstream v1.Toleration.ToleratesTaint and component-helpers'
FindMatchingUntoleratedTaint) and the default score normalisation shared by scoring plugins."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from shared.framework.interfaces import NodeScore
from shared.model import Taint, Toleration

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint: an empty effect or key is a wildcard; "" means Equal.

    The Gt/Lt comparison operators sit behind an alpha feature gate upstream (off by
    default), so any operator other than Equal/Exists tolerates nothing.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op == "" or op == "Equal":
        return toleration.value == taint.value
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    for t in tolerations:
        if tolerates(t, taint):
            return True
    return False


def do_not_schedule(taint: Taint) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: the effects that make a node infeasible."""
    return taint.effect == NO_SCHEDULE or taint.effect == NO_EXECUTE


def find_matching_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], include: Callable[[Taint], bool]
) -> Taint | None:
    """The first taint (in node order) passing `include` that no toleration tolerates."""
    for taint in taints:
        if not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's int64 `/`."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """helper.DefaultNormalizeScore: scale to [0, max_priority] by the highest score; `reverse`
    flips the scale (a zero maximum gives every node max_priority when reversed)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = _go_div(max_priority * s.score, max_count)
        s.score = max_priority - score if reverse else score
