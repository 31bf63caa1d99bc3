"""Replay: re-make every recorded scheduling and preemption decision on the state it was made on,
and report each one that comes out differently.

Preemption requests are replayed first, in the order the queue made them, on a view of their own
(as the preemption service folds its own); then every queue cycle, in order: the view is folded to
the cycle's watermark, its assumptions are overlaid, each pod's attempt is re-made in-process, and
the batch is decided as the queue decides it (`decide_batch`). A FitError's message is completed
with the replayed preemption's.

With `what_if`, each cycle is also decided under another configuration on the same recorded state,
and the decisions that would have changed are reported (history itself is not rewritten: every
decision is re-made on the state that really existed then).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec

from shared.cluster import ClusterView, point_at
from shared.events import PreemptionDecided
from shared.framework.runtime import Framework
from shared.model.config import KubeSchedulerConfiguration
from shared.profiles import build_profiles
from shared.protocol.answers import decode_walk
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.extending import apply_filters
from shared.protocol.preemption_extenders import replayed
from shared.protocol.preemption_in_flight import recorded_overlay
from shared.protocol.preemption_request import PreemptionOutcome, decide_preemption, folded_past
from shared.scheduler.schedule_one import ScheduleAlgorithm
from shared.scheduler.seeds import attempt_seed, config_hash

from .diff import first_difference, verdicts, weighted_difference
from .history import Batch, History, Recorded
from .rebuild import Evaluation, LogFolder, evaluate_batch, propose_again

Progress = Callable[[int, int], None]


class Divergence(msgspec.Struct, kw_only=True, omit_defaults=True):
    kind: str
    """"decision", "preemption", or "what-if" (a decision another configuration would change)."""
    pod: str
    uid: str
    attempt: int = 0
    cycle: int = 0
    batch: str = ""
    recorded: str
    replayed: str
    plugin: str = ""
    """The first plugin whose verdict differs ("" when the filters and raw scores agree)."""
    detail: str = ""


class ReplayReport(msgspec.Struct, kw_only=True):
    events: int
    cycles: int
    decisions: int
    matched: int
    preemptions: int
    preemptions_matched: int
    divergences: list[Divergence]
    what_if: str = ""
    changed: int = 0
    """Decisions the what-if configuration would change."""
    not_replayable: int = 0
    """Decisions recorded without a cycle to rebuild (no nodes at the time)."""
    unfinished_cycles: int = 0
    """Cycles whose decisions were never published (the queue stopped mid-cycle)."""
    awaiting_preemption: int = 0
    """Decisions the log ends without: the queue had asked for preemption and stopped before
    publishing the decision (it publishes one once the preemption is decided)."""
    unknown_configs: list[str] = []
    """Recorded config hashes with no SchedulerStarted in the log (replayed under defaults)."""


@dataclass
class Window:
    """Which cycles to check, by position in the history (inclusive bounds; None: open)."""

    first: int | None = None
    last: int | None = None

    def holds(self, seq: int) -> bool:
        return (self.first is None or seq >= self.first) and (self.last is None or seq <= self.last)


def outcome_text(node: str | None, message: str | None) -> str:
    return f"bound to {node}" if node else (message or "retried in the same cycle")


class Replayer:
    def __init__(self, history: History, *, what_if: KubeSchedulerConfiguration | None = None,
                 what_if_name: str = "", window: Window | None = None, progress: Progress | None = None) -> None:
        self.history = history
        self.window = window or Window()
        self.progress = progress
        self.what_if_name = what_if_name
        self._what_if = build_profiles(what_if) if what_if_name else None
        self._profiles: dict[str, dict[str, Framework]] = {}
        self._unknown: set[str] = set()
        self.preempted: dict[str, PreemptionOutcome] = {}
        self.divergences: list[Divergence] = []
        self.awaiting_preemption = 0
        self.walker = ScheduleAlgorithm(random.Random(0))
        """Walks again for pods whose ranked candidates were taken, as the queue's walker does."""
        self._attempts: dict[str, int] = {}
        """Pod uid → the last attempt number the queue used (as its own counter runs)."""

    # --- configuration ------------------------------------------------------------------------

    def profiles_for(self, hash_: str) -> dict[str, Framework]:
        profiles = self._profiles.get(hash_)
        if profiles is None:
            started = self.history.configs.get(hash_)
            if started is None and hash_ and hash_ != config_hash(None):
                self._unknown.add(hash_)
            profiles = self._profiles[hash_] = build_profiles(started.config if started else None)
        return profiles

    def _hash_of(self, batch: Batch) -> str:
        return next((r.decision.config_hash for r in batch.decisions.values()), "")

    # --- the run ------------------------------------------------------------------------------

    def run(self) -> ReplayReport:
        h = self.history
        batches = h.ordered_batches()
        preemptions = h.ordered_preemptions()
        total, done = len(batches) + len(preemptions), 0
        matched_preemptions = replayed_preemptions = 0
        folder = LogFolder(h)
        # A decision's message carries its preemption's outcome, so a window's decisions need their
        # preemptions replayed even when those were requested after the window closed.
        needed = {r.attempt_id for b in batches if self.window.holds(b.seq) for r in b.decisions.values()}
        for record in preemptions:
            done += 1
            self._tick(done, total)
            attempt = h.by_attempt.get(record.request.attempt_id)
            if not (self.window.holds(record.seq) or record.request.attempt_id in needed):
                continue
            decided = record.decided
            # The service decided on its view as it was then: past the watermark when `folded` says so.
            folder.advance_to(decided.folded if decided is not None and decided.folded else record.request.watermark)
            folder.view.set_assumed((a.pod_uid, a.node_name) for a in record.request.assumed)
            evicting, nominating = recorded_overlay(decided, h.decided_by_request) if decided else ([], {})
            folder.view.set_preempting(evicting, nominating)
            profiles = self.profiles_for(attempt.decision.config_hash if attempt else "")
            fwk = profiles.get(record.request.pod.spec.scheduler_name)
            if fwk is not None:  # the preempt-verb extenders' recorded answers, not new calls
                fwk.set_extenders(replayed(decided.extenders if decided else [], folder.view.snapshot().get))
            past = decided is not None and folded_past(decided.folded, record.request.watermark)
            outcome = decide_preemption(fwk, folder.view, record.request,
                                        moved=decided is not None and bool(past or evicting or nominating))
            self.preempted[record.request.attempt_id] = outcome
            if record.decided is None:
                continue
            replayed_preemptions += 1
            if same_preemption(outcome, record.decided):
                matched_preemptions += 1
                continue
            victims = [v.uid for v in outcome.victims]
            recorded_victims = [v.uid for v in record.decided.victims]
            uid = record.request.pod.metadata.uid
            detail = ("decided on a view past its watermark" if past
                      else "decided on a view short of its watermark" if record.decided.folded else "")
            self.divergences.append(Divergence(
                kind="preemption", pod=h.pod_name(uid), uid=uid, attempt=attempt.decision.attempt if attempt else 0,
                recorded=_preemption_text(record.decided.nominated_node, recorded_victims, record.decided.message),
                replayed=_preemption_text(outcome.nominated, victims, outcome.message), detail=detail))
        view = ClusterView()
        folder = LogFolder(h, view)
        decisions = matched = unfinished = changed = 0
        # A cycle that waited for its extenders is evaluated where it was filtered and decided
        # where the queue decided it, between the cycles that ran meanwhile.
        steps = sorted([(b.order, False, b) for b in batches] + [(b.decided_order, True, b) for b in batches
                                                                 if b.late is not None],
                       key=lambda step: (step[0], step[1]))
        waiting: dict[str, tuple[list[Evaluation], list[Evaluation] | None]] = {}
        for _, decided_late, batch in steps:
            if not decided_late:
                done += 1
                self._tick(done, total)
            if not self.window.holds(batch.seq):
                if not decided_late:
                    self._count_attempts(batch)  # the queue's attempt counters ran on outside the window
                continue
            if batch.late is not None and not decided_late:
                folder.advance_to(batch.request.watermark)
                waiting[batch.request.batch_id] = self._evaluate_both(batch, view)
                continue
            folder.advance_to(batch.decided_watermark)
            n, m, c, finished = self._replay_batch(batch, view, waiting.pop(batch.request.batch_id, None))
            decisions, matched, changed = decisions + n, matched + m, changed + c
            unfinished += not finished
        in_batches = {r.decision.batch_id for r in h.decisions if r.decision.batch_id in h.batches}
        not_replayable = sum(1 for r in h.decisions if r.decision.batch_id not in in_batches
                             and self.window.holds(r.seq))
        return ReplayReport(
            events=len(h), cycles=len(batches), decisions=decisions, matched=matched,
            preemptions=replayed_preemptions, preemptions_matched=matched_preemptions,
            divergences=self.divergences, what_if=self.what_if_name, changed=changed,
            not_replayable=not_replayable, unfinished_cycles=unfinished, unknown_configs=sorted(self._unknown),
            awaiting_preemption=self.awaiting_preemption)

    def _tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    # --- one cycle ----------------------------------------------------------------------------

    def evaluate(self, batch: Batch, view: ClusterView, profiles: Mapping[str, Framework],
                 *, record: bool = False) -> list[Evaluation]:
        """Re-make the batch's attempts on `view` folded to its request's watermark (what the
        shards saw), the extenders' recorded answers applied; the view keeps the request's
        assumptions. A proposed batch is proposed again, as its worker did."""
        req = batch.request
        view.set_assumed((a.pod_uid, a.node_name) for a in req.assumed)
        point_at(profiles.values(), view)
        if batch.proposed:
            return propose_again(req, view, profiles, record=record)
        evaluations = evaluate_batch(profiles, req, view, alone=batch.extenders.keys())
        for e in evaluations:  # the extenders' recorded answers, not a new call
            apply_filters(e.merged, batch.extenders.get(e.info.uid, ()))
        return evaluations

    def decide_evaluated(self, batch: Batch, evaluations: list[Evaluation], view: ClusterView,
                         profiles: Mapping[str, Framework], seeds: Mapping[str, int], *,
                         record: bool = False) -> list[Decision]:
        """Decide evaluated attempts as the queue did, on `view` folded to where it decided them
        (the request's watermark, or a late decision's); the view is left with those assumptions."""
        assumed = batch.decided_assumed
        view.set_assumed((a.pod_uid, a.node_name) for a in assumed)
        point_at(profiles.values(), view)
        starts = batch.request.starts
        items = [BatchItem(e.fwk,  # type: ignore[arg-type]  # those without one are left out (`runnable`)
                           e.info, e.merged, e.raw, seeds[e.info.uid], batch.extenders.get(e.info.uid, ()),
                           starts[k] if k < len(starts) else 0, e.scores)
                 for k, e in enumerate(evaluations)]
        runnable = [i for i, e in enumerate(evaluations) if e.fwk is not None]

        def assume(uid: str, host: str) -> None:
            view.assume(uid, host)
            point_at(profiles.values(), view)

        # The queue lets a pod walk again only where it has no pod waiting ahead of it, which the
        # log does not hold; a pod it retried has no decision in this batch, so that is the rule.
        decided = decide_batch([items[i] for i in runnable], view.snapshot, assume, record=record,
                               placed_before=batch.late is not None, walker=self.walker,
                               may_walk=lambda item: item.info.uid in batch.decisions)
        out: list[Decision] = [Decision("error", error=e.merged.error) for e in evaluations]
        for i, d in zip(runnable, decided):
            out[i] = d
        view.set_assumed((a.pod_uid, a.node_name) for a in assumed)
        return out

    def decide(self, batch: Batch, view: ClusterView, profiles: Mapping[str, Framework],
               *, record: bool = False, seeds: Mapping[str, int] | None = None,
               evaluations: list[Evaluation] | None = None) -> tuple[list[Evaluation], list[Decision]]:
        """Evaluate (unless given) and decide the batch as the queue did."""
        if evaluations is None:
            evaluations = self.evaluate(batch, view, profiles, record=record)
        seeds = seeds if seeds is not None else self.seeds(batch)
        return evaluations, self.decide_evaluated(batch, evaluations, view, profiles, seeds, record=record)

    def _evaluate_both(self, batch: Batch, view: ClusterView) -> tuple[list[Evaluation], list[Evaluation] | None]:
        """A late cycle's evaluations where it was filtered: as recorded, and under the what-if."""
        record = self._what_if is not None
        base = self.evaluate(batch, view, self.profiles_for(self._hash_of(batch)), record=record)
        return base, self.evaluate(batch, view, self._what_if, record=True) if self._what_if is not None else None

    def seeds(self, batch: Batch) -> dict[str, int]:
        """Each pod's attempt seed: the recorded one, or for a pod the queue retried at once (no
        decision recorded), derived as the queue derives it from the attempt number it used."""
        started = self.history.configs.get(self._hash_of(batch))
        base = started.seed if started is not None else 0
        out: dict[str, int] = {}
        for pod in batch.request.pods:
            uid = pod.metadata.uid
            recorded = batch.decisions.get(uid)
            number = recorded.decision.attempt if recorded is not None else self._attempts.get(uid, 0) + 1
            out[uid] = recorded.decision.seed if recorded is not None else attempt_seed(
                base, f"{pod.metadata.namespace}/{pod.metadata.name}", number)
        return out

    def _count_attempts(self, batch: Batch) -> None:
        for pod in batch.request.pods:
            uid = pod.metadata.uid
            recorded = batch.decisions.get(uid)
            self._attempts[uid] = recorded.decision.attempt if recorded is not None else self._attempts.get(uid, 0) + 1

    def _replay_batch(self, batch: Batch, view: ClusterView,
                      evaluated: tuple[list[Evaluation], list[Evaluation] | None] | None = None,
                      ) -> tuple[int, int, int, bool]:
        profiles = self.profiles_for(self._hash_of(batch))
        seeds = self.seeds(batch)
        evaluations, decided = self.decide(batch, view, profiles, record=self._what_if is not None, seeds=seeds,
                                           evaluations=evaluated[0] if evaluated else None)
        finished = bool(batch.decisions) or all(d.verdict == "retry" for d in decided)
        if not finished:
            return 0, 0, 0, False
        self._count_attempts(batch)
        n = m = 0
        snapshot = view.snapshot()
        for e, d in zip(evaluations, decided):
            recorded = batch.decisions.get(e.info.uid)
            replayed = self._outcome(e, d, recorded)
            expected = outcome_text(recorded.decision.node_name, recorded.decision.message) if recorded else None
            if recorded is None and d.verdict == "fit-error" and self.history.preempting(
                    e.info.uid, batch.decided_watermark):
                self.awaiting_preemption += 1
                continue
            n += 1
            if replayed == expected or (recorded is None and d.verdict == "retry"):
                m += 1
                continue
            recorded_side = verdicts(batch.walks("filter", e.info.uid), snapshot.names)
            score_answers = batch.walks("score", e.info.uid)
            if score_answers:
                recorded_side.raw = verdicts(score_answers, snapshot.names).raw
            plugin, detail = first_difference(recorded_side, verdicts([decode_walk(e.result)], snapshot.names, e.raw),
                                              snapshot,
                                              batch.request.starts[0] if batch.request.starts else 0,
                                              [pl.name for pl in e.fwk.score_plugins] if e.fwk else [])
            if any(a.folded for a in batch.answers):
                detail = (detail + "; " if detail else "") + "a shard evaluated a view other than the watermark's"
            self.divergences.append(self._divergence("decision", batch, e, recorded, expected or "no decision recorded",
                                                     replayed, plugin, detail))
        changed = self._what_if_batch(batch, view, evaluations, decided, seeds,
                                      evaluated[1] if evaluated else None) if self._what_if is not None else 0
        return n, m, changed, True

    def _outcome(self, e: Evaluation, d: Decision, recorded: Recorded | None) -> str:
        if d.verdict == "bind":
            return outcome_text(d.host, None)
        if d.verdict == "fit-error" and d.fit is not None:
            if e.fwk is not None and e.fwk.post_filter_plugins and recorded is not None:
                outcome = self.preempted.get(recorded.attempt_id)
                d.fit.diagnosis.post_filter_msg = outcome.message if outcome is not None else ""
            return d.fit.message()
        if d.verdict == "error":
            return d.error
        return outcome_text(None, None)

    def _what_if_batch(self, batch: Batch, view: ClusterView, base: list[Evaluation],
                       base_decided: list[Decision], seeds: Mapping[str, int],
                       evaluated: list[Evaluation] | None = None) -> int:
        assert self._what_if is not None
        evaluations, decided = self.decide(batch, view, self._what_if, record=True, seeds=seeds,
                                           evaluations=evaluated)
        snapshot = view.snapshot()
        changed = 0
        earlier_changed = False
        for b, bd, e, d in zip(base, base_decided, evaluations, decided):
            recorded = batch.decisions.get(e.info.uid)
            was, now = self._outcome(b, bd, recorded), self._outcome(e, d, recorded)
            if was == now:
                continue
            changed += 1
            plugin, detail = first_difference(verdicts([decode_walk(b.result)], snapshot.names, b.raw),
                                              verdicts([decode_walk(e.result)], snapshot.names, e.raw), snapshot,
                                              batch.request.starts[0] if batch.request.starts else 0,
                                              [pl.name for pl in e.fwk.score_plugins] if e.fwk else [])
            if not plugin and not detail:
                plugin, detail = weighted_difference(bd.scores, d.scores, [h for h in (bd.host, d.host) if h])
            if not plugin and not detail and earlier_changed:
                detail = "pods decided earlier in the cycle were placed differently"
            earlier_changed = True
            self.divergences.append(self._divergence("what-if", batch, e, recorded, was, now, plugin, detail))
        return changed

    def _divergence(self, kind: str, batch: Batch, e: Evaluation, recorded: Recorded | None, was: str, now: str,
                    plugin: str, detail: str) -> Divergence:
        return Divergence(kind=kind, pod=self.history.pod_name(e.info.uid), uid=e.info.uid,
                          attempt=recorded.decision.attempt if recorded else 0, cycle=batch.request.cycle,
                          batch=batch.request.batch_id, recorded=was, replayed=now, plugin=plugin, detail=detail)


def same_preemption(outcome: PreemptionOutcome, decided: PreemptionDecided) -> bool:
    """Whether replay decided a preemption as recorded. Builds before "fits now" nominated the
    pod recorded that answer with no node: the same answer still."""
    nominated = outcome.nominated
    if outcome.fits and outcome.fits == decided.fits and not decided.nominated_node:
        nominated = ""
    return (nominated, [v.uid for v in outcome.victims], outcome.message) == (
        decided.nominated_node, [v.uid for v in decided.victims], decided.message)


def _preemption_text(node: str, victims: list[str], message: str) -> str:
    if node:
        return f"nominated {node}, evicting {', '.join(victims) or 'nothing'}"
    return f"no node: {message}" if message else "no node"
