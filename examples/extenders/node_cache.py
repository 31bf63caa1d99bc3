"""A nodeCacheCapable filter extender: it gets node names only and keeps the nodes not named in
`blocked`. Configure it with `filterVerb: filter`, `nodeCacheCapable: true`.

    python examples/extenders/node_cache.py --port 8889
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _base import ExtenderServer, main, node_names

REASON = "node is blocked by the node-cache extender"


def make_server(host: str = "127.0.0.1", port: int = 0, blocked: Collection[str] = ("node-blocked",),
                delay: float = 0.0) -> ExtenderServer:
    def filter_(args: dict[str, Any]) -> dict[str, Any]:
        names = node_names(args)
        return {
            "NodeNames": [n for n in names if n not in blocked],
            "FailedNodes": {n: REASON for n in names if n in blocked},
            "FailedAndUnresolvableNodes": {},
            "Error": "",
        }
    return ExtenderServer((host, port), {"filter": filter_}, delay)


if __name__ == "__main__":
    main(make_server, "nodeCacheCapable scheduler extender")
