"""A service starts only on a broker that holds Berth's topic plan.

With a topic missing, a consumer waits forever for events published to it; with too few
partitions (a broker's auto-created default), requests sent to a partition that does not exist
fail every cycle while the service reports healthy. Either way nothing is scheduled and nothing
says why, so each service checks the plan first and exits with the reason and the remedy.
"""

from __future__ import annotations

import logging

from shared.adapters.kafka import check_topics
from shared.errors import ConfigurationError
from shared.settings import Settings

log = logging.getLogger(__name__)
EXIT_MISCONFIGURED = 2


async def require_topics(settings: Settings) -> None:
    """Return when every topic of the plan exists with its partition count; else log why and exit 2.
    A broker that cannot be reached is not a wrong plan: that error propagates as it is (retriable)."""
    try:
        await check_topics(settings)
    except ConfigurationError as exc:
        log.critical("%s: cannot start: %s", settings.service_name, exc)
        raise SystemExit(EXIT_MISCONFIGURED) from None
