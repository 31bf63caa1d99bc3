"""A filter-only extender: nodes labelled `extender.example/full: "true"` (or named in `full`)
are full. Configure it with `urlPrefix: http://127.0.0.1:8888`, `filterVerb: filter`.

    python examples/extenders/full_node.py --port 8888
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _base import ExtenderServer, main, node_labels

FULL_LABEL = "extender.example/full"
REASON = "node(s) are full according to the extender"


def make_server(host: str = "127.0.0.1", port: int = 0, full: Collection[str] = (), reason: str = REASON,
                unresolvable: bool = False, delay: float = 0.0, error: str = "") -> ExtenderServer:
    def filter_(args: dict[str, Any]) -> dict[str, Any]:
        nodes = (args.get("Nodes") or {}).get("items") or []
        labels = node_labels(args)
        rejected = {name for name, lab in labels.items() if name in full or lab.get(FULL_LABEL) == "true"}
        kept = [n for n in nodes if n["metadata"]["name"] not in rejected]
        failed = {name: reason for name in sorted(rejected)}
        return {
            "Nodes": {"apiVersion": "v1", "kind": "NodeList", "items": kept},
            "FailedNodes": {} if unresolvable else failed,
            "FailedAndUnresolvableNodes": failed if unresolvable else {},
            "Error": error,  # a non-empty Error fails the call, whatever else the answer says
        }
    return ExtenderServer((host, port), {"filter": filter_}, delay)


if __name__ == "__main__":
    main(make_server, "filter-only scheduler extender rejecting full nodes")
