"""Kafka through aiokafka: clients from settings, topic creation, the publisher."""

from .admin import check_topics, ensure_topics
from .clients import make_admin, make_consumer, make_producer, stop_consumer
from .publisher import KafkaPublisher
from .reader import read_topic

__all__ = [
    "KafkaPublisher",
    "check_topics",
    "ensure_topics",
    "make_admin",
    "make_consumer",
    "make_producer",
    "read_topic",
    "stop_consumer",
]
