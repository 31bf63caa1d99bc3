"""`berth migrate`: make a broker and a database ready for Berth's services, idempotently.

Runs the Alembic migrations up to head on DATABASE_URL and creates every topic of the topic plan
on KAFKA_BOOTSTRAP_SERVERS with its partition count; a topic that exists with another count is
an error (re-partitioning would move node-keyed events between shards). Compose runs it once
before the services (its `migrate` service); the services refuse to start without the topics.
While the broker or the database is not up yet it retries, up to `--timeout` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from .client import EXIT_ERROR, CliError, run_guarded

RETRY_S = 1.0


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "migrate", help="create the topics and migrate the database (compose's init step)",
        description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="keep retrying while the broker or the database is unreachable, up to S seconds")
    p.add_argument("--skip-database", action="store_true", help="topics only")
    p.add_argument("--skip-topics", action="store_true", help="database only")
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    from shared.adapters.postgres.engine import make_url_safe
    from shared.errors import ConfigurationError, is_retriable
    from shared.settings import load_settings

    settings = load_settings()
    try:
        bootstrap, database_url = settings.require_endpoints()
    except ConfigurationError as exc:
        raise CliError(str(exc), 2) from None
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            created = asyncio.run(_migrate(settings, database_url, args))
            break
        except Exception as exc:  # noqa: BLE001 (classified just below)
            if not is_retriable(exc) or time.monotonic() + RETRY_S > deadline:
                raise CliError(f"migrate: {exc}", EXIT_ERROR) from None
            print(f"berth migrate: {exc}; retrying", file=sys.stderr, flush=True)
            time.sleep(RETRY_S)
    if not args.skip_database:
        print(f"database at head ({make_url_safe(database_url)})")
    if not args.skip_topics:
        print(f"topics ready on {bootstrap}: {len(created)} created" + (f" ({', '.join(created)})" if created else ""))
    return 0


async def _migrate(settings: Any, database_url: str, args: argparse.Namespace) -> list[str]:
    from shared.adapters.kafka import ensure_topics
    from shared.adapters.postgres.migrate import upgrade

    if not args.skip_database:
        await upgrade(database_url)
    return [] if args.skip_topics else await ensure_topics(settings)

