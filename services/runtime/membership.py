"""A service's consumer group membership, kept across its own restarts (`Settings.member_file`).

A member killed without leaving stays in its group until its session expires; on Tansu a member
that joins meanwhile waits for the dead one (still the group's leader) to hand out partitions,
then rejoins: about 13 s without a worker after a SIGKILL, measured with `berth chaos`. A service
restarted under the same member file takes its predecessor out of the group first.
"""

from __future__ import annotations

import logging
import os

from shared.adapters.kafka.clients import leave_group
from shared.settings import Settings

log = logging.getLogger(__name__)


async def evict_predecessor(settings: Settings, group: str) -> None:
    """Take the member recorded for `group` (physical name) out of it, if one is recorded."""
    path = settings.member_file
    if path is None or not path.exists():
        return
    recorded_group, _, member_id = path.read_text().strip().partition(" ")
    path.unlink(missing_ok=True)
    if recorded_group != group or not member_id or not settings.kafka_bootstrap_servers:
        return
    if await leave_group(settings.kafka_bootstrap_servers, group, member_id):
        log.info("%s: took the previous member %s out of %s", settings.service_name, member_id, group)


def remember_member(settings: Settings, group: str, member_id: str | None) -> None:
    path = settings.member_file
    if path is None or member_id is None:
        return
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"{group} {member_id}\n")
    os.replace(partial, path)


def forget_member(settings: Settings) -> None:
    """The member left its group on its own (a clean stop): nothing to take out next time."""
    if settings.member_file is not None:
        settings.member_file.unlink(missing_ok=True)
