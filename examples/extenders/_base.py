"""The plumbing the example extenders share: a threaded HTTP server answering POST /<verb> with
JSON, standard library only. Each example maps its verbs to functions of the decoded request."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[dict[str, Any]], Any]


class ExtenderServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], routes: dict[str, Route], delay: float = 0.0) -> None:
        super().__init__(address, _Handler)
        self.routes = routes
        self.delay = delay
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ExtenderServer:
        """Serve on a background thread (for tests and embedding)."""
        threading.Thread(target=self.serve_forever, name=f"extender-{self.url}", daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ExtenderServer

    def do_POST(self) -> None:
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        route = self.server.routes.get(verb)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.calls.append((verb, body))
        if route is None:
            self.send_error(404, f"unknown verb {verb!r}")
            return
        if self.server.delay:
            time.sleep(self.server.delay)
        payload = json.dumps(route(body)).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the scheduler gave up waiting (httpTimeout)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def node_names(args: dict[str, Any]) -> list[str]:
    """The candidate nodes' names, whether the scheduler sent NodeNames or a NodeList."""
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or []]


def node_labels(args: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {n["metadata"]["name"]: n["metadata"].get("labels") or {}
            for n in (args.get("Nodes") or {}).get("items") or []}


def main(make: Callable[[str, int], ExtenderServer], description: str) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8888)
    opts = parser.parse_args()
    server = make(opts.host, opts.port)
    print(f"serving on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
