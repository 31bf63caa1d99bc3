"""A binding extender: it binds every pod it is asked to (remembering where), except onto the
nodes named in `refuse`, which it refuses with an error. Configure it with
`urlPrefix: http://127.0.0.1:8888`, `bindVerb: bind`.

    python examples/extenders/binder.py --port 8888
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _base import ExtenderServer, Route, main


class BindingServer(ExtenderServer):
    """The extender's server, with where it bound each pod (namespace/name → node)."""

    def __init__(self, address: tuple[str, int], routes: dict[str, Route], delay: float,
                 bound: dict[str, str]) -> None:
        super().__init__(address, routes, delay)
        self.bound = bound


def make_server(host: str = "127.0.0.1", port: int = 0, refuse: Collection[str] = (),
                delay: float = 0.0) -> BindingServer:
    bound: dict[str, str] = {}

    def bind(args: dict[str, Any]) -> dict[str, Any]:
        node = args.get("Node", "")
        pod = f"{args.get('PodNamespace', '')}/{args.get('PodName', '')}"
        if node in refuse:
            return {"Error": f"node {node} does not take pods from this binder"}
        bound[pod] = node
        return {"Error": ""}

    return BindingServer((host, port), {"bind": bind}, delay, bound)


if __name__ == "__main__":
    main(make_server, "binding scheduler extender")
