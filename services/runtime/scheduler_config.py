"""The KubeSchedulerConfiguration the scheduling services run with (BERTH_SCHEDULER_CONFIG: a YAML
or JSON file; unset: upstream's defaults), and the profiles built from it."""

from __future__ import annotations

import os
from collections.abc import Mapping

from prometheus_client import CollectorRegistry

from shared.adapters.input_files import load_files
from shared.framework.runtime import Framework
from shared.model.config import KubeSchedulerConfiguration
from shared.profiles import build_profiles

from .framework_metrics import FrameworkMetrics, instrument


def load_scheduler_config(env: Mapping[str, str] | None = None) -> KubeSchedulerConfiguration | None:
    env = os.environ if env is None else env
    path = env.get("BERTH_SCHEDULER_CONFIG", "").strip()
    return load_files([path]).config if path else None


def profiles_from(config: KubeSchedulerConfiguration | None,
                  metrics: CollectorRegistry | None = None) -> dict[str, Framework]:
    """The profiles; with `metrics`, their extension points and plugins timed into that registry."""
    profiles = build_profiles(config)
    if metrics is not None:
        instrument(profiles.values(), FrameworkMetrics(metrics))
    return profiles
