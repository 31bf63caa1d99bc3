"""A binder's shard rebuild reads each partition to the end its fetches report; a record written to
a partition after its end was reached is left to the live consumer, not an error."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import TopicPartition

from services.binder import app
from shared.events import BINDS, BindRequested, TopicRegistry, encode, envelope
from shared.settings import load_service_settings
from tests.unit.events.samples import make_pod

REGISTRY = TopicRegistry()


def _record(name: str) -> bytes:
    bind = BindRequested(pod_uid=f"uid-{name}", pod=make_pod(name, f"uid-{name}"), node_name="node-0",
                         attempt_id=f"uid-{name}/1", seed=0)
    return encode(envelope(bind, producer="t"))


class ScriptedConsumer:
    """Partitions 0 and 1 of `binds`: each fetch hands out one step of `steps` (partition → records)
    and moves that partition's high watermark to what it has handed out."""

    def __init__(self, steps: list[dict[int, list[bytes]]], ends: dict[int, int]) -> None:
        self.steps, self.high = steps, dict(ends)
        self.next: dict[int, int] = {0: 0, 1: 0}

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def assign(self, tps: list[TopicPartition]) -> None:
        pass

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.next[tp.partition] = offset

    def highwater(self, tp: TopicPartition) -> int:
        return self.high[tp.partition]

    async def position(self, tp: TopicPartition) -> int:
        return self.next[tp.partition]

    async def getmany(self, timeout_ms: int = 0) -> dict[TopicPartition, list[Any]]:
        out: dict[TopicPartition, list[Any]] = {}
        for partition, values in (self.steps.pop(0) if self.steps else {}).items():
            first = self.next[partition]
            out[TopicPartition(REGISTRY.physical(BINDS), partition)] = [
                SimpleNamespace(offset=first + i, value=v) for i, v in enumerate(values)]
            self.next[partition] = first + len(values)
            self.high[partition] = max(self.high[partition], self.next[partition])
        return out


async def test_a_record_after_a_partitions_end_is_left_to_the_live_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    consumer = ScriptedConsumer([{0: [_record("a")]}, {0: [_record("late")], 1: [_record("b"), _record("c")]}],
                                ends={0: 1, 1: 2})
    monkeypatch.setattr(app, "make_consumer", lambda *args, **kwargs: consumer)
    log = app.KafkaShardLog(load_service_settings("binder", {}), REGISTRY)
    found = await log.read(BINDS, [0, 1])
    payloads = {p: [e.payload for e in events] for p, (events, _) in found.items()}
    assert all(isinstance(b, BindRequested) for bs in payloads.values() for b in bs)
    uids = {p: [b.pod_uid for b in bs if isinstance(b, BindRequested)] for p, bs in payloads.items()}
    assert uids == {0: ["uid-a"], 1: ["uid-b", "uid-c"]}
    assert {p: end for p, (_, end) in found.items()} == {0: 1, 1: 2}


async def test_a_read_from_an_offset_starts_there(monkeypatch: pytest.MonkeyPatch) -> None:
    consumer = ScriptedConsumer([{0: [_record("c")]}], ends={0: 3, 1: 0})
    monkeypatch.setattr(app, "make_consumer", lambda *args, **kwargs: consumer)
    log = app.KafkaShardLog(load_service_settings("binder", {}), REGISTRY)
    found = await log.read(BINDS, [0], 2)
    events, end = found[0]
    assert [e.payload.pod_uid for e in events if isinstance(e.payload, BindRequested)] == ["uid-c"]
    assert end == 3 and consumer.next[0] == 3
