"""What a kubelet would answer about a pod's containers (logs, exec, attach, port-forward): Berth
schedules and binds pods, and no kubelet runs their containers. kubectl is told so, naming the pod,
in the API server's BadRequest shape, instead of a 404 for a path it expects to exist.

    GET       /api/v1/namespaces/{ns}/pods/{name}/log
    GET|POST  /api/v1/namespaces/{ns}/pods/{name}/{exec,attach,portforward}
"""

from __future__ import annotations

from aiohttp import web

from shared.errors import NotFound
from shared.ports import ReadModelReader

WANTED = {"log": "has no logs", "exec": "has no container to exec in", "attach": "has no container to attach to",
          "portforward": "has no ports to forward"}
"""Each subresource, and what the pod lacks for it."""


class NoContainers(Exception):
    """Asked of a pod that exists: what a running container would have given."""

    def __init__(self, name: str, lacks: str) -> None:
        self.name = name
        super().__init__(f'pod "{name}" {lacks}: Berth schedules and binds pods, and no kubelet runs their '
                         "containers")


def install(app: web.Application, queries: ReadModelReader) -> None:
    async def refuse(request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await queries.pod(ns, name)
        if row is None or row.deleted:
            raise NotFound("pods", name)
        raise NoContainers(name, WANTED[request.path.rsplit("/", 1)[1]])

    for subresource in WANTED:
        path = f"/api/v1/namespaces/{{ns}}/pods/{{name}}/{subresource}"
        app.router.add_get(path, refuse)
        if subresource != "log":
            app.router.add_post(path, refuse)
