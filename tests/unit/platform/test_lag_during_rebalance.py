"""The runtime's lag gauge while a rebalance revokes partitions under it: the consume loop awaits
(a handler, a consumer position) between listing its partitions and reading their ends, and the
client asserts on a partition it no longer holds. A worker must not die of that."""

from __future__ import annotations

from typing import Any

from aiokafka import TopicPartition

from services.runtime import Handler, Service, ServiceConfig
from shared.events import NODES, TopicRegistry
from shared.settings import load_settings

REGISTRY = TopicRegistry()
TPS = [TopicPartition(REGISTRY.physical(NODES), p) for p in range(4)]


class RevokingConsumer:
    """Holds partitions 0–3 until the first position is asked for; a rebalance then takes 1–3."""

    def __init__(self) -> None:
        self.held = set(TPS)

    def assignment(self) -> list[TopicPartition]:
        # In partition order: a set's order changes with the interpreter's string hashing, and the
        # test needs partition 0 asked first.
        return [tp for tp in TPS if tp in self.held]

    def highwater(self, tp: TopicPartition) -> int:
        assert tp in self.held, "Partition is not assigned"  # as aiokafka's client does
        return 10

    async def position(self, tp: TopicPartition) -> int:
        self.held = {TPS[0]}
        return 4


def _service() -> Service:
    config = ServiceConfig(name="filter", group_id="g", topics=[NODES], serve_http=False, lag_interval_s=0.0)
    return Service(load_settings({}), config, Handler(), registry=REGISTRY)


def _lag(service: Service, partition: int) -> float | None:
    return service.metrics.registry.get_sample_value(
        "berth_consumer_lag", {"service": "filter", "topic": NODES, "partition": str(partition)})


async def test_partitions_revoked_while_the_lag_is_read_are_skipped() -> None:
    service, consumer = _service(), RevokingConsumer()
    await service.lag.update(consumer)
    assert _lag(service, 0) == 6 and _lag(service, 2) is None


def test_a_batch_whose_partition_was_revoked_meanwhile_sets_no_lag() -> None:
    service, consumer = _service(), RevokingConsumer()
    consumer.held = {TPS[0]}
    records: dict[TopicPartition, list[Any]] = {TPS[0]: [type("R", (), {"offset": 7})()],
                                                TPS[2]: [type("R", (), {"offset": 3})()]}
    service.lag.after_batch(consumer, records)
    assert _lag(service, 0) == 2 and _lag(service, 2) is None
