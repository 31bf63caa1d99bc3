"""When the queue has its batches proposed by the filter workers (BERTH_QUEUE_PROPOSE): never,
always, or (auto) while its own ranking costs more than the threshold a pod, measured on the
batches it ranks and checked again one batch in `PROBE_EVERY`."""

from __future__ import annotations

from services.queue.options import DEFAULT_PROPOSE_ABOVE_MS
from services.queue.proposal_policy import DECIDING_PODS, PROBE_EVERY, WINDOW_PODS, ProposalPolicy
from services.queue.settings import load

SAMPLES = WINDOW_PODS // 32
"""Slices of 32 pods that fill the window."""


def _proposed(policy: ProposalPolicy, batches: int) -> list[bool]:
    return [policy.propose() for _ in range(batches)]


def test_never_and_always_do_not_measure() -> None:
    assert _proposed(ProposalPolicy(), 3) == [False] * 3
    assert _proposed(ProposalPolicy(always=True), 3) == [True] * 3
    assert not ProposalPolicy().measures and not ProposalPolicy(always=True).measures
    assert ProposalPolicy(above_s=0.001).measures


def test_auto_ranks_until_enough_pods_are_measured() -> None:
    policy = ProposalPolicy(above_s=0.001)
    policy.ranked(DECIDING_PODS - 1, 1.0)  # dear, but too few pods to go by
    assert policy.rank_s == 0.0 and not policy.propose()
    policy.ranked(1, 1.0)
    assert policy.rank_s == 1.0 / (DECIDING_PODS - 1) and policy.propose()


def test_auto_proposes_only_while_ranking_is_dear() -> None:
    cheap, dear = ProposalPolicy(above_s=0.001), ProposalPolicy(above_s=0.001)
    for _ in range(SAMPLES):
        cheap.ranked(32, 32 * 0.0005)
        dear.ranked(32, 32 * 0.002)
    assert _proposed(cheap, 4) == [False] * 4
    assert _proposed(dear, 4) == [True] * 4


def test_while_proposing_one_batch_in_probe_every_is_ranked_to_measure_again() -> None:
    policy = ProposalPolicy(above_s=0.001)
    for _ in range(SAMPLES):
        policy.ranked(32, 32 * 0.002)
    decided = _proposed(policy, 2 * PROBE_EVERY)
    assert decided.count(False) == 2 and decided[PROBE_EVERY - 1] is False and decided[-1] is False
    # The probes find the ranking cheap now: a batch's worth of slices turns the policy back.
    for _ in range(SAMPLES // 2 + 1):
        policy.ranked(32, 32 * 0.0005)
    assert _proposed(policy, PROBE_EVERY) == [False] * PROBE_EVERY


def test_a_slow_slice_or_lone_pods_do_not_decide() -> None:
    """The median pod by pod: one slice slowed by something else, or many lone pods (a batch of one
    pays a whole batch's fixed costs), leave the ranking's cost where the full slices put it."""
    policy = ProposalPolicy(above_s=0.001)
    policy.ranked(32, 32 * 0.05)  # the first batch warming the caches
    for _ in range(3):
        policy.ranked(32, 32 * 0.0005)
    for _ in range(4):
        policy.ranked(1, 0.004)
    assert policy.rank_s == 0.0005 and not policy.propose()


def test_the_setting() -> None:
    env: dict[str, str] = {}
    assert load({**env, "BERTH_QUEUE_PROPOSE": "auto"}).options.propose_above_ms == DEFAULT_PROPOSE_ABOVE_MS
    auto = load({**env, "BERTH_QUEUE_PROPOSE": " Auto ", "BERTH_QUEUE_PROPOSE_ABOVE_MS": "0.25"}).options
    assert (auto.propose, auto.propose_above_ms) == (False, 0.25)
    always = load({**env, "BERTH_QUEUE_PROPOSE": "1", "BERTH_QUEUE_PROPOSE_ABOVE_MS": "0.25"}).options
    assert (always.propose, always.propose_above_ms) == (True, None)
    assert load(env).options.propose_above_ms is None


def test_between_half_the_threshold_and_the_threshold_the_policy_keeps_its_way() -> None:
    """A workload whose ranking costs about the threshold does not switch back and forth."""
    ranking, proposing = ProposalPolicy(above_s=0.001), ProposalPolicy(above_s=0.001)
    for _ in range(SAMPLES):
        ranking.ranked(32, 32 * 0.0008)
        proposing.ranked(32, 32 * 0.002)
    assert _proposed(ranking, PROBE_EVERY) == [False] * PROBE_EVERY
    assert proposing.propose() and proposing.proposing
    for _ in range(SAMPLES):
        proposing.ranked(32, 32 * 0.0008)
    assert _proposed(proposing, PROBE_EVERY) == [True] * (PROBE_EVERY - 2) + [False, True]  # one probe


def test_small_batches_decide_once_enough_pods_are_measured() -> None:
    """Batches of a few pods (a large cluster's feasible budget, lockstep) are measured over as
    many slices as hold the window's pods."""
    policy = ProposalPolicy(above_s=0.001)
    for _ in range(DECIDING_PODS // 4):
        policy.ranked(4, 4 * 0.002)
    assert policy.propose()
    for _ in range(WINDOW_PODS):
        policy.ranked(1, 0.0004)
    assert policy.rank_s == 0.0004 and not policy.propose()
