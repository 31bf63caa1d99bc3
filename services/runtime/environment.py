"""What every service's settings start from: the environment, the shared settings named after the
service, and its consumer group."""

from __future__ import annotations

import os
from collections.abc import Mapping

from shared.settings import Settings, env_str, load_service_settings


def service_environment(service: str, env: Mapping[str, str] | None = None) -> tuple[Mapping[str, str], Settings]:
    """The environment to read (the process's unless given) and the service's shared settings."""
    env = os.environ if env is None else env
    return env, load_service_settings(service, env)


def default_group(service: str) -> str:
    return f"berth-{service}"


def group_id(service: str, env: Mapping[str, str]) -> str:
    """The service's consumer group: BERTH_<SERVICE>_GROUP, else berth-<service>."""
    return env_str(env, f"BERTH_{service.upper()}_GROUP", default_group(service))
