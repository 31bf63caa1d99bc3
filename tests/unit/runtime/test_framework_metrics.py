"""The framework metrics a scheduling service exposes, timed around a real scheduling attempt."""

from __future__ import annotations

import contextlib
import random

from prometheus_client import CollectorRegistry

from services.runtime.framework_metrics import PLUGIN_SAMPLE_EVERY, is_timed
from services.runtime.scheduler_config import profiles_from
from shared.framework.cycle_state import CycleState
from shared.framework.snapshot import Snapshot
from shared.scheduler.fit_error import FitError
from shared.scheduler.schedule_one import ScheduleAlgorithm
from tests.builders import MakeNode, MakePod

PROFILE = "default-scheduler"


def _schedule(registry: CollectorRegistry, pods: int, cpu: str = "1") -> None:
    fwk = profiles_from(None, registry)[PROFILE]
    snapshot = Snapshot([MakeNode().name(f"n{i}").capacity(cpu="2", pods=10).info() for i in range(3)])
    fwk.set_snapshot(snapshot)
    for i in range(pods):
        with contextlib.suppress(FitError):
            ScheduleAlgorithm(random.Random(0)).schedule_pod(
                fwk, CycleState(), MakePod().name(f"p{i}").uid(f"u{i}").req(cpu=cpu).info(), snapshot)


def _value(registry: CollectorRegistry, name: str, labels: dict[str, str]) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_every_extension_point_run_is_observed_with_its_status_and_profile() -> None:
    registry = CollectorRegistry()
    _schedule(registry, pods=3)
    count = "scheduler_framework_extension_point_duration_seconds_count"
    assert _value(registry, count, {"extension_point": "PreFilter", "status": "Success", "profile": PROFILE}) == 3
    assert _value(registry, count, {"extension_point": "PreScore", "status": "Success", "profile": PROFILE}) == 3
    assert _value(registry, count, {"extension_point": "Score", "status": "Success", "profile": PROFILE}) == 3


def test_a_pod_that_fits_nowhere_is_observed_at_prefilter_and_never_scored() -> None:
    registry = CollectorRegistry()
    _schedule(registry, pods=1, cpu="64")  # PreFilter passes; every node fails Filter, nothing is scored
    count = "scheduler_framework_extension_point_duration_seconds_count"
    assert _value(registry, count, {"extension_point": "PreFilter", "status": "Success", "profile": PROFILE}) == 1
    assert _value(registry, count, {"extension_point": "Score", "status": "Success", "profile": PROFILE}) == 0


def test_plugins_are_timed_one_run_in_ten() -> None:
    registry = CollectorRegistry()
    _schedule(registry, pods=2 * PLUGIN_SAMPLE_EVERY)
    count = "scheduler_plugin_execution_duration_seconds_count"
    timed = _value(registry, count, {"plugin": "NodeResourcesFit", "extension_point": "PreFilter", "status": "Success"})
    assert timed == 2


def test_profiles_built_without_a_registry_are_not_wrapped() -> None:
    fwk = profiles_from(None)[PROFILE]
    assert not is_timed(fwk.run_pre_filter_plugins)
