"""The export format of the event log: one JSON object a line, an event where it sits in the log.

`berth events --export` and `berth bench --record` write it, `berth replay --source FILE` and the
gateway's debugging endpoints read or serve it: {"topic", "partition", "offset", "event"}, or
"error" in place of the event for a message that did not decode.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shared.events import Position, ReceivedEvent, decode_json, encode_json


class _ExportLine(msgspec.Struct, omit_defaults=True):
    topic: str
    partition: int
    offset: int
    event: msgspec.Raw = msgspec.Raw(b"null")
    error: str | None = None


_export_line = msgspec.json.Decoder(_ExportLine)


def export_record(event: ReceivedEvent) -> dict[str, Any]:
    """An event where it sits in the log, as JSON builtins."""
    p = event.position
    return {"topic": p.topic, "partition": p.partition, "offset": p.offset,
            "event": msgspec.json.decode(encode_json(event.envelope))}


def export_line(event: ReceivedEvent) -> str:
    p = event.position
    return msgspec.json.encode(_ExportLine(p.topic, p.partition, p.offset, msgspec.Raw(encode_json(event.envelope)))
                               ).decode()


def parse_export_line(line: bytes) -> ReceivedEvent | None:
    """One line's event, decoded once straight from its bytes; None for a line that records a
    message that did not decode. Raises `msgspec.DecodeError`, `msgspec.ValidationError` or
    `shared.errors.DecodeError` for a line that is not an exported event."""
    record = _export_line.decode(line)
    if record.error is not None:
        return None
    position = Position(record.topic, record.partition, record.offset)
    return ReceivedEvent(decode_json(record.event, topic=position.topic), position)
