"""berth chaos's pure parts: the seeded fault plan and the fault matrix."""

from __future__ import annotations

from berth.chaos.matrix import FaultRecord, longest_stall, markdown_table, rate, text_table
from berth.chaos.plan import TARGETS, fault_plan, members_of
from berth.chaos.run import ChaosOptions
from berth.chaos_cmd import _targets, _title
from berth.services import up_options


def test_the_plan_is_seeded_hits_every_target_once_first_and_keeps_its_spacing() -> None:
    plan = fault_plan(7, TARGETS, 10, 60.0, spacing_s=4.0)
    assert plan == fault_plan(7, TARGETS, 10, 60.0, spacing_s=4.0)
    assert plan != fault_plan(8, TARGETS, 10, 60.0, spacing_s=4.0)
    assert sorted(f.target for f in plan[:len(TARGETS)]) == sorted(TARGETS)
    times = [f.at_s for f in plan]
    assert all(b - a >= 4.0 - 1e-9 for a, b in zip(times, times[1:]))
    assert 2.0 <= times[0] and times[-1] <= 2.0 + 60.0


def test_every_queue_and_filter_worker_is_a_target_of_its_kind() -> None:
    running = ["tansu", "postgres", "gateway", "queue-1", "queue", "filter-10", "filter", "filter-2", "filter-1",
               "binder", "queue-extra", "projector", "preemption"]
    assert members_of(TARGETS, running) == (
        "queue", "queue-1", "filter", "filter-1", "filter-2", "filter-10", "binder", "projector", "preemption",
        "gateway", "tansu", "postgres")
    assert members_of(("queue", "tansu"), running) == ("queue", "queue-1", "tansu")
    assert members_of(("binder",), ["tansu"]) == ()
    # Each of them is hit once before any is hit twice.
    victims = members_of(("queue", "filter"), ["queue", "queue-1", "queue-2", "filter", "filter-1"])
    plan = fault_plan(5, victims, 7, 60.0)
    assert sorted(f.target for f in plan[:5]) == sorted(victims)


def test_a_kind_named_twice_is_targeted_once() -> None:
    assert _targets("queue, filter,queue") == ("queue", "filter")
    victims = members_of(_targets("queue,queue"), ["queue", "queue-1"])
    assert victims == ("queue", "queue-1")
    assert sorted(f.target for f in fault_plan(3, victims, 2, 60.0)) == ["queue", "queue-1"]


def test_a_window_too_short_for_the_spacing_still_spaces_the_faults() -> None:
    plan = fault_plan(0, ("queue", "tansu"), 3, 1.0, spacing_s=5.0, lead_s=1.0)
    assert [f.at_s for f in plan] == [1.0, 6.0, 11.0]
    assert fault_plan(0, TARGETS, 0, 10.0) == []


def test_rates_come_from_the_bound_count_samples() -> None:
    samples = [(0.0, 0, 900), (1.0, 100, 900), (2.0, 300, 900), (3.0, 300, 900), (4.0, 700, 900)]
    assert rate(samples, 1.0, 2.0) == 200.0
    assert rate(samples, 2.0, 3.0) == 0.0
    assert rate(samples, 0.5, 4.0) == (700 - 0) / 3.5
    assert rate(samples, 3.0, 3.0) == 0.0


def test_a_stall_counts_only_while_pods_wait() -> None:
    # Bound 100 of 300 at the kill (t=1), nothing until t=4, then steady; all bound at t=6.
    samples = [(0.0, 50, 300), (1.0, 100, 300), (2.0, 100, 300), (3.0, 100, 300), (4.0, 150, 300),
               (5.0, 250, 300), (6.0, 300, 300), (7.0, 300, 300), (9.0, 300, 300)]
    assert longest_stall(samples, 1.0, 9.0) == (3.0, 4.0)
    # Nothing waits after t=6: the quiet end is idle, not a stall.
    assert longest_stall(samples, 6.0, 9.0) == (0.0, 6.0)
    # A stall still running when the next fault came is followed until binding resumed.
    assert longest_stall(samples, 1.0, 2.5) == (3.0, 4.0)
    # Pods wait and none is bound to the end: binding never resumed.
    stuck = [(0.0, 10, 20), (1.0, 10, 20), (2.0, 10, 20)]
    assert longest_stall(stuck, 0.0, 2.0) == (2.0, None)


def test_the_matrix_says_never_when_nothing_came_back() -> None:
    records = [FaultRecord("queue", 3.25, 2.0, 2.5, 480.0, 1200.4),
               FaultRecord("tansu", 9.0, None, None, 500.0, None)]
    text = text_table(records)
    assert text.splitlines()[1].split() == ["queue", "3.2", "2.0", "2.5", "480", "1,200"]
    assert text.splitlines()[2].split() == ["tansu", "9.0", "never", "never", "500", "-"]
    md = markdown_table(records)
    assert md.splitlines()[0].startswith("| killed | at (s) |") and md.count("\n") == 3


def test_the_title_counts_the_faults_a_run_will_make() -> None:
    assert "8 faults (one per targeted process)" in _title(ChaosOptions(), up_options(1, {}))
    shared = up_options(2, {"BERTH_QUEUE_PARTITIONS": "2"})
    title = _title(ChaosOptions(filter_workers=2, targets=("queue", "filter")), shared)
    assert "4 faults (one per targeted process)" in title and "2 filter worker(s), 2 queue(s)" in title
    assert "3 faults (seed" in _title(ChaosOptions(faults=3), up_options(1, {}))
