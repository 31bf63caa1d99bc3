"""The KubeSchedulerConfiguration the scheduling services run with (BERTH_SCHEDULER_CONFIG: a YAML
or JSON file; unset: upstream's defaults), and the profiles built from it."""

from __future__ import annotations

import os
from collections.abc import Mapping

from shared.framework.profile import build_profiles
from shared.framework.runtime import Framework
from shared.model.config import KubeSchedulerConfiguration
from shared.model.loader import load_files


def load_scheduler_config(env: Mapping[str, str] | None = None) -> KubeSchedulerConfiguration | None:
    env = os.environ if env is None else env
    path = env.get("BERTH_SCHEDULER_CONFIG", "").strip()
    return load_files([path]).config if path else None


def profiles_from(config: KubeSchedulerConfiguration | None) -> dict[str, Framework]:
    return build_profiles(config)
