"""Limits a hostile or careless client cannot get past, beside the body size aiohttp bounds
(BERTH_GATEWAY_MAX_BODY_BYTES):

- objects per request (BERTH_GATEWAY_MAX_OBJECTS): an apply or create body holds at most so many
  objects, refused with 413 before anything is validated or published;
- the time to send a body (BERTH_GATEWAY_BODY_TIMEOUT_S): a client that trickles its body is
  answered 408 and its connection closed, before any handler runs.

Slow headers are aiohttp's: its keep-alive timer, started when a connection opens and after each
answer, closes a connection whose next request's headers are not complete by then (app.KEEPALIVE_S).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Refusal = Callable[[int, str, str], web.StreamResponse]


class LimitExceeded(Exception):
    """A request refused by a limit, answered as a Kubernetes Status with this code and reason."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason = code, reason


def check_objects(count: int, limit: int) -> None:
    """Refuse a body of more than `limit` objects: each is validated, answered and published, so
    their number, not the body's bytes, bounds what one request costs."""
    if count > limit:
        raise LimitExceeded(413, "RequestEntityTooLarge",
                            f"the request body holds {count} objects, more than the {limit} one request may "
                            "hold (BERTH_GATEWAY_MAX_OBJECTS): send them in batches, as `berth apply` does")


def body_timeout(timeout_s: float, refuse: Refusal) -> Middleware:
    """Reads a request's body before its handler runs, within `timeout_s` for the whole of it: a
    slow client otherwise holds a handler, a connection and its buffered bytes for as long as it
    likes. The handlers' own `read()` gets the body from aiohttp's cache."""

    @web.middleware
    async def read_body(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists:
            try:
                await asyncio.wait_for(request.read(), timeout_s)
            except TimeoutError:
                response = refuse(408, "Timeout", f"the request body did not arrive within {timeout_s:g} s "
                                                  "(BERTH_GATEWAY_BODY_TIMEOUT_S)")
                response.force_close()  # the rest of the body may never come: no next request on it
                return response
            except web.HTTPRequestEntityTooLarge as exc:
                return refuse(413, "RequestEntityTooLarge", f"{exc.text} (BERTH_GATEWAY_MAX_BODY_BYTES)")
        return await handler(request)

    return read_body
