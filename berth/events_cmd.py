"""`berth events [TOPIC] [--pod NAME] [--follow] [--export FILE]`: any topic as readable JSON.

`--pod` keeps the events that concern one pod (`pod_mentions`): its submission, attempts, binds,
nominations, evictions and the filter batches it was in, topic by topic.

Reads straight from Kafka (no consumer group, nothing committed), so it needs the broker address:
from berth.json, or KAFKA_BOOTSTRAP_SERVERS (and BERTH_TOPIC_PREFIX) with BERTH_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
from typing import Any, TextIO

from shared.errors import DecodeError
from shared.events import PODS, TOPICS, Envelope, Position, ReceivedEvent, TopicRegistry, render_json
from shared.replay.export_format import export_line
from shared.settings import load_settings

from .client import EXIT_INVALID_INPUT, CliError, add_cluster_args, find_cluster, run_guarded
from .pod_mentions import PodMentions, parse_pod

TOPIC_NAMES = [spec.name for spec in TOPICS]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("events", help="print a topic's events as JSON")
    p.add_argument("topic", nargs="?", help=f"one of {', '.join(TOPIC_NAMES)} (default: all)")
    p.add_argument("--follow", "-f", action="store_true", help="keep printing new events until Ctrl-C")
    p.add_argument("--export", metavar="FILE", help="write JSON Lines (one event per line) to FILE instead")
    p.add_argument("--pod", metavar="NAME", help="only the events that concern this pod (NAME or NAMESPACE/NAME)")
    p.add_argument("-n", "--namespace", help="the pod's namespace (default: default)")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    if args.topic and args.topic not in TOPIC_NAMES:
        raise CliError(f"unknown topic {args.topic!r}; known: {', '.join(TOPIC_NAMES)}", EXIT_INVALID_INPUT)
    if args.pod and args.export:
        raise CliError("--pod with --export: a log of one pod's events would read as a whole log to "
                       "`berth replay --source`; export the whole log and replay it", EXIT_INVALID_INPUT)
    if args.namespace and not args.pod:
        raise CliError("-n names the namespace of --pod's pod: give --pod too", EXIT_INVALID_INPUT)
    pod = PodMentions(*parse_pod(args.pod, args.namespace)) if args.pod else None
    info = find_cluster(args)
    if not info.kafka_bootstrap_servers:
        raise CliError("the broker address is unknown: set KAFKA_BOOTSTRAP_SERVERS")
    settings = load_settings({}, kafka_bootstrap_servers=info.kafka_bootstrap_servers,
                             topic_prefix=info.topic_prefix, service_name="berth-events")
    topics = [args.topic] if args.topic else TOPIC_NAMES
    out: TextIO = open(args.export, "w") if args.export else sys.stdout
    try:
        count = asyncio.run(_dump(settings, topics, follow=args.follow, out=out, lines=bool(args.export), pod=pod))
    except KeyboardInterrupt:
        return 0
    finally:
        if args.export:
            out.close()
    if args.export:
        print(f"{count} events written to {args.export}", file=sys.stderr)
    elif pod is not None and not count:
        print(f"No events concern pod {pod.namespace}/{pod.name}.", file=sys.stderr)
    return 0


async def _dump(settings: Any, topics: list[str], *, follow: bool, out: TextIO, lines: bool,
                pod: PodMentions | None = None) -> int:
    from shared.adapters.kafka import read_topic

    registry = TopicRegistry(settings.topic_prefix)
    count = 0
    if pod is not None:  # its uid first: a topic read before the pods topic names the pod by uid alone
        async for _, decoded, _ in read_topic(settings, PODS, registry=registry):
            if not isinstance(decoded, DecodeError):
                pod.learn(decoded)

    async def one(topic: str) -> None:
        nonlocal count
        async for position, decoded, raw in read_topic(settings, topic, registry=registry, follow=follow):
            if pod is not None and (isinstance(decoded, DecodeError) or not pod.concerns(decoded)):
                continue
            out.write(_render(position, decoded, raw, compact=lines) + "\n")
            out.flush()
            count += 1

    if follow:
        await asyncio.gather(*(one(t) for t in topics))
    else:
        for topic in topics:  # one topic after the other: the output stays grouped
            await one(topic)
    return count


def _render(position: Position, decoded: Envelope | DecodeError, raw: bytes, *, compact: bool) -> str:
    where = {"topic": position.topic, "partition": position.partition, "offset": position.offset}
    if isinstance(decoded, DecodeError):
        record = {**where, "error": str(decoded), "raw": base64.b64encode(raw).decode()}
        return json.dumps(record) if compact else json.dumps(record, indent=2)
    if compact:
        return export_line(ReceivedEvent(decoded, position))  # what `berth replay --source FILE` reads
    # render_json is the envelope's canonical readable form; the position is added around it.
    return json.dumps({**where, "event": json.loads(render_json(decoded))}, indent=2)
