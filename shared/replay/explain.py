"""`berth explain`: one attempt laid open, per node, as the scheduler saw it at that moment.

The state is rebuilt from the log exactly as replay rebuilds it (the cycle's watermark and
assumptions; the pods decided before it in its batch placed where they were recorded), then:
every Filter plugin's verdict on every node (the walk stops at the first rejecting plugin; this
shows them all), the node's decisive status, whether the attempt's walk reached it, each Score
plugin's raw and normalised score and the weighted total, and the pick. With `now`, the same for a
fresh attempt against the state at the end of the log.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from shared.cluster import ClusterView, point_at
from shared.errors import NotFound
from shared.events import BINDS, NODES, PLACEMENTS, PODS, ExtenderAnswer
from shared.framework.cycle_state import CycleState
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.model import Pod
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.extending import apply_filters
from shared.scheduler.schedule_one import ScheduleAlgorithm
from shared.scheduler.seeds import attempt_seed

from .engine import Replayer, outcome_text
from .history import Batch, History, Recorded
from .rebuild import Evaluation, LogFolder, evaluate, propose_again


class FilterVerdict(msgspec.Struct, kw_only=True, omit_defaults=True):
    plugin: str
    verdict: str
    """"pass", "fail", or "skip" (PreFilter said the plugin has nothing to check for this pod)."""
    reason: str = ""


class NodeExplanation(msgspec.Struct, kw_only=True, omit_defaults=True):
    node: str
    walked: bool
    """Whether the attempt's walk evaluated this node (it stops once enough nodes fit)."""
    status: str
    """The node's decisive filter status: "fits", or the first rejecting plugin and its reasons."""
    filters: list[FilterVerdict]
    raw: dict[str, int] = {}
    normalized: dict[str, int] = {}
    weighted: dict[str, int] = {}
    total: int | None = None
    picked: bool = False


class Explanation(msgspec.Struct, kw_only=True, omit_defaults=True):
    pod: str
    uid: str
    attempt: int
    cycle: int = 0
    at: datetime | None = None
    seed: int
    config_hash: str = ""
    nodes_total: int
    start: int
    feasible: list[str]
    """The feasible nodes the walk found, in walk order."""
    recorded: str = ""
    replayed: str
    pick: str = ""
    """Why the picked node among those scored (`pick_reason`); empty where none was picked."""
    nodes: list[NodeExplanation]


def explain_attempt(history: History, pod_name: str, attempt: int | None = None) -> Explanation:
    """A recorded attempt of `pod_name` ("namespace/name" or a uid); the last one by default."""
    uid = _uid(history, pod_name)
    recorded = [r for r in history.decisions if r.decision.pod_uid == uid and r.decision.batch_id in history.batches]
    if not recorded:
        raise NotFound("recorded scheduling attempt of pod", pod_name)
    if attempt is not None:
        chosen = [r for r in recorded if r.decision.attempt == attempt]
        if not chosen:
            known = ", ".join(str(r.decision.attempt) for r in recorded)
            raise NotFound(f"attempt of pod {pod_name} (recorded: {known})", str(attempt))
        target = chosen[0]
    else:
        target = max(recorded, key=lambda r: (r.decision.attempt, r.seq))
    batch = history.batches[target.decision.batch_id]
    replayer = Replayer(history)
    profiles = replayer.profiles_for(target.decision.config_hash)
    folder = LogFolder(history)
    folder.advance_to(batch.request.watermark)
    view = folder.view
    view.set_assumed((a.pod_uid, a.node_name) for a in batch.request.assumed)
    index = next(i for i, p in enumerate(batch.request.pods) if p.metadata.uid == uid)
    pod = batch.request.pods[index]
    start = batch.request.starts[index] if index < len(batch.request.starts) else 0
    def decided_later() -> None:
        # The queue decided the cycle later, on the view of that moment.
        folder.advance_to(batch.decided_watermark)
        view.set_assumed((a.pod_uid, a.node_name) for a in batch.decided_assumed)

    decide_on = decided_later if batch.late is not None else None
    ranked: Evaluation | None = None
    if batch.proposed:
        # Its worker walked it where the shards walk, ranked it with the batch's pods before it
        # placed where the worker placed them, and the queue tried that ranking on its own view.
        ranked = _proposal(batch, index, view, profiles)
    out = _explain(profiles, view, pod, start, target.decision.seed, _earlier(batch, index),
                   preempted=_preemption_message(history, target), extenders=batch.extenders.get(uid, ()),
                   decide_on=decide_on, ranked=ranked)
    out.cycle, out.at, out.config_hash = batch.request.cycle, target.at, target.decision.config_hash
    out.attempt = target.decision.attempt
    out.recorded = outcome_text(target.decision.node_name, target.decision.message)
    return out


def explain_now(history: History, pod_name: str) -> Explanation:
    """A fresh attempt of the pod against the state at the end of the log (binds in flight count)."""
    uid = _uid(history, pod_name)
    view = ClusterView()
    for event in history.events:
        if event.position.topic in (NODES, PODS, PLACEMENTS, BINDS):
            view.apply(event.envelope, event.position)
    pod = view.specs.get(uid)
    if pod is None:
        raise NotFound("pod", pod_name)
    started = list(history.configs.values())[-1] if history.configs else None
    profiles = Replayer(history).profiles_for(started.config_hash if started else "")
    number = max((r.decision.attempt for r in history.decisions if r.decision.pod_uid == uid), default=0) + 1
    seed = attempt_seed(started.seed if started else 0, f"{pod.metadata.namespace}/{pod.metadata.name}", number)
    view.forget(uid)
    view.set_preempting([uid], {})  # a bound pod is asked about as if it were not there yet
    out = _explain(profiles, view, pod, 0, seed, [], preempted=None)
    out.attempt = number
    return out


def _uid(history: History, pod_name: str) -> str:
    if pod_name in history.pods:
        return pod_name
    name = pod_name if "/" in pod_name else f"default/{pod_name}"
    uids = history.by_name.get(name)
    if not uids:
        raise NotFound("pod", name)
    return uids[-1]


def _earlier(batch: Batch, index: int) -> list[tuple[str, str]]:
    """The batch's pods decided before this one, where they were recorded to go."""
    out = []
    for pod in batch.request.pods[:index]:
        recorded = batch.decisions.get(pod.metadata.uid)
        if recorded is not None and recorded.decision.node_name:
            out.append((pod.metadata.uid, recorded.decision.node_name))
    return out


def _proposal(batch: Batch, index: int, view: ClusterView, profiles: dict[str, Framework]) -> Evaluation | None:
    """Pod `index`'s proposal made again (its ranking and the ranking's scores), None when nothing
    fit it; the view is left as it was."""
    req = batch.request
    prefix = msgspec.structs.replace(req, pods=req.pods[:index + 1], seeds=req.seeds[:index + 1])
    own = propose_again(prefix, view, profiles, record=True)[index]
    return own if own.merged.ranked else None


def _preemption_message(history: History, target: Recorded) -> str | None:
    record = history.preemptions.get(target.attempt_id)
    return record.decided.message if record is not None and record.decided is not None else None


def _explain(profiles: dict[str, Framework], view: ClusterView, pod: Pod, start: int, seed: int,
             earlier: list[tuple[str, str]], *, preempted: str | None,
             extenders: Sequence[ExtenderAnswer] = (), decide_on: Callable[[], None] | None = None,
             ranked: Evaluation | None = None) -> Explanation:
    """Filter verdicts on the cycle's start state (what the shards saw); scores and the pick after
    the batch's earlier pods are placed (what the queue saw when it decided this one). `decide_on`
    moves the view to where a cycle decided later was decided, before the pick. `ranked`: the
    pod's proposal (its worker's ranking and scores), which the pick tries in order."""
    uid = pod.metadata.uid
    taken = [node for _, node in earlier]  # where the batch's pods decided before it went
    restore = list(view.assumed.items())
    point_at(profiles.values(), view)
    snapshot = view.snapshot()
    e = evaluate(profiles, pod, snapshot, start, set(snapshot.node_info_map))
    table = _filter_table(e, snapshot)
    apply_filters(e.merged, extenders)  # the extenders' recorded answers
    decided = Decision("error", error=e.merged.error)
    if e.fwk is not None:
        if decide_on is not None:
            decide_on()
        for other, node in earlier:
            view.assume(other, node)
        point_at(profiles.values(), view)

        item = BatchItem(e.fwk, e.info, ranked.merged if ranked is not None else e.merged, e.raw, seed,
                         extenders, start, ranked.scores if ranked is not None else ())
        # A recorded decision with its candidates taken was the queue's walk again (never a
        # proposal's: the queue retries a refused proposal).
        decided = decide_batch([item], view.snapshot, view.assume, placed_before=bool(earlier) or decide_on is not None,
                               record=True, walker=ScheduleAlgorithm(random.Random(0)),
                               may_walk=lambda it: not it.merged.ranked, placed_on=taken)[0]
        view.set_assumed(restore)
    walked = set(e.merged.feasible) | set(e.merged.diagnosis.node_to_status)
    weights = e.fwk.score_weights if e.fwk is not None else {}
    per_node = {s.name: s for s in decided.scores}
    nodes: list[NodeExplanation] = []
    for info in snapshot.node_info_list:
        name = info.name
        status = e.merged.diagnosis.node_to_status.get(name)
        entry = NodeExplanation(
            node=name, walked=name in walked, filters=table[name],
            status="fits" if status is None and name in e.merged.feasible else (
                f"{status.plugin}: {status.message()}" if status is not None else _first_failure(table[name])),
            raw={p: col[name] for p, col in e.raw.items() if name in col}, picked=name == decided.host)
        scores = per_node.get(name)
        if scores is not None:
            entry.weighted = {ps.name: ps.score for ps in scores.scores}
            entry.normalized = {p: v // max(weights.get(p, 1), 1) for p, v in entry.weighted.items()}
            entry.total = scores.total_score
        nodes.append(entry)
    message = None
    if decided.verdict == "fit-error" and decided.fit is not None:
        decided.fit.diagnosis.post_filter_msg = preempted or ""
        message = decided.fit.message()
    replayed = outcome_text(decided.host or None, message or decided.error or None)
    return Explanation(pod=f"{pod.metadata.namespace}/{pod.metadata.name}", uid=uid, attempt=0, seed=seed,
                       nodes_total=snapshot.num_nodes(), start=start, feasible=list(e.merged.feasible),
                       replayed=replayed, pick=pick_reason(nodes, set(taken)), nodes=nodes)


def pick_reason(nodes: Sequence[NodeExplanation], taken: set[str]) -> str:
    """Why the picked node among those scored: the only one with the highest total; one of several
    tied at it, which the attempt's seed chose among (upstream's selectHost samples the tied nodes);
    or below others, saying how many of those went to pods decided before it in its batch
    (`taken`). Empty where nothing was picked or scored."""
    picked = next((n for n in nodes if n.picked), None)
    scored = [n.total for n in nodes if n.total is not None]
    if picked is None or picked.total is None or not scored:
        return ""
    top = max(scored)
    if picked.total == top:
        tied = scored.count(top)
        if tied == 1:
            return f"{picked.node}: the only node with the highest total ({top})"
        return (f"{picked.node}: one of {tied} nodes tied at the highest total ({top}); the attempt's seed chose "
                f"among them")
    higher = [n.node for n in nodes if n.total is not None and n.total > picked.total]
    went = sum(1 for name in higher if name in taken)
    return (f"{picked.node} (total {picked.total}): {len(higher)} node(s) scored higher, {went} of them taken by "
            f"pods decided before it in its batch")


def _filter_table(e: Evaluation, snapshot: Snapshot) -> dict[str, list[FilterVerdict]]:
    """Every Filter plugin on every node (upstream stops at the first rejection; this does not)."""
    out: dict[str, list[FilterVerdict]] = {info.name: [] for info in snapshot.node_info_list}
    if e.fwk is None:
        return out
    state = CycleState()
    _, status, _ = e.fwk.run_pre_filter_plugins(state, e.info)
    rejected = status is not None and not status.is_success()
    for info in snapshot.node_info_list:
        verdicts = out[info.name]
        for pl in e.fwk.filter_plugins:
            if rejected:
                verdicts.append(FilterVerdict(plugin=pl.name, verdict="skip", reason="PreFilter rejected the pod"))
            elif pl.name in state.skip_filter_plugins:
                verdicts.append(FilterVerdict(plugin=pl.name, verdict="skip"))
            else:
                s = pl.filter(state, e.info, info)
                if s is None or s.is_success():
                    verdicts.append(FilterVerdict(plugin=pl.name, verdict="pass"))
                else:
                    verdicts.append(FilterVerdict(plugin=pl.name, verdict="fail", reason=s.message()))
    return out


def _first_failure(verdicts: list[FilterVerdict]) -> str:
    failed = next((v for v in verdicts if v.verdict == "fail"), None)
    return f"{failed.plugin}: {failed.reason}" if failed is not None else "fits"

