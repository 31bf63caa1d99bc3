"""Per-attempt seeds: every scheduling attempt draws its tie-breaks (and preemption's candidate
offset) from a seed derived from the run's base seed, the pod and the attempt number. The seed is
recorded in the attempt's decision event, and the in-process simulator derives it the same way, so a
distributed run, a replay and `berth simulate` break ties alike."""

from __future__ import annotations

import hashlib

import msgspec

from shared.model.config import KubeSchedulerConfiguration


def attempt_seed(base: int, pod_key: str, attempt: int) -> int:
    digest = hashlib.blake2b(f"{base}/{pod_key}/{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def config_hash(config: KubeSchedulerConfiguration | None) -> str:
    """Names a configuration in each decision it made (replay looks it up in SchedulerStarted)."""
    return hashlib.sha256(msgspec.json.encode(config)).hexdigest()[:16]
