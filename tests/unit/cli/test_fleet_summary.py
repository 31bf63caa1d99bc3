"""What `berth up` says it starts, before it waits for the services."""

from __future__ import annotations

from pathlib import Path

from berth.fleet import Fleet, planned_labels
from berth.services import SERVICES, UpOptions


def test_the_summary_counts_every_process_and_names_replicas(tmp_path: Path) -> None:
    fleet = Fleet({}, tmp_path / "logs", UpOptions(filter_workers=2, queues=2))
    summary = fleet.planned_summary()
    processes = sum(spec.replicas(fleet.options) for spec in SERVICES)
    assert summary.startswith(f"{processes} processes: ")
    assert "filter ×2" in summary and "queue ×2" in summary and "gateway" in summary
    assert fleet.members == {}, "nothing is started"


def test_one_of_each_is_named_without_a_count(tmp_path: Path) -> None:
    summary = Fleet({}, tmp_path / "logs", UpOptions(filter_workers=1, queues=1)).planned_summary()
    assert "×" not in summary and "filter" in summary and "queue" in summary


def test_the_planned_labels_are_those_of_the_processes_started() -> None:
    labels = planned_labels(UpOptions(filter_workers=3, queues=1))
    assert [x for x in labels if x.startswith("filter")] == ["filter", "filter-1", "filter-2"]
    assert labels.count("queue") == 1 and "gateway" in labels and len(labels) == len(set(labels))
