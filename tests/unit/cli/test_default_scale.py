"""The filter workers and queues `berth up`, `demo` and `bench` start when nobody says, and whether
the workers propose."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.client import CliError
from berth.machine import usable_cores
from berth.services import (
    SERVICES,
    UpOptions,
    default_filter_workers,
    default_propose,
    default_queues,
    most_queues,
    pipeline_most,
    queues_problem,
    up_options,
    workers_most,
)


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 1), (4, 1), (7, 1), (8, 2), (12, 3), (16, 4), (64, 4)])
def test_one_worker_per_four_cores_from_one_to_four(cores: int, workers: int) -> None:
    assert default_filter_workers(cores) == workers


def test_the_default_is_the_machines() -> None:
    assert up_options(None, {}).filter_workers == default_filter_workers()


@pytest.mark.parametrize(("workers", "cores", "propose"), [
    (1, 2, "0"), (1, 16, "0"), (2, 2, "auto"), (8, 3, "auto"), (2, 4, "1"), (8, 16, "1"),
])
def test_more_workers_than_one_propose_on_a_machine_of_few_cores_while_ranking_is_dear(
        workers: int, cores: int, propose: str) -> None:
    assert default_propose(workers, cores) == propose


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_up_proposes_as_the_machine_wants(workers: int) -> None:
    assert up_options(workers, {}) == UpOptions(filter_workers=workers, propose=default_propose(workers),
                                                pipeline_most=pipeline_most(), workers_most=workers_most())


@pytest.mark.parametrize("said", ["0", "1", " 1 ", "auto"])
def test_the_environment_decides_where_it_says(said: str) -> None:
    options = up_options(4, {"BERTH_QUEUE_PROPOSE": said, "BERTH_QUEUE_PIPELINE_MOST": said,
                             "BERTH_QUEUE_WORKERS_MOST": said})
    assert options.propose is None
    assert options.pipeline_most is None
    assert options.workers_most is None
    # The queue reads those variables itself; how many queues run is the fleet's to say.
    assert _queue_env(options) == {"BERTH_QUEUE_PARTITIONS": str(options.queues)}


@pytest.mark.parametrize(("cores", "most"), [(1, 1), (2, 1), (3, 2), (4, 3), (16, 15)])
def test_at_most_one_worker_busy_per_core_beside_the_queues_and_never_none(cores: int, most: int) -> None:
    assert workers_most(cores) == most


@pytest.mark.parametrize(("cores", "most"), [(1, 2), (2, 2), (3, 2), (4, 3), (16, 15)])
def test_at_most_one_batch_out_per_core_beside_the_queues_and_never_fewer_than_two(cores: int, most: int) -> None:
    assert pipeline_most(cores) == most


def test_an_empty_variable_is_no_say() -> None:
    assert up_options(4, {"BERTH_QUEUE_PROPOSE": " "}).propose == default_propose(4)


@pytest.mark.parametrize(("cpu_max", "cores"), [("max 100000\n", None), ("200000 100000\n", 2),
                                                 ("50000 100000\n", 1), ("garbage", None)])
def test_a_cgroup_quota_caps_the_cores(cpu_max: str, cores: int | None, tmp_path: Path) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max)
    unlimited = usable_cores(tmp_path / "missing")
    assert usable_cores(path) == (unlimited if cores is None else min(cores, unlimited))


def test_the_queue_is_told_what_was_chosen() -> None:
    one = {"BERTH_QUEUE_PARTITIONS": "1"}
    for said in ("0", "1", "auto"):
        assert _queue_env(UpOptions(filter_workers=2, propose=said)) == {"BERTH_QUEUE_PROPOSE": said, **one}
    assert _queue_env(UpOptions(filter_workers=4, pipeline_most=3)) == {"BERTH_QUEUE_PIPELINE_MOST": "3", **one}
    assert _queue_env(UpOptions(filter_workers=4, workers_most=1)) == {"BERTH_QUEUE_WORKERS_MOST": "1", **one}
    assert _queue_env(UpOptions(filter_workers=4, queues=3)) == {"BERTH_QUEUE_PARTITIONS": "3"}
    filter_spec = next(s for s in SERVICES if s.name == "filter")
    assert filter_spec.replicas(UpOptions(filter_workers=3)) == 3


def _queue_env(options: UpOptions) -> dict[str, str]:
    return next(s for s in SERVICES if s.name == "queue").env(options)


@pytest.mark.parametrize(("workers", "cores", "queues"), [
    (1, 2, 1), (2, 2, 1), (8, 3, 1), (1, 16, 1), (2, 8, 2), (3, 12, 1), (4, 16, 4), (6, 16, 4), (8, 16, 4),
])
def test_one_queue_per_worker_up_to_four_where_cores_are_not_shared(workers: int, cores: int, queues: int) -> None:
    assert default_queues(workers, cores) == queues


def test_queues_run_as_many_as_chosen_each_told_its_index() -> None:
    spec = next(s for s in SERVICES if s.name == "queue")
    assert spec.replicas(UpOptions(filter_workers=4, queues=3)) == 3
    assert spec.index_env == "BERTH_QUEUE_PARTITION"
    assert up_options(4, {}, queues=2).queues == 2
    assert up_options(4, {"BERTH_QUEUE_PARTITIONS": "3"}).queues == 3
    assert up_options(1, {}).queues == default_queues(1)


@pytest.mark.parametrize(("queues", "workers", "says"), [
    (1, 1, ""), (4, 8, ""), (2, 1, "at least as many filter workers"), (5, 8, "between 1 and 4"),
    (3, 3, "whole filter workers"), (2, 3, "whole filter workers"), (3, 4, "whole filter workers"),
])
def test_queues_need_a_worker_each_and_a_partition_each(queues: int, workers: int, says: str) -> None:
    problem = queues_problem(queues, workers)
    assert (says in problem) if says else problem == ""


@pytest.mark.parametrize(("at_most", "workers", "queues"), [
    (4, 1, 1), (4, 2, 2), (4, 3, 1), (3, 4, 2), (4, 8, 4), (4, 0, 1),
])
def test_a_sweep_runs_the_most_queues_that_have_whole_workers(at_most: int, workers: int, queues: int) -> None:
    assert most_queues(at_most, workers) == queues


@pytest.mark.parametrize("said", ["two", "0", "-1", "²"])
def test_a_queue_count_from_the_environment_must_be_a_whole_number(said: str) -> None:
    with pytest.raises(CliError, match="BERTH_QUEUE_PARTITIONS"):
        up_options(4, {"BERTH_QUEUE_PARTITIONS": said})
