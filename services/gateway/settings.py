"""Gateway settings: the shared settings plus the API token and request limits."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from shared.errors import ConfigurationError
from shared.settings import Settings, load_service_settings

SERVICE = "gateway"
MAX_BODY_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    base: Settings
    api_token: str
    """Bearer token every mutating request must carry (BERTH_API_TOKEN)."""
    max_body_bytes: int = MAX_BODY_BYTES
    """Largest request body accepted: `berth apply` sends whole files (BERTH_GATEWAY_MAX_BODY_BYTES)."""
    publish_batch: int = 2000
    """Events per publish call when an apply is large: bounds the producer's buffered memory."""


def load(env: Mapping[str, str] | None = None) -> GatewaySettings:
    env = os.environ if env is None else env
    base = load_service_settings(SERVICE, env)
    token = env.get("BERTH_API_TOKEN", "").strip()
    if not token:
        raise ConfigurationError("BERTH_API_TOKEN must be set: the gateway refuses writes without a token")
    raw = env.get("BERTH_GATEWAY_MAX_BODY_BYTES", "").strip()
    try:
        max_body = int(raw) if raw else MAX_BODY_BYTES
    except ValueError:
        raise ConfigurationError(f"BERTH_GATEWAY_MAX_BODY_BYTES={raw!r}: expected an integer") from None
    return GatewaySettings(base=base, api_token=token, max_body_bytes=max_body)
